"""Every op on the CPU backend through NumPy, against straightforward NumPy
formulas; zero-copy views; error mapping."""

import numpy as np
import pytest
from conftest import fp8_decode, random_fp8_codes

import qgemm


def test_version_and_build_info():
    assert qgemm.__version__.count(".") == 2
    assert isinstance(qgemm.built_with_cuda(), bool)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (3, 17, 100), (33, 8, 64)])
@pytest.mark.parametrize("per_token,per_channel", [(True, True), (False, False), (True, False)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_scaled_mm_int8(rng, m, n, k, per_token, per_channel, with_bias):
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)  # weights [N,K]; b = w.T
    sa = rng.uniform(1e-3, 1e-2, m if per_token else 1).astype(np.float32)
    sb = rng.uniform(1e-3, 1e-2, n if per_channel else 1).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32) if with_bias else None
    out = qgemm.scaled_mm(a, w.T, sa, sb, bias, out_dtype="fp32")
    ref = (a.astype(np.float64) @ w.T.astype(np.float64)) * sa.reshape(-1, 1) * sb.reshape(1, -1)
    if with_bias:
        ref += bias
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_scaled_mm_fp16_output_and_out_argument(rng):
    a = rng.integers(-128, 128, (4, 32), dtype=np.int8)
    w = rng.integers(-128, 128, (6, 32), dtype=np.int8)
    sa, sb = np.float32([0.01]), np.full(6, 0.02, np.float32)
    out = np.full((4, 6), np.nan, np.float16)
    result = qgemm.scaled_mm(a, w.T, sa, sb, out=out)
    assert result is out
    ref = (a.astype(np.float64) @ w.T.astype(np.float64)) * 0.01 * 0.02
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2**-10, atol=1e-7)


def test_scaled_mm_fp8(rng):
    m, n, k = 5, 9, 48
    a, w = random_fp8_codes(rng, (m, k)), random_fp8_codes(rng, (n, k))
    sa, sb = np.float32([0.5]), rng.uniform(0.5, 1, n).astype(np.float32)
    out = qgemm.scaled_mm(qgemm.fp8(a), qgemm.fp8(w.T), sa, sb, out_dtype="fp32")
    ref = (fp8_decode(a) @ fp8_decode(w).T) * 0.5 * sb
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_scaled_mm_on_submatrix_views(rng):
    big_a = rng.integers(-128, 128, (10, 40), dtype=np.int8)
    big_w = rng.integers(-128, 128, (12, 50), dtype=np.int8)
    a, w = big_a[2:7, 5:37], big_w[1:9, 10:42]  # leading dimensions larger than the rows
    out = qgemm.scaled_mm(a, w.T, np.float32([1.0]), np.float32([1.0]), out_dtype="fp32")
    np.testing.assert_array_equal(out, a.astype(np.float64) @ w.T.astype(np.float64))


