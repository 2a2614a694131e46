"""Scaled GEMMs (qgemm/gemm.h, docs/gemm.md):

    out = scale_a · scale_b · (a·b − azp·azp_adj) + bias

a [M,K] row-major int8 or fp8 e4m3; b [K,N] column-major (a [N,K] weight
viewed transposed: ``w.t()`` / ``w.T``); scale_a fp32 with 1 or M elements,
scale_b fp32 with 1 or N; bias [N] of the output dtype; out [M,N] bf16 or
fp16 (fp32 as well on the CPU).

PyTorch tensors go through the ``torch.ops.qgemm.*`` custom operators
(qgemm/_torch_ops.py), so the calls compose with torch.compile and CUDA
graphs; other arrays call the extension directly.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _arrays, _qgemm, _torch_ops


def _default_out_dtype(out_dtype: Any, bias: Any) -> str:
    if out_dtype is not None:
        return _arrays.canonical_dtype(out_dtype)
    return _arrays.dtype_name(bias) if bias is not None else "bf16"


def scaled_mm(a: Any, b: Any, scale_a: Any, scale_b: Any, bias: Any = None, *, out_dtype: Any = None,
              out: Any = None, workspace: Any = None, stream: Any = None, fast_accum: bool = False) -> Any:
    """out = scale_a · scale_b · (a·b) + bias.

    out_dtype (without out=): 'bf16' / 'fp16' / 'fp32' or the framework's
    dtype; default: bias's dtype, else bf16.
    fast_accum: for fp8 inputs, allow the GPU's fast fp8 accumulation
    (Fp8Accumulation::kFast, like torch._scaled_mm(use_fast_accum=True)): on
    sm_90a the kernels for M > 16 keep accumulating inside the tensor cores,
    near int8 speed (on the H100 1.05-1.1x faster than the default at
    M > 256), with an error that grows with K (docs/gemm.md). The CPU
    backend and int8 inputs give the precise result either way, and so do
    the shapes where the precise kernel is the faster one (most M <= 16,
    M = 65-96 with N >= 6144 and M = 193-256 with N < 6144 on sm_90a).
    workspace: optional uint8 scratch of at least
    scaled_mm_workspace_bytes(device) bytes on a's device, with which the
    Hopper kernels may balance the tiles over the SMs by stream-K (the same
    int8 result; fp8 up to the fp32 summation order). Concurrent calls need
    their own. Returns out."""
    fast_accum = bool(fast_accum)
    if _torch_ops.use_torch_op(a, stream):
        dtype = _torch_ops.torch_dtype(_default_out_dtype(out_dtype, bias))
        if out is None and workspace is None:
            return _torch_ops.ops(a).scaled_mm(a, b, scale_a, scale_b, bias, dtype, fast_accum)
        if out is None:
            out = _torch_ops.torch.empty((a.shape[0], b.shape[1]), dtype=dtype, device=a.device)
        _torch_ops.ops(a).scaled_mm_out(out, a, b, scale_a, scale_b, bias, workspace, fast_accum)
        return out
    if out is None:
        _arrays.require(a, "a")
        _arrays.require(b, "b")
        out = _arrays.empty(a, (a.shape[0], b.shape[1]), _default_out_dtype(out_dtype, bias))
    _qgemm.scaled_mm(out=_arrays.to_arg(out), a=_arrays.to_arg(a), b=_arrays.to_arg(b),
                     scale_a=_arrays.to_arg(scale_a), scale_b=_arrays.to_arg(scale_b), bias=_arrays.to_arg(bias),
                     workspace=_arrays.to_arg(workspace), stream=_arrays.stream_for(a, stream), fast_accum=fast_accum)
    return out


def scaled_mm_azp(a: Any, b: Any, scale_a: Any, scale_b: Any, azp_adj: Any, azp: Any = None, bias: Any = None, *,
                  out_dtype: Any = None, out: Any = None, workspace: Any = None, stream: Any = None) -> Any:
    """Asymmetric int8 activations: out = scale_a · scale_b · (a·b − azp_adj) + bias
    with a per-tensor zero point folded into azp_adj [N] int32 (azp None), or
    out = scale_a · scale_b · (a·b − azp ⊗ azp_adj) + bias with per-token
    zero points azp [M] int32 and azp_adj = column sums of b. workspace: as
    for scaled_mm. Returns out."""
    if _torch_ops.use_torch_op(a, stream):
        dtype = _torch_ops.torch_dtype(_default_out_dtype(out_dtype, bias))
        if out is None and workspace is None:
            return _torch_ops.ops(a).scaled_mm_azp(a, b, scale_a, scale_b, azp_adj, azp, bias, dtype)
        if out is None:
            out = _torch_ops.torch.empty((a.shape[0], b.shape[1]), dtype=dtype, device=a.device)
        _torch_ops.ops(a).scaled_mm_azp_out(out, a, b, scale_a, scale_b, azp_adj, azp, bias, workspace)
        return out
    if out is None:
        _arrays.require(a, "a")
        _arrays.require(b, "b")
        out = _arrays.empty(a, (a.shape[0], b.shape[1]), _default_out_dtype(out_dtype, bias))
    _qgemm.scaled_mm_azp(out=_arrays.to_arg(out), a=_arrays.to_arg(a), b=_arrays.to_arg(b),
                         scale_a=_arrays.to_arg(scale_a), scale_b=_arrays.to_arg(scale_b),
                         azp_adj=_arrays.to_arg(azp_adj), azp=_arrays.to_arg(azp), bias=_arrays.to_arg(bias),
                         workspace=_arrays.to_arg(workspace), stream=_arrays.stream_for(a, stream))
    return out


def azp_adj(b: Any, azp: Optional[int] = None, *, out: Any = None, stream: Any = None) -> Any:
    """out[n] = azp · Σ_k b[k, n] (int32 [N]; azp defaults to 1: column sums)."""
    if _torch_ops.use_torch_op(b, stream):
        if out is None:
            return _torch_ops.ops(b).azp_adj(b, azp)
        _torch_ops.ops(b).azp_adj_out(out, b, azp)
        return out
    if out is None:
        _arrays.require(b, "b")
        out = _arrays.empty(b, (b.shape[1],), "int32")
    _qgemm.azp_adj(out=_arrays.to_arg(out), b=_arrays.to_arg(b), azp=azp, stream=_arrays.stream_for(b, stream))
    return out


def scaled_mm_workspace_bytes(device: Any = None) -> int:
    """Bytes of scaled_mm's / scaled_mm_azp's workspace on `device`: a CUDA
    device index, a torch.device / "cuda:N" / "cpu" (None or "cpu": 0; also 0
    on GPUs before Hopper, whose kernels take none)."""
    index = _arrays.cuda_index(device)
    return 0 if index is None else int(_qgemm.scaled_mm_workspace_bytes(index))
