"""Straightforward NumPy formulas of the qgemm ops (include/qgemm/*.h), used
as the reference by the NumPy and PyTorch tests. fp32 steps are spelled as
single float32 operations in the order the headers give, so results match
bit for bit where the C++ is exact."""

import numpy as np

F32 = np.float32


def fp8_decode(codes):
    """fp8 e4m3fn codes (uint8) → float64 by the format's definition (0x7f / 0xff: NaN)."""
    c = np.asarray(codes).astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exponent, mantissa = (c >> 3) & 0xF, c & 0x7
    value = np.where(exponent == 0, mantissa * 2.0**-9, (1 + mantissa / 8.0) * 2.0 ** (exponent - 7))
    return np.where((c & 0x7F) == 0x7F, np.nan, sign * value)


_FP8_VALUES = fp8_decode(np.arange(0x7F))  # the 127 non-negative finite codes, increasing


def fp8_encode(x):
    """float32 → fp8 e4m3fn codes: round to nearest, ties to even; saturate to
    ±448; NaN → 0x7f with the sign (a search over the code table)."""
    x = np.asarray(x, np.float64)
    m = np.minimum(np.abs(x), 448.0)
    hi = np.clip(np.searchsorted(_FP8_VALUES, m), 1, 0x7E)
    lo = hi - 1
    d_lo, d_hi = m - _FP8_VALUES[lo], _FP8_VALUES[hi] - m
    code = np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, np.where(lo % 2 == 0, lo, hi)))
    code = np.where(np.isnan(x), 0x7F, code)
    return (code | (np.signbit(x).astype(np.int64) << 7)).astype(np.uint8)


def random_fp8_codes(rng, shape, max_code=0x5F):
    """Random finite fp8 codes (magnitudes up to `max_code`), random signs."""
    codes = rng.integers(0, max_code + 1, shape).astype(np.uint8)
    return codes | (rng.integers(0, 2, shape).astype(np.uint8) << 7)


def fma32(a, b, c):
    """fp32 fma, through float64 (a·b is exact there; the sum may round twice:
    callers allow one fp32 ulp)."""
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(F32)


def scaled_mm(a, b, scale_a, scale_b, bias=None, azp_term=None):
    """D = scale_a · (scale_b · float(acc − azp_term)) [+ bias by fma], fp32.
    a [M,K], b [K,N] as int8 (exact int accumulation) or as fp8 values (float64)."""
    if a.dtype == np.int8:
        acc = a.astype(np.int64) @ b.astype(np.int64)
        if azp_term is not None:
            acc = acc - azp_term
        acc = acc.astype(F32)
    else:
        acc = (a @ b).astype(F32)
    sa = np.asarray(scale_a, F32).reshape(-1, 1)
    sb = np.asarray(scale_b, F32).reshape(1, -1)
    t = sb * acc
    if bias is None:
        return sa * t
    return fma32(sa, t, np.asarray(bias, F32).reshape(1, -1))


def usable_scale(s):
    s = np.asarray(s, F32)
    return np.where(s == 0, F32(1), np.maximum(s, F32(2.0**-126))).astype(F32)


def _finite(x, fill):
    return np.where(np.isfinite(x), x, F32(fill))


def quantize_int8(x, scale, azp=None, narrow_range=False):
    """q = clamp(rne(x · (1/s)) + z, qmin, 127) with broadcast s, z."""
    inv = (F32(1) / np.asarray(scale, F32)).astype(F32)
    r = np.rint(np.nan_to_num((x.astype(F32) * inv).astype(F32), nan=0.0, posinf=2.0**31, neginf=-(2.0**31)))
    z = 0 if azp is None else np.asarray(azp).astype(np.int64)
    return np.clip(r.astype(np.int64) + z, -127 if narrow_range else -128, 127).astype(np.int8)


def symmetric_scale(x, axis, qmax):
    amax = np.max(_finite(np.abs(x.astype(F32)), 0), axis=axis)
    return usable_scale((amax / F32(qmax)).astype(F32))