@pytest.mark.parametrize("per_token_zero_points", [False, True])
def test_scaled_mm_azp(rng, per_token_zero_points):
    m, n, k = 7, 11, 64
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    sa, sb = rng.uniform(1e-3, 1e-2, m).astype(np.float32), rng.uniform(1e-3, 1e-2, n).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    if per_token_zero_points:
        azp = rng.integers(-20, 20, m).astype(np.int32)
        adj = qgemm.azp_adj(w.T)
        np.testing.assert_array_equal(adj, w.astype(np.int64).sum(axis=1))
        out = qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, azp, bias, out_dtype="fp32")
        zero = azp.reshape(-1, 1).astype(np.float64)
    else:
        adj = qgemm.azp_adj(w.T, azp=5)
        out = qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, None, bias, out_dtype="fp32")
        zero = 5.0
    ref = ((a.astype(np.float64) - zero) @ w.T.astype(np.float64)) * sa.reshape(-1, 1) * sb + bias
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_quantize_per_token_matches_numpy(rng):
    x = (rng.standard_normal((9, 100)) * rng.uniform(0.01, 10, (9, 1))).astype(np.float32)
    x[3] = 0
    q, scale, azp = qgemm.quantize(x)
    assert azp is None
    amax = np.abs(x).max(axis=1)
    expected_scale = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    np.testing.assert_array_equal(scale, expected_scale)
    expected_q = np.clip(np.rint(x / expected_scale[:, None]), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(q, expected_q)
    back = qgemm.dequantize(q, scale)
    assert np.all(np.abs(back - x) <= scale[:, None] / 2 * (1 + 1e-6))


def test_quantize_asymmetric_per_group_column_major_scales(rng):
    x = rng.uniform(-0.5, 2.0, (6, 256)).astype(np.float32)
    scale = np.empty((4, 6), np.float32).T  # [T, G] view with column-major strides
    azp = np.empty((4, 6), np.int32).T
    q, s, z = qgemm.quantize(x, mode="per_group", group_size=64, symmetric=False, scale=scale, azp=azp)
    assert s is scale and z is azp
    groups = x.reshape(6, 4, 64)
    lo, hi = np.minimum(groups.min(axis=2), 0), np.maximum(groups.max(axis=2), 0)
    expected = ((hi - lo) / np.float32(255)).astype(np.float32)
    np.testing.assert_array_equal(scale, expected)
    np.testing.assert_array_equal(azp, np.rint(np.float32(-128) - lo / expected).astype(np.int32))
    back = qgemm.dequantize(q, scale, azp, mode="per_group", group_size=64)
    assert np.all(np.abs(back - x) <= np.repeat(scale, 64, axis=1) / 2 * (1 + 1e-6))


def test_quantize_static_and_fp8(rng):
    x = rng.standard_normal((3, 16)).astype(np.float32)
    q, _, _ = qgemm.quantize(x, mode="static", scale=np.float32([0.05]))
    np.testing.assert_array_equal(q, np.clip(np.rint(x / np.float32(0.05)), -128, 127).astype(np.int8))
    q8, s8, _ = qgemm.quantize(x, dtype="fp8e4m3")
    assert isinstance(q8, qgemm.Fp8)
    decoded = fp8_decode(q8.array) * s8[:, None]
    np.testing.assert_allclose(decoded, x, rtol=2**-4, atol=1e-6)


def test_int4_weight_helpers(rng):
    w = rng.uniform(-0.3, 0.3, (8, 128)).astype(np.float32)
    packed, scale, offset = qgemm.quantize_weight_int4(w, 32)
    values = qgemm.unpack_int4(packed)
    assert values.max() <= 15
    np.testing.assert_array_equal(qgemm.pack_int4(values), packed)
    assert packed[0, 0] == values[0, 0] | (values[0, 1] << 4)  # element 2j in the low nibble
    back = values * np.repeat(scale, 32, axis=1) + np.repeat(offset, 32, axis=1)
    assert np.all(np.abs(back - w) <= np.repeat(scale, 32, axis=1) / 2 * (1 + 1e-5) + 1e-7)


def test_errors_map_to_python_exceptions_with_the_same_message(rng):
    a = rng.integers(-128, 128, (4, 8), dtype=np.int8)
    w = rng.integers(-128, 128, (6, 8), dtype=np.int8)
    with pytest.raises(ValueError, match=r"scale_a: expected 1 or M=4 elements"):
        qgemm.scaled_mm(a, w.T, np.ones(3, np.float32), np.ones(1, np.float32), out_dtype="fp32")
    with pytest.raises(TypeError, match=r"scale_b: expected dtype fp32, got fp16"):
        qgemm.scaled_mm(a, w.T, np.ones(1, np.float32), np.ones(1, np.float16), out_dtype="fp32")
    with pytest.raises(ValueError, match=r"b: expected a column-major matrix"):
        qgemm.scaled_mm(a, np.ascontiguousarray(w.T), np.ones(1, np.float32), np.ones(1, np.float32), out_dtype="fp32")
    with pytest.raises(ValueError, match=r"group_size"):
        qgemm.quantize(np.ones((2, 10), np.float32), mode="per_group", group_size=4)
    with pytest.raises(TypeError, match=r"expected an array supporting DLPack"):
        qgemm.scaled_mm([[1]], w.T, np.ones(1, np.float32), np.ones(1, np.float32), out_dtype="fp32")
    with pytest.raises(TypeError, match=r"bfloat16"):
        qgemm.scaled_mm(a, w.T, np.ones(1, np.float32), np.ones(1, np.float32))  # bf16 default, NumPy has none
