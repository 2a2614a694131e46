"""Weight-only quantized GEMM (qgemm/weight_only.h, docs/weight_only.md):
16-bit activations a [M,K] times an int8 or packed-int4 weight dequantized on
the fly with one 16-bit fused multiply-add in a's dtype T,
ŵ = round_T(q·round_T(scales) + round_T(offsets)) (rounded once):

    out = a · ŵᵀ + bias            [M,N] in a's dtype (bf16 / fp16)

w: int8 [N,K], packed int4 uint8 [N,K/2] (qgemm.quantize_weight_int4), or the
prepacked layout of weight_only_prepack. scales / offsets: fp32 or a's dtype
(half the parameter bytes; the same result for the same values)
[N, K/group_size] (group_size None: K, per channel), row-major or group-major
(a [K/group_size, N] array passed transposed, e.g. s.T.copy().T in NumPy or
s.t().contiguous().t() in PyTorch: faster decode kernels); offsets in the
dtype and layout of scales. PyTorch tensors go through torch.ops.qgemm.*
(qgemm/_torch_ops.py).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _arrays, _qgemm, _torch_ops


def _group_size(a: Any, group_size: Optional[int]) -> int:
    return int(a.shape[-1]) if group_size is None else int(group_size)


def weight_only_mm(a: Any, w: Any, scales: Any, offsets: Any = None, group_size: Optional[int] = None,
                   bias: Any = None, *, out: Any = None, workspace: Any = None, stream: Any = None) -> Any:
    """out = a · ŵᵀ + bias; N is read from scales ([N, groups] or [N]).

    workspace: optional uint8 scratch of at least
    weight_only_workspace_bytes(device) bytes on a's device, with which the
    CUDA tensor-core kernel balances its tiles over the SMs (stream-K; the
    same result up to the fp32 summation order). One of
    weight_only_dense_workspace_bytes(device, N, K) bytes also lets calls
    with many tokens on sm_90 dequantize the weight once into it and run a
    dense GEMM (the same values up to the summation order). Reuse one per
    device and stream; it needs no initialization."""
    _arrays.require(a, "a")
    group = _group_size(a, group_size)
    if _torch_ops.use_torch_op(a, stream):
        if out is None:
            return _torch_ops.ops(a).weight_only_mm(a, w, scales, offsets, group, bias, workspace)
        _torch_ops.ops(a).weight_only_mm_out(out, a, w, scales, offsets, group, bias, workspace)
        return out
    if out is None:
        _arrays.require(scales, "scales")
        out = _arrays.empty(a, (int(a.shape[0]), int(scales.shape[0])), _arrays.dtype_name(a))
    _qgemm.weight_only_mm(out=_arrays.to_arg(out), a=_arrays.to_arg(a), w=_arrays.to_arg(w),
                          scales=_arrays.to_arg(scales), offsets=_arrays.to_arg(offsets), group_size=group,
                          bias=_arrays.to_arg(bias), workspace=_arrays.to_arg(workspace),
                          stream=_arrays.stream_for(a, stream))
    return out


def weight_only_workspace_bytes(device: Any = None) -> int:
    """Bytes of weight_only_mm's workspace on `device`: a CUDA device index,
    a torch.device / "cuda:N" / "cpu" (None or "cpu": 0, the CPU needs none)."""
    index = _arrays.cuda_index(device)
    return 0 if index is None else int(_qgemm.weight_only_workspace_bytes(index))


def weight_only_dense_workspace_bytes(device: Any, n: int, k: int) -> int:
    """Bytes of a workspace that also opens weight_only_mm's dense prefill
    path for an [N,K] weight on `device` (as weight_only_workspace_bytes; the
    CPU: 0): the dequantized weight in 16 bits, N·K·2, and at least
    weight_only_workspace_bytes(device)."""
    index = _arrays.cuda_index(device)
    return int(_qgemm.weight_only_dense_workspace_bytes(-1 if index is None else index, int(n), int(k)))


def weight_only_prepacked_shape(n: int, k: int, int4: bool) -> Tuple[int, int, int]:
    """Shape (row blocks, K tiles, 1024) of the prepacked layout of an [N,K] weight."""
    return tuple(_qgemm.weight_only_prepacked_shape(n, k, int4))


def weight_only_prepack(w: Any, *, out: Any = None, stream: Any = None) -> Any:
    """Reorders a plain int8 [N,K] / packed int4 [N,K/2] weight into the
    prepacked layout (same dtype; weight_only_mm gives the same result)."""
    _arrays.require(w, "w")
    if _torch_ops.use_torch_op(w, stream) and out is None:
        return _torch_ops.ops(w).weight_only_prepack(w)
    if out is None:
        int4 = _arrays.dtype_name(w) == "uint8"
        n, k = int(w.shape[0]), int(w.shape[-1]) * (2 if int4 else 1)
        out = _arrays.empty(w, weight_only_prepacked_shape(n, k, int4), _arrays.dtype_name(w))
    _qgemm.weight_only_prepack(out=_arrays.to_arg(out), w=_arrays.to_arg(w), stream=_arrays.stream_for(w, stream))
    return out
