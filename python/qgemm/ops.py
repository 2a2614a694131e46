"""The qgemm ops for any DLPack framework. Keyword names follow the C++ API
(include/qgemm/*.h); every op takes an optional ``out=`` (and, for CUDA
arrays, ``stream=``; default: the framework's current stream). Without
``out=`` the result is allocated with the framework and device of the inputs.
PyTorch tensors without ``out=`` go through the ``torch.ops.qgemm`` custom
operators, so the calls also work under ``torch.compile`` and in CUDA graphs."""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _arrays as arrays
from . import _qgemm as _C

_MODES = ("static", "per_token", "per_group")


def _use_torch_op(*tensors: Any, out: Any = None) -> bool:
    if out is not None or arrays.framework(tensors[0]) != "torch":
        return False
    from . import torch_ops

    return torch_ops.registered()


def scaled_mm(a, b, scale_a, scale_b, bias=None, *, out_dtype=None, out=None, stream=None):
    """out = scale_a · scale_b · (a·b) + bias.

    a: [M,K] int8/fp8 row-major; b: [K,N] column-major (a [N,K] weight's
    transpose); scale_a: 1 or M fp32; scale_b: 1 or N fp32; bias: [N] in the
    output dtype (default bf16, or bias's dtype)."""
    arrays.require(a, "a")
    arrays.require(b, "b")
    dtype = arrays.canonical_dtype(out_dtype) if out_dtype is not None else (
        arrays.dtype_name(bias) if bias is not None else "bf16")
    if _use_torch_op(a, out=out):
        import torch

        return torch.ops.qgemm.scaled_mm(a, b, scale_a, scale_b, bias, getattr(torch, arrays._TORCH[dtype]))
    if out is None:
        out = arrays.empty(a, (a.shape[0], b.shape[1]), dtype)
    _C.scaled_mm(arrays.to_arg(out), arrays.to_arg(a), arrays.to_arg(b), scale_a, scale_b, bias,
                 arrays.stream_for(a, stream))
    return out


def scaled_mm_azp(a, b, scale_a, scale_b, azp_adj, azp=None, bias=None, *, out_dtype=None, out=None, stream=None):
    """out = scale_a · scale_b · (a·b − azp·azp_adj) + bias (int8 a, b).

    Without azp, azp_adj holds z·(1·B̂) for a per-tensor zero point z; with
    azp [M] (per token), azp_adj holds the column sums 1·B̂ (see azp_adj())."""
    arrays.require(a, "a")
    arrays.require(b, "b")
    dtype = arrays.canonical_dtype(out_dtype) if out_dtype is not None else (
        arrays.dtype_name(bias) if bias is not None else "bf16")
    if _use_torch_op(a, out=out):
        import torch

        return torch.ops.qgemm.scaled_mm_azp(a, b, scale_a, scale_b, azp_adj, azp, bias,
                                             getattr(torch, arrays._TORCH[dtype]))
    if out is None:
        out = arrays.empty(a, (a.shape[0], b.shape[1]), dtype)
    _C.scaled_mm_azp(arrays.to_arg(out), a, b, scale_a, scale_b, azp_adj, azp, bias, arrays.stream_for(a, stream))
    return out


def azp_adj(b, azp: Optional[int] = None, *, out=None, stream=None):
    """out[n] = azp · Σ_k b[k, n] (int32 [N]); azp defaults to 1 (column sums)."""
    arrays.require(b, "b")
    if out is None:
        out = arrays.empty(b, (b.shape[1],), "int32")
    _C.azp_adj(out, b, azp, arrays.stream_for(b, stream))
    return out


def _scale_shape(x, mode: str, group_size: int) -> Tuple[int, ...]:
    if mode not in _MODES:
        raise ValueError(f"mode: expected one of {_MODES}, got {mode!r}")
    tokens, hidden = x.shape
    if mode == "per_group":
        if group_size <= 0 or hidden % group_size:
            raise ValueError(f"group_size: expected a positive divisor of H={hidden}, got {group_size}")
        return (tokens, hidden // group_size)
    return (tokens,) if mode == "per_token" else (1,)


def quantize(x, *, mode: str = "per_token", dtype="int8", symmetric: bool = True, narrow_range: bool = False,
             group_size: int = 128, scale=None, azp=None, out=None, stream=None):
    """Quantize x [T,H] (fp32/fp16/bf16) to int8 or fp8 e4m3 (docs/quantization.md).

    mode 'static': `scale` (and, asymmetric, `azp`) are given, one element each.
    mode 'per_token' / 'per_group': scales (and zero points when
    symmetric=False) are computed and returned; pass `scale=` / `azp=` to
    write them into existing arrays. Returns (q, scale, azp); azp is None
    when symmetric."""
    arrays.require(x, "in")
    dtype = arrays.canonical_dtype(dtype)
    scale_shape = _scale_shape(x, mode, group_size)
    dynamic = mode != "static"
    if dynamic and out is None and scale is None and azp is None and arrays.framework(x) == "torch":
        from . import torch_ops

        if torch_ops.registered():
            import torch

            q, s, z = torch.ops.qgemm.quantize(x, mode, getattr(torch, arrays._TORCH[dtype]), symmetric,
                                               narrow_range, group_size)
            return q, s, (z if not symmetric else None)
    if out is None:
        out = arrays.empty(x, tuple(x.shape), dtype)
    if dynamic:
        if scale is None:
            scale = arrays.empty(x, scale_shape, "fp32")
        if not symmetric and azp is None:
            azp = arrays.empty(x, scale_shape, "int32")
    elif scale is None:
        raise ValueError("scale: required for mode='static'")
    _C.quantize(arrays.to_arg(out), scale, azp, x, mode, symmetric, narrow_range, group_size,
                arrays.stream_for(x, stream))
    return out, scale, azp


def dequantize(q, scale, azp=None, *, mode: str = "per_token", group_size: int = 128, out_dtype="fp32",
               out=None, stream=None):
    """x̂ = scale · (q − azp) into fp32 / fp16 / bf16."""
    arrays.require(q, "in")
    _scale_shape(q, mode, group_size)
    if out is None:
        out = arrays.empty(q, tuple(q.shape), arrays.canonical_dtype(out_dtype))
    _C.dequantize(out, arrays.to_arg(q), scale, azp, mode, group_size, arrays.stream_for(q, stream))
    return out


def quantize_weight_int4(w, group_size: int):
    """Asymmetric 4-bit weights (CPU, offline): returns (packed [N,K/2] uint8,
    scale [N,K/g] fp32, offset [N,K/g] fp32) with w ≈ q·scale + offset."""
    import numpy as np

    n, k = w.shape
    groups = k // group_size if group_size > 0 else 0
    packed = np.empty((n, k // 2), np.uint8)
    scale = np.empty((n, groups), np.float32)
    offset = np.empty((n, groups), np.float32)
    _C.quantize_weight_int4(packed, scale, offset, w, group_size)
    return packed, scale, offset


def pack_int4(values):
    """uint8 [N,K] of 0…15 → [N,K/2]: element 2j in the low nibble of byte j."""
    import numpy as np

    out = np.empty((values.shape[0], values.shape[1] // 2), np.uint8)
    _C.pack_int4(out, values)
    return out


def unpack_int4(packed):
    import numpy as np

    out = np.empty((packed.shape[0], packed.shape[1] * 2), np.uint8)
    _C.unpack_int4(out, packed)
    return out
