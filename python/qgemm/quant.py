"""Quantization and dequantization (qgemm/quant.h, docs/quantization.md):
x ≈ scale · (q − azp).

    quantize(input, dtype=..., mode=...)  → (q, scale, azp)
    dequantize(input, scale, azp, mode=...) → x̂

mode: 'static' (scale, azp given, one element each), 'per_token' (dynamic,
one scale per row, written), 'per_group' (dynamic, one per row × group of
group_size along H). The C++ argument `in` is called `input` here.
PyTorch tensors go through torch.ops.qgemm.* (qgemm/_torch_quant_ops.py).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _arrays, _qgemm, _torch_ops


def _dynamic_shapes(input: Any, mode: str, group_size: int) -> Tuple[int, int]:
    tokens, hidden = int(input.shape[0]), int(input.shape[-1])
    if mode == "per_group":
        return tokens, (hidden // group_size if group_size > 0 else 0)
    return tokens, 1


def quantize(input: Any, *, dtype: Any = "int8", mode: str = "per_token", symmetric: bool = True,
             narrow_range: bool = False, group_size: int = 128, scale: Any = None, azp: Any = None,
             out: Any = None, stream: Any = None) -> Tuple[Any, Any, Optional[Any]]:
    """q = quantize(input) into int8 or fp8 ('fp8e4m3' / torch.float8_e4m3fn).

    static mode: scale (and azp, for asymmetric int8) are inputs.
    dynamic modes: scale (and azp when symmetric=False) are outputs,
    allocated when not given: per_token [T,1], per_group [T, H/group_size]
    fp32 (azp int32). Returns (q, scale, azp) with azp None when symmetric."""
    static = mode == "static"
    if _torch_ops.use_torch_op(input, stream):
        ops = _torch_ops.ops(input)
        if out is None and (static or (scale is None and azp is None)):
            q, new_scale, new_azp = ops.quantize(input, _torch_ops.torch_dtype(dtype), mode, symmetric,
                                                 narrow_range, group_size, scale, azp)
            if static:
                return q, scale, azp
            return q, new_scale, (None if symmetric else new_azp)
        out, scale, azp = _outputs(input, dtype, mode, symmetric, group_size, out, scale, azp)
        ops.quantize_out(out, scale, azp, input, mode, symmetric, narrow_range, group_size)
        return out, scale, azp
    out, scale, azp = _outputs(input, dtype, mode, symmetric, group_size, out, scale, azp)
    _qgemm.quantize(out=_arrays.to_arg(out), scale=_arrays.to_arg(scale), azp=_arrays.to_arg(azp),
                    input=_arrays.to_arg(input), mode=mode, symmetric=symmetric, narrow_range=narrow_range,
                    group_size=group_size, stream=_arrays.stream_for(input, stream))
    return out, scale, azp


def _outputs(input: Any, dtype: Any, mode: str, symmetric: bool, group_size: int, out: Any, scale: Any,
             azp: Any) -> Tuple[Any, Any, Any]:
    if out is None:
        _arrays.require(input, "in")
        out = _arrays.empty(input, tuple(input.shape), _arrays.canonical_dtype(dtype))
    if mode != "static":
        shape = _dynamic_shapes(input, mode, group_size)
        if scale is None:
            scale = _arrays.empty(input, shape, "fp32")
        if azp is None and not symmetric:
            azp = _arrays.empty(input, shape, "int32")
    return out, scale, azp


def dequantize(input: Any, scale: Any, azp: Any = None, *, mode: str = "per_token", group_size: int = 128,
               out_dtype: Any = "fp32", out: Any = None, stream: Any = None) -> Any:
    """x̂ = scale · (input − azp) into fp32 / fp16 / bf16; mode and
    group_size say the granularity of scale and azp as in quantize."""
    if _torch_ops.use_torch_op(input, stream):
        ops = _torch_ops.ops(input)
        if out is None:
            return ops.dequantize(input, scale, azp, mode, group_size, _torch_ops.torch_dtype(out_dtype))
        ops.dequantize_out(out, input, scale, azp, mode, group_size)
        return out
    if out is None:
        _arrays.require(input, "in")
        out = _arrays.empty(input, tuple(input.shape), _arrays.canonical_dtype(out_dtype))
    _qgemm.dequantize(out=_arrays.to_arg(out), input=_arrays.to_arg(input), scale=_arrays.to_arg(scale),
                      azp=_arrays.to_arg(azp), mode=mode, group_size=group_size,
                      stream=_arrays.stream_for(input, stream))
    return out


def quantize_weight_int4(w: Any, group_size: int, *, group_major: bool = False) -> Tuple[Any, Any, Any]:
    """4-bit asymmetric weight quantization of w [N,K] (CPU, offline):
    returns (packed [N,K/2] uint8, scale [N,K/group_size] fp32, offset) with
    w ≈ q·scale + offset. group_major=True returns scale and offset as
    [N,K/group_size] views of [K/group_size,N] arrays (strides (1, N)), the
    layout weight_only_mm reads fastest (docs/weight_only.md)."""
    rows, cols = int(w.shape[0]), int(w.shape[-1])
    groups = cols // group_size if group_size > 0 else 0
    transposed = group_major and rows > 1 and groups > 1  # one row or group: both layouts are the same
    if _torch_ops.use_torch_op(w, None):
        packed, scale, offset = _torch_ops.ops(w).quantize_weight_int4(w, group_size)
        if transposed:
            scale, offset = scale.t().contiguous().t(), offset.t().contiguous().t()
        return packed, scale, offset
    packed = _arrays.empty(w, (rows, cols // 2), "uint8")
    if transposed:
        scale = _arrays.empty(w, (groups, rows), "fp32").T
        offset = _arrays.empty(w, (groups, rows), "fp32").T
    else:
        scale = _arrays.empty(w, (rows, groups), "fp32")
        offset = _arrays.empty(w, (rows, groups), "fp32")
    _qgemm.quantize_weight_int4(out_packed=_arrays.to_arg(packed), scale=_arrays.to_arg(scale),
                                offset=_arrays.to_arg(offset), w=_arrays.to_arg(w), group_size=group_size)
    return packed, scale, offset


def pack_int4(values: Any, *, out: Any = None) -> Any:
    """Packs uint8 [N,K] values 0…15 two per byte (element 2j in the low
    nibble of byte j) into [N,K/2] (CPU)."""
    if out is None and _torch_ops.use_torch_op(values, None):
        return _torch_ops.ops(values).pack_int4(values)
    if out is None:
        out = _arrays.empty(values, (int(values.shape[0]), int(values.shape[-1]) // 2), "uint8")
    _qgemm.pack_int4(out_packed=_arrays.to_arg(out), values=_arrays.to_arg(values))
    return out


def unpack_int4(packed: Any, *, out: Any = None) -> Any:
    """The inverse of pack_int4: [N,K/2] bytes → [N,K] values 0…15 (CPU)."""
    if out is None and _torch_ops.use_torch_op(packed, None):
        return _torch_ops.ops(packed).unpack_int4(packed)
    if out is None:
        out = _arrays.empty(packed, (int(packed.shape[0]), int(packed.shape[-1]) * 2), "uint8")
    _qgemm.unpack_int4(out_values=_arrays.to_arg(out), packed=_arrays.to_arg(packed))
    return out
