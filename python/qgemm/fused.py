"""Fused transformer ops that emit a quantized activation and its scales
(qgemm/fused.h, docs/fused.md): RMSNorm, residual-add + RMSNorm, LayerNorm
(also from an int8 GEMM's int32 output), SiLU-and-mul, bias + GELU.

Every op returns (q, scale, azp) like qgemm.quantize, with the quantization
keywords dtype ('int8' / 'fp8e4m3'), mode ('static': scale / azp given, one
element each; 'per_token': written, [T,1]), symmetric (dynamic int8: False
writes zero points), narrow_range, and optional scale= / azp= / out=.
PyTorch tensors go through torch.ops.qgemm.* (qgemm/_torch_fused_ops.py).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from . import _arrays, _qgemm, _torch_ops

Result = Tuple[Any, Any, Optional[Any]]


def _fused(op: str, inputs: Dict[str, Any], width: int, dtype: Any, mode: str, symmetric: bool, narrow_range: bool,
           scale: Any, azp: Any, out: Any, stream: Any) -> Result:
    anchor = next(iter(inputs.values()))
    if _torch_ops.use_torch_op(anchor, stream):
        ops = _torch_ops.ops(anchor)
        if out is None and (mode == "static" or (scale is None and azp is None)):
            q, new_scale, new_azp = getattr(ops, op)(*inputs.values(), _torch_ops.torch_dtype(dtype), mode,
                                                      symmetric, narrow_range, scale, azp)
            if mode == "static":
                return q, scale, azp
            return q, new_scale, (None if symmetric else new_azp)
        out, scale, azp = _outputs(anchor, width, dtype, mode, symmetric, out, scale, azp)
        getattr(ops, op + "_out")(out, scale, azp, *inputs.values(), mode, narrow_range)
        return out, scale, azp
    _arrays.require(anchor, next(iter(inputs)))
    out, scale, azp = _outputs(anchor, width, dtype, mode, symmetric, out, scale, azp)
    args = {name: (_arrays.to_arg(v) if not isinstance(v, (int, float, str)) else v) for name, v in inputs.items()}
    getattr(_qgemm, op)(out=_arrays.to_arg(out), scale=_arrays.to_arg(scale), azp=_arrays.to_arg(azp), **args,
                        mode=mode, narrow_range=narrow_range, stream=_arrays.stream_for(anchor, stream))
    return out, scale, azp


def _outputs(anchor: Any, width: int, dtype: Any, mode: str, symmetric: bool, out: Any, scale: Any,
             azp: Any) -> Tuple[Any, Any, Any]:
    tokens = int(anchor.shape[0])
    if out is None:
        out = _arrays.empty(anchor, (tokens, width), _arrays.canonical_dtype(dtype))
    if mode != "static":
        if scale is None:
            scale = _arrays.empty(anchor, (tokens, 1), "fp32")
        if azp is None and not symmetric:
            azp = _arrays.empty(anchor, (tokens, 1), "int32")
    return out, scale, azp


def _width(x: Any, divisor: int = 1) -> int:
    _arrays.require(x, "x")
    return int(x.shape[-1]) // divisor


def rms_norm_quant(x: Any, weight: Any, eps: float = 1e-6, *, dtype: Any = "int8", mode: str = "per_token",
                   symmetric: bool = True, narrow_range: bool = False, scale: Any = None, azp: Any = None,
                   out: Any = None, stream: Any = None) -> Result:
    """y = x / sqrt(mean(x²) + eps) · weight, quantized."""
    return _fused("rms_norm_quant", {"x": x, "weight": weight, "eps": float(eps)}, _width(x), dtype, mode,
                  symmetric, narrow_range, scale, azp, out, stream)


def add_rms_norm_quant(x: Any, residual: Any, weight: Any, eps: float = 1e-6, *, dtype: Any = "int8",
                       mode: str = "per_token", symmetric: bool = True, narrow_range: bool = False,
                       scale: Any = None, azp: Any = None, out: Any = None, stream: Any = None) -> Result:
    """residual ← residual + x (in place, in x's dtype), then
    y = RMSNorm(residual) · weight, quantized."""
    return _fused("add_rms_norm_quant", {"x": x, "residual": residual, "weight": weight, "eps": float(eps)},
                  _width(x), dtype, mode, symmetric, narrow_range, scale, azp, out, stream)


def layer_norm_quant(x: Any, gamma: Any, beta: Any, eps: float = 1e-5, residual: Any = None, bias: Any = None, *,
                     dtype: Any = "int8", mode: str = "per_token", symmetric: bool = True,
                     narrow_range: bool = False, scale: Any = None, azp: Any = None, out: Any = None,
                     stream: Any = None) -> Result:
    """v = x + bias + residual, y = LayerNorm(v) · gamma + beta, quantized."""
    return _fused("layer_norm_quant", {"x": x, "gamma": gamma, "beta": beta, "eps": float(eps),
                                       "residual": residual, "bias": bias},
                  _width(x), dtype, mode, symmetric, narrow_range, scale, azp, out, stream)


def layer_norm_quant_int32(acc: Any, scale_a: Any, scale_w: Any, residual: Any, residual_scale: Any, gamma: Any,
                           beta: Any, eps: float = 1e-5, bias: Any = None, *, dtype: Any = "int8",
                           mode: str = "per_token", symmetric: bool = True, narrow_range: bool = False,
                           scale: Any = None, azp: Any = None, out: Any = None, stream: Any = None) -> Result:
    """v = fma(scale_a, scale_w·acc, bias) + residual_scale·residual (int8),
    y = LayerNorm(v) · gamma + beta, quantized (FasterTransformer's INT8 encoder)."""
    return _fused("layer_norm_quant_int32", {"acc": acc, "scale_a": scale_a, "scale_w": scale_w,
                                             "residual": residual, "residual_scale": residual_scale,
                                             "gamma": gamma, "beta": beta, "eps": float(eps), "bias": bias},
                  _width(acc), dtype, mode, symmetric, narrow_range, scale, azp, out, stream)


def silu_and_mul_quant(x: Any, *, dtype: Any = "int8", mode: str = "per_token", symmetric: bool = True,
                       narrow_range: bool = False, scale: Any = None, azp: Any = None, out: Any = None,
                       stream: Any = None) -> Result:
    """x [T, 2N] = gate | up: y = silu(gate) · up [T, N], quantized."""
    return _fused("silu_and_mul_quant", {"x": x}, _width(x, 2), dtype, mode, symmetric, narrow_range, scale, azp,
                  out, stream)


def bias_gelu_quant(x: Any, bias: Any = None, approximation: str = "erf", *, dtype: Any = "int8",
                    mode: str = "per_token", symmetric: bool = True, narrow_range: bool = False, scale: Any = None,
                    azp: Any = None, out: Any = None, stream: Any = None) -> Result:
    """y = GELU(x + bias), approximation 'erf' (torch's 'none') or 'tanh', quantized."""
    return _fused("bias_gelu_quant", {"x": x, "bias": bias, "approximation": approximation}, _width(x), dtype,
                  mode, symmetric, narrow_range, scale, azp, out, stream)


def bias_gelu_quant_int32(acc: Any, scale_a: Any, scale_w: Any, bias: Any = None, approximation: str = "erf", *,
                          dtype: Any = "int8", mode: str = "per_token", symmetric: bool = True,
                          narrow_range: bool = False, scale: Any = None, azp: Any = None, out: Any = None,
                          stream: Any = None) -> Result:
    """y = GELU(fma(scale_a, scale_w·acc, bias)) from an int8 GEMM's int32 output, quantized."""
    return _fused("bias_gelu_quant_int32", {"acc": acc, "scale_a": scale_a, "scale_w": scale_w, "bias": bias,
                                            "approximation": approximation},
                  _width(acc), dtype, mode, symmetric, narrow_range, scale, azp, out, stream)
