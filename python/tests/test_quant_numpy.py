"""Quantization family on the CPU backend through NumPy against reference.py,
bit for bit: static / per-token / per-group, symmetric / asymmetric / narrow
range, int8 / fp8, fp16 inputs, dequantize, 4-bit weight helpers."""

import numpy as np
import pytest
import reference as ref

import qgemm

SHAPES = [(1, 1), (3, 17), (9, 100), (4, 4096)]


def activations(rng, t, h, dtype=np.float32):
    x = rng.standard_normal((t, h)) * rng.uniform(0.01, 10, (t, 1))
    return x.astype(dtype)


@pytest.mark.parametrize("t,h", SHAPES)
@pytest.mark.parametrize("narrow_range", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_per_token_symmetric(rng, t, h, narrow_range, dtype):
    x = activations(rng, t, h, dtype)
    if t > 2:
        x[1] = 0  # an all-zero row: scale 1, codes 0
        x[2, 0], x[2, -1] = np.inf, np.nan  # left out of the statistics
    q, scale, azp = qgemm.quantize(x, narrow_range=narrow_range)
    assert azp is None and q.dtype == np.int8 and scale.shape == (t, 1)
    expected_scale = ref.symmetric_scale(x, 1, 127)[:, None]
    np.testing.assert_array_equal(scale, expected_scale)
    np.testing.assert_array_equal(q, ref.quantize_int8(x, expected_scale, narrow_range=narrow_range))
    back = qgemm.dequantize(q, scale)
    np.testing.assert_array_equal(back, ref.dequantize_int8(q, scale))
    finite = np.isfinite(x)
    # half a step, plus the fp32 rounding of x·(1/s) (≤ 128 ulps of 1 in steps) and of the product
    bound = np.broadcast_to(scale * (0.5 + 2.0**-16), x.shape)
    assert np.all((np.abs(back - x.astype(np.float32)) <= bound)[finite])


@pytest.mark.parametrize("t,h", SHAPES)
def test_per_token_asymmetric(rng, t, h):
    x = (activations(rng, t, h) + 1.0).astype(np.float32)
    q, scale, azp = qgemm.quantize(x, symmetric=False)
    assert azp.dtype == np.int32 and azp.shape == (t, 1)
    expected_scale, expected_azp = ref.asymmetric_scale_zero(x, 1)
    np.testing.assert_array_equal(scale[:, 0], expected_scale)
    np.testing.assert_array_equal(azp[:, 0], expected_azp)
    np.testing.assert_array_equal(q, ref.quantize_int8(x, scale, azp))
    np.testing.assert_array_equal(qgemm.dequantize(q, scale, azp), ref.dequantize_int8(q, scale, azp))


@pytest.mark.parametrize("group_size", [32, 64, 128])
@pytest.mark.parametrize("column_major", [False, True])
@pytest.mark.parametrize("symmetric", [True, False])
def test_per_group(rng, group_size, column_major, symmetric):
    t, h = 6, 256
    groups = h // group_size
    x = activations(rng, t, h)
    scale = np.empty((groups, t), np.float32).T if column_major else None  # [T, G], strides (1, T)
    azp = None if symmetric else (np.empty((groups, t), np.int32).T if column_major else None)
    q, s, z = qgemm.quantize(x, mode="per_group", group_size=group_size, symmetric=symmetric, scale=scale, azp=azp)
    assert s.shape == (t, groups)
    if column_major:
        assert s is scale and z is azp
    grouped = x.reshape(t, groups, group_size)
    if symmetric:
        np.testing.assert_array_equal(s, ref.symmetric_scale(grouped, 2, 127))
        z_full = None
    else:
        es, ez = ref.asymmetric_scale_zero(grouped, 2)
        np.testing.assert_array_equal(s, es)
        np.testing.assert_array_equal(z, ez)
        z_full = np.repeat(z, group_size, axis=1)
    s_full = np.repeat(s, group_size, axis=1)
    np.testing.assert_array_equal(q, ref.quantize_int8(x, s_full, z_full))
    back = qgemm.dequantize(q, s, z, mode="per_group", group_size=group_size)
    np.testing.assert_array_equal(back, ref.dequantize_int8(q, s_full, z_full))


@pytest.mark.parametrize("azp", [None, 7])
def test_static(rng, azp):
    x = activations(rng, 5, 40)
    scale = np.float32([0.05])
    zero = None if azp is None else np.int32([azp])
    q, s, z = qgemm.quantize(x, mode="static", scale=scale, azp=zero)
    assert s is scale and z is zero
    np.testing.assert_array_equal(q, ref.quantize_int8(x, scale, zero))
    back = qgemm.dequantize(q, scale, zero, mode="static", out_dtype="fp16")
    assert back.dtype == np.float16
    np.testing.assert_array_equal(back, ref.dequantize_int8(q, scale, zero).astype(np.float16))


@pytest.mark.parametrize("t,h", SHAPES)
def test_fp8_per_token(rng, t, h):
    x = activations(rng, t, h)
    q, scale, azp = qgemm.quantize(x, dtype="fp8e4m3")
    codes = q.view(np.uint8) if not isinstance(q, qgemm.Fp8) else q.array
    expected_scale = ref.symmetric_scale(x, 1, 448)[:, None]
    np.testing.assert_array_equal(scale, expected_scale)
    inv = (np.float32(1) / expected_scale).astype(np.float32)
    np.testing.assert_array_equal(codes, ref.fp8_encode((x * inv).astype(np.float32)))
    back = qgemm.dequantize(q, scale)
    np.testing.assert_array_equal(back, (ref.fp8_decode(codes).astype(np.float32) * scale).astype(np.float32))


def test_fp8_static_saturates(rng):
    x = np.float32([[1000.0, -1000.0, 0.3, np.nan]])
    q, _, _ = qgemm.quantize(x, dtype="fp8e4m3", mode="static", scale=np.float32([1.0]))
    codes = q.view(np.uint8) if not isinstance(q, qgemm.Fp8) else q.array
    np.testing.assert_array_equal(codes, ref.fp8_encode(x))
    assert codes[0, 0] == 0x7E and codes[0, 1] == 0xFE and codes[0, 3] & 0x7F == 0x7F


def test_quantize_into_given_outputs(rng):
    x = activations(rng, 3, 64)
    out = np.full((3, 64), 99, np.int8)
    scale = np.zeros(3, np.float32)  # [T] is accepted too
    q, s, _ = qgemm.quantize(x, out=out, scale=scale)
    assert q is out and s is scale
    np.testing.assert_array_equal(scale, ref.symmetric_scale(x, 1, 127))


@pytest.mark.parametrize("group_size", [32, 128])
def test_int4_weight_group_major_params(rng, group_size):
    w = rng.uniform(-0.3, 0.3, (8, 256)).astype(np.float32)
    packed, scale, offset = qgemm.quantize_weight_int4(w, group_size)
    packed_gm, scale_gm, offset_gm = qgemm.quantize_weight_int4(w, group_size, group_major=True)
    assert scale_gm.shape == scale.shape and scale_gm.strides == (4, 4 * 8)  # [G, N] viewed as [N, G]
    assert offset_gm.strides == scale_gm.strides
    np.testing.assert_array_equal(packed_gm, packed)
    np.testing.assert_array_equal(scale_gm, scale)
    np.testing.assert_array_equal(offset_gm, offset)


@pytest.mark.parametrize("group_size", [32, 128])
def test_int4_weight_helpers(rng, group_size):
    w = rng.uniform(-0.3, 0.3, (8, 256)).astype(np.float32)
    packed, scale, offset = qgemm.quantize_weight_int4(w, group_size)
    values, expected_scale, expected_offset = ref.quantize_weight_int4(w, group_size)
    np.testing.assert_array_equal(scale, expected_scale)
    np.testing.assert_array_equal(offset, expected_offset)
    np.testing.assert_array_equal(packed, ref.pack_int4(values))
    np.testing.assert_array_equal(qgemm.unpack_int4(packed), values)
    np.testing.assert_array_equal(qgemm.pack_int4(values), packed)
    out = np.zeros_like(packed)
    assert qgemm.pack_int4(values, out=out) is out