def asymmetric_scale_zero(x, axis):
    x = x.astype(F32)
    lo = np.minimum(np.min(_finite(x, 0), axis=axis), F32(0))
    hi = np.maximum(np.max(_finite(x, 0), axis=axis), F32(0))
    s = usable_scale(((hi - lo) / F32(255)).astype(F32))
    inv = (F32(1) / s).astype(F32)
    z = np.rint((F32(-128) - (lo * inv).astype(F32)).astype(F32)).astype(np.int32)
    return s, z


def dequantize_int8(q, scale, azp=None):
    z = 0 if azp is None else np.asarray(azp).astype(np.int64)
    return ((q.astype(np.int64) - z).astype(F32) * np.asarray(scale, F32)).astype(F32)


def quantize_weight_int4(w, group_size):
    """(values [N,K] 0…15, scale, offset [N, K/group]) as quant.h defines them."""
    n, k = w.shape
    g = w.astype(F32).reshape(n, k // group_size, group_size)
    lo = np.minimum(g.min(axis=2), F32(0))
    hi = np.maximum(g.max(axis=2), F32(0))
    s = usable_scale(((hi - lo) / F32(15)).astype(F32))
    inv = (F32(1) / s).astype(F32)
    q = np.clip(np.rint(((g - lo[..., None]).astype(F32) * inv[..., None]).astype(F32)), 0, 15)
    return q.reshape(n, k).astype(np.uint8), s, lo


def pack_int4(values):
    return (values[:, 0::2] | (values[:, 1::2] << 4)).astype(np.uint8)


# ---- fused ops (qgemm/fused.h): the float result y, in float64 --------------

def rms_norm(x, weight, eps):
    x = x.astype(np.float64)
    return x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps) * weight.astype(np.float64)


def layer_norm(v, gamma, beta, eps):
    mean = v.mean(axis=1, keepdims=True)
    var = ((v - mean) ** 2).mean(axis=1, keepdims=True)
    return (v - mean) / np.sqrt(var + eps) * gamma.astype(np.float64) + beta.astype(np.float64)


def silu_and_mul(x):
    x = x.astype(np.float64)
    gate, up = np.split(x, 2, axis=1)
    return gate / (1 + np.exp(-gate)) * up


def gelu(v, approximation):
    from math import erf, pi, sqrt

    if approximation == "tanh":
        return v / 2 * (1 + np.tanh(sqrt(2 / pi) * (v + 0.044715 * v**3)))
    return v / 2 * (1 + np.vectorize(erf)(v / sqrt(2)))


def dequant_int32(acc, scale_a, scale_w, bias=None):
    t = (np.asarray(scale_w, F32).reshape(1, -1) * acc.astype(F32)).astype(F32)
    sa = np.asarray(scale_a, F32).reshape(-1, 1)
    if bias is None:
        return (sa * t).astype(F32).astype(np.float64)
    return fma32(sa, t, np.asarray(bias, F32).reshape(1, -1)).astype(np.float64)


# ---- weight-only GEMM (qgemm/weight_only.h) ----------------------------------

def weight_only_mm(a, q, scales, offsets, group_size, bias=None):
    """a fp16 [M,K]; q [N,K] integer codes; ŵ = fp16(q·fp16(s) + fp16(o)) rounded once; fp64 sum.

    s and o are rounded to fp16 first; q·s + o is exact in float64 (fp16 values are multiples of 2⁻²⁴ below
    2¹⁶, so the sum needs < 48 bits) and NumPy rounds float64 → float16 once, to nearest even."""
    s = np.repeat(np.asarray(scales, F32).astype(np.float16).reshape(q.shape[0], -1), group_size, axis=1)
    o = 0 if offsets is None else np.repeat(
        np.asarray(offsets, F32).astype(np.float16).reshape(q.shape[0], -1), group_size, axis=1)
    w_hat = (q.astype(np.float64) * s.astype(np.float64) + np.asarray(o, np.float64)).astype(np.float16)
    out = a.astype(np.float64) @ w_hat.astype(np.float64).T
    if bias is not None:
        out = out + bias.astype(np.float64)
    return out, w_hat
