"""GPTQ and AWQ int4 checkpoints in weight_only_mm's layout (offline, at load
time): qgemm.from_gptq / qgemm.from_awq over the C++ int4_from_gptq /
int4_from_awq (qgemm/quant.h, docs/weight_only.md "GPTQ and AWQ
checkpoints"), which run on the CPU; NumPy arrays, or PyTorch tensors on any
device (CUDA ones go through the host and come back).

Both formats store 4-bit codes q (0…15) eight to an int32 word, a 4-bit zero
point z per group and output channel, and scales s [K/group, N]; the weight
of input k and output n is

    w[n, k] = (q[n, k] − z[g, n]) · s[g, n],   g = k / group_size

and weight_only_mm computes ŵ = round_T(q·s_T + o_T), so the conversion keeps
q and s and sets the offset o = −z·s: exact in fp32, and in 16 bits exact
where z·s is representable (every symmetric checkpoint: z = 8), else rounded
once more (at most half an ulp of z·s: ≤ 2^-11 of the group's code range
15·s). The weight comes back prepacked and the scales and offsets
group-major (the [K/group, N] arrays viewed transposed): the layouts the
decode kernels read fastest.

    qweight, qzeros, scales = ...  # one layer of the checkpoint, e.g. from safetensors
    weight = qgemm.from_awq(qweight, qzeros, scales)
    out = qgemm.weight_only_mm(a, *weight)   # a: fp16 [M, K] (param_dtype= for bf16)
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

from . import _arrays, _qgemm
from .weight_only import weight_only_prepack


class Int4Weight(NamedTuple):
    """weight_only_mm's int4 arguments: qgemm.weight_only_mm(a, *weight)."""

    w: Any  # uint8: prepacked (weight_only_prepack), or plain [N, K/2] (element 2j in the low nibble of byte j)
    scales: Any  # [N, K/group_size], group-major view
    offsets: Any  # the same dtype and layout
    group_size: int


def _check_framework(x: Any, name: str) -> str:
    fw = _arrays.framework(x)
    if fw not in ("numpy", "torch"):
        raise TypeError(f"{name}: expected a NumPy array or a PyTorch tensor, got {type(x)}")
    return fw


def _on_host(x: Any, name: str) -> Any:
    return x.cpu() if _check_framework(x, name) == "torch" and x.device.type != "cpu" else x


def _matrix_shape(x: Any, name: str) -> Tuple[int, int]:
    _check_framework(x, name)
    if len(x.shape) != 2:
        raise ValueError(f"{name}: expected a 2-D array, got shape {tuple(x.shape)}")
    return int(x.shape[0]), int(x.shape[1])


def _cast(x: Any, dtype: str) -> Any:
    if _arrays.dtype_name(x) == dtype:
        return x
    if _arrays.framework(x) == "torch":
        import torch

        return x.to({"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype])
    if dtype == "bf16":
        raise TypeError("param_dtype: NumPy has no bfloat16; pass 'fp32' or 'fp16'")
    return x.astype({"fp32": "float32", "fp16": "float16"}[dtype])


def _convert(run: Any, qweight: Any, qzeros: Any, scales: Any, extra: dict, n: int, k: int,
             param_dtype: Optional[str], prepack: bool) -> Int4Weight:
    """Runs the C++ conversion on host copies and returns its outputs on
    qweight's framework and device, the weight prepacked there if asked."""
    if param_dtype not in (None, "fp32", "fp16", "bf16"):
        raise TypeError(f"param_dtype: expected None, 'fp32', 'fp16' or 'bf16', got {param_dtype!r}")
    host = {name: _on_host(x, name) for name, x in (("qweight", qweight), ("qzeros", qzeros), ("scales", scales))}
    groups = _matrix_shape(scales, "scales")[0]
    dtype = param_dtype or _arrays.dtype_name(host["scales"])
    scales_host = _cast(host["scales"], dtype)
    w = _arrays.empty(host["qweight"], (n, k // 2), "uint8")
    offsets = _arrays.empty(host["qweight"], (groups, n), dtype)  # [G, N]: passed as its group-major view
    run(out_w=_arrays.to_arg(w), out_offsets=_arrays.to_arg(offsets.T), qweight=_arrays.to_arg(host["qweight"]),
        qzeros=_arrays.to_arg(host["qzeros"]), scales=_arrays.to_arg(scales_host), **extra)
    if _arrays.framework(qweight) == "torch" and qweight.device.type != "cpu":
        w, offsets, scales_host = (x.to(qweight.device) for x in (w, offsets, scales_host))
    if prepack:
        w = weight_only_prepack(w)
    return Int4Weight(w, scales_host.T, offsets.T, k // groups)  # groups ≥ 1: the C++ call checked


def from_gptq(qweight: Any, qzeros: Any, scales: Any, g_idx: Any = None, *, zero_offset: int = 1,
              param_dtype: Optional[str] = None, prepack: bool = True) -> Int4Weight:
    """A GPTQ int4 layer (AutoGPTQ, GPTQModel): qweight int32 [K/8, N]
    (packed along K), qzeros int32 [K/group, N/8], scales [K/group, N], and
    optionally g_idx [K] → Int4Weight for weight_only_mm. zero_offset: added
    to the stored zero points (1 for "gptq" v1 checkpoints, which store
    z − 1; 0 for "gptq_v2"). param_dtype: the dtype of the returned scales
    and offsets ('fp32', 'fp16', 'bf16'; default: that of scales), which
    must be fp32 or the activations' dtype. prepack: the weight in
    weight_only_prepack's layout (the default: what the decode kernels read
    fastest, e.g. 38 against 48 µs at M = 1 on a 28672×8192 layer on an
    H200) or, False, the plain packed [N, K/2]. Act-order checkpoints (g_idx
    other than k // group_size) are refused with a ValueError."""
    rows, n = _matrix_shape(qweight, "qweight")
    extra = {"g_idx": None if g_idx is None else _arrays.to_arg(_on_host(g_idx, "g_idx")),
             "zero_offset": int(zero_offset)}
    return _convert(_qgemm.int4_from_gptq, qweight, qzeros, scales, extra, n, rows * 8, param_dtype, prepack)


def from_awq(qweight: Any, qzeros: Any, scales: Any, *, param_dtype: Optional[str] = None,
             prepack: bool = True) -> Int4Weight:
    """An AWQ int4 layer (AutoAWQ's "gemm" packing): qweight int32 [K, N/8],
    qzeros int32 [K/group, N/8], scales [K/group, N] → Int4Weight for
    weight_only_mm; param_dtype and prepack as in from_gptq."""
    k, columns = _matrix_shape(qweight, "qweight")
    return _convert(_qgemm.int4_from_awq, qweight, qzeros, scales, {}, columns * 8, k, param_dtype, prepack)
