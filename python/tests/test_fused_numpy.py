"""Fused ops on the CPU backend through NumPy: the float result y from
reference.py (float64), quantized; the library computes y in fp32, so codes
may differ by one step where y lies within fp32 rounding of a code boundary."""

import numpy as np
import pytest
import reference as ref

import qgemm


def check_quantized(q, scale, y, azp=None):
    """scale = amax(|y|)/127 per row (or the asymmetric form), q = rne(y / scale) ± 1."""
    if azp is None:
        expected_scale = np.abs(y).max(axis=1, keepdims=True) / 127
        np.testing.assert_allclose(scale, expected_scale, rtol=1e-5)
        codes = np.clip(np.rint(y / scale), -128, 127)
    else:
        lo, hi = np.minimum(y.min(axis=1, keepdims=True), 0), np.maximum(y.max(axis=1, keepdims=True), 0)
        np.testing.assert_allclose(scale, (hi - lo) / 255, rtol=1e-5)
        codes = np.clip(np.rint(y / scale) + azp, -128, 127)
    assert np.abs(q.astype(np.int64) - codes).max() <= 1
    assert np.mean(q == codes) > 0.99


@pytest.mark.parametrize("t,n", [(1, 8), (7, 100), (16, 1024)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rms_norm_quant(rng, t, n, dtype):
    x = rng.standard_normal((t, n)).astype(dtype)
    weight = rng.uniform(0.5, 1.5, n).astype(dtype)
    q, scale, azp = qgemm.rms_norm_quant(x, weight, 1e-6)
    assert q.dtype == np.int8 and scale.shape == (t, 1) and azp is None
    check_quantized(q, scale, ref.rms_norm(x, weight, 1e-6))


def test_add_rms_norm_quant_updates_the_residual(rng):
    x = rng.standard_normal((5, 64)).astype(np.float32)
    residual = rng.standard_normal((5, 64)).astype(np.float32)
    before = residual.copy()
    weight = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    q, scale, azp = qgemm.add_rms_norm_quant(x, residual, weight, 1e-5, symmetric=False)
    np.testing.assert_array_equal(residual, before + x)
    check_quantized(q, scale, ref.rms_norm(residual, weight, 1e-5), azp)


@pytest.mark.parametrize("with_residual,with_bias", [(False, False), (True, True)])
def test_layer_norm_quant(rng, with_residual, with_bias):
    t, n = 6, 96
    x = rng.standard_normal((t, n)).astype(np.float32)
    gamma, beta = rng.uniform(0.5, 1.5, n).astype(np.float32), rng.uniform(-0.2, 0.2, n).astype(np.float32)
    residual = rng.standard_normal((t, n)).astype(np.float32) if with_residual else None
    bias = rng.uniform(-1, 1, n).astype(np.float32) if with_bias else None
    q, scale, _ = qgemm.layer_norm_quant(x, gamma, beta, 1e-5, residual, bias)
    v = x.astype(np.float64) + (bias if with_bias else 0) + (residual if with_residual else 0)
    check_quantized(q, scale, ref.layer_norm(v, gamma, beta, 1e-5))


def test_layer_norm_quant_int32(rng):
    t, n = 4, 64
    acc = rng.integers(-20000, 20000, (t, n)).astype(np.int32)
    scale_a, scale_w = np.float32([2e-3]), rng.uniform(1e-3, 2e-3, n).astype(np.float32)
    residual = rng.integers(-128, 128, (t, n), dtype=np.int8)
    residual_scale = np.float32([0.01])
    gamma, beta = np.ones(n, np.float32), np.zeros(n, np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    q, scale, _ = qgemm.layer_norm_quant_int32(acc, scale_a, scale_w, residual, residual_scale, gamma, beta, 1e-5,
                                               bias)
    v = ref.dequant_int32(acc, scale_a, scale_w, bias) + 0.01 * residual.astype(np.float64)
    check_quantized(q, scale, ref.layer_norm(v, gamma, beta, 1e-5))


def test_silu_and_mul_quant_static_fp8(rng):
    x = rng.standard_normal((3, 2 * 40)).astype(np.float32)
    q, scale, _ = qgemm.silu_and_mul_quant(x, dtype="fp8e4m3", mode="static", scale=np.float32([0.01]))
    codes = q.array if isinstance(q, qgemm.Fp8) else q.view(np.uint8)
    assert codes.shape == (3, 40)
    y = ref.silu_and_mul(x) / 0.01
    # fp32 evaluation vs float64: at most one fp8 code apart
    assert np.abs(codes.astype(np.int64) - ref.fp8_encode(y).astype(np.int64)).max() <= 1


@pytest.mark.parametrize("approximation", ["erf", "tanh"])
def test_bias_gelu_quant(rng, approximation):
    x = rng.standard_normal((5, 48)).astype(np.float32)
    bias = rng.uniform(-1, 1, 48).astype(np.float32)
    q, scale, _ = qgemm.bias_gelu_quant(x, bias, approximation)
    check_quantized(q, scale, ref.gelu(x.astype(np.float64) + bias, approximation))


def test_bias_gelu_quant_int32(rng):
    acc = rng.integers(-5000, 5000, (3, 32)).astype(np.int32)
    scale_a, scale_w = rng.uniform(1e-3, 2e-3, (3, 1)).astype(np.float32), np.float32([1e-3])
    q, scale, _ = qgemm.bias_gelu_quant_int32(acc, scale_a, scale_w, approximation="tanh")
    check_quantized(q, scale, ref.gelu(ref.dequant_int32(acc, scale_a, np.full(32, 1e-3, np.float32)), "tanh"))


def test_fused_errors(rng):
    x = rng.standard_normal((2, 8)).astype(np.float32)
    with pytest.raises(ValueError, match=r"^mode: expected 'static' or 'per_token', got 'per_group'$"):
        qgemm.rms_norm_quant(x, np.ones(8, np.float32), mode="per_group")
    with pytest.raises(ValueError, match=r"^approximation: "):
        qgemm.bias_gelu_quant(x, approximation="exact")
    with pytest.raises(TypeError, match=r"^weight: "):
        qgemm.rms_norm_quant(x, np.ones(8, np.float16))
