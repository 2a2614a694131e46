"""Weight-only GEMM on the CPU backend through NumPy (fp16 activations;
NumPy has no bf16): int8 and packed int4 weights, per-channel and per-group
scales, offsets, bias, the prepacked layout."""

import numpy as np
import pytest
import reference as ref

import qgemm


def check(out, expected, a, w_hat):
    # The reference holds the backend's ŵ bit for bit; fp32 sums in the backend's order (K·2⁻²⁴·Σ|a·ŵ|),
    # then fp16 rounding (two fp16 ulps of slack).
    bound = a.shape[1] * 2.0**-24 * (np.abs(a.astype(np.float64)) @ np.abs(w_hat.astype(np.float64)).T)
    bound += 2 * np.spacing(np.abs(expected).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(out.astype(np.float64) - expected) <= bound)


@pytest.mark.parametrize("m,n,k", [(1, 16, 32), (5, 40, 128), (33, 24, 256)])
@pytest.mark.parametrize("group_size", [32, None])
@pytest.mark.parametrize("with_bias", [False, True])
def test_int8(rng, m, n, k, group_size, with_bias):
    a = rng.standard_normal((m, k)).astype(np.float16)
    q = rng.integers(-128, 128, (n, k), dtype=np.int8)
    groups = k // (group_size or k)
    scales = rng.uniform(1e-3, 1e-2, (n, groups)).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float16) if with_bias else None
    out = qgemm.weight_only_mm(a, q, scales, None, group_size, bias)
    assert out.dtype == np.float16 and out.shape == (m, n)
    expected, w_hat = ref.weight_only_mm(a, q, scales, None, group_size or k, bias)
    check(out, expected, a, w_hat)


@pytest.mark.parametrize("prepacked", [False, True])
def test_int4_with_offsets(rng, prepacked):
    m, n, k, group_size = 3, 48, 128, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.uniform(-0.3, 0.3, (n, k)).astype(np.float32)
    packed, scales, offsets = qgemm.quantize_weight_int4(w, group_size)
    weight = qgemm.weight_only_prepack(packed) if prepacked else packed
    if prepacked:
        assert weight.shape == qgemm.weight_only_prepacked_shape(n, k, True) == (3, 1, 1024)
    out = qgemm.weight_only_mm(a, weight, scales, offsets, group_size)
    expected, w_hat = ref.weight_only_mm(a, qgemm.unpack_int4(packed), scales, offsets, group_size)
    check(out, expected, a, w_hat)


def test_prepacked_int8_gives_the_same_result(rng):
    a = rng.standard_normal((4, 64)).astype(np.float16)
    q = rng.integers(-128, 128, (20, 64), dtype=np.int8)
    scales = rng.uniform(1e-3, 1e-2, 20).astype(np.float32)
    plain = qgemm.weight_only_mm(a, q, scales)
    np.testing.assert_array_equal(qgemm.weight_only_mm(a, qgemm.weight_only_prepack(q), scales), plain)


@pytest.mark.parametrize("group_size", [32, None])
def test_fp16_params_give_the_bits_of_fp32_params(rng, group_size):
    # Scales and offsets may also come in the activation dtype: the kernels round them to it anyway,
    # so fp16 parameters give exactly the result of fp32 ones holding the same values.
    m, n, k = 3, 24, 128
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.uniform(-0.3, 0.3, (n, k)).astype(np.float32)
    packed, scales, offsets = qgemm.quantize_weight_int4(w, group_size or k)
    scales16, offsets16 = scales.astype(np.float16), offsets.astype(np.float16)
    out16 = qgemm.weight_only_mm(a, packed, scales16, offsets16, group_size)
    out32 = qgemm.weight_only_mm(a, packed, scales16.astype(np.float32), offsets16.astype(np.float32), group_size)
    np.testing.assert_array_equal(out16, out32)
    with pytest.raises(TypeError, match=r"^offsets: .*fp16 \(the dtype of scales\)"):
        qgemm.weight_only_mm(a, packed, scales16, offsets, group_size)


def test_group_major_params_give_the_bits_of_row_major_ones(rng):
    # Scales and offsets stored [groups, N] and passed transposed (strides (1, N)): the same values at
    # other addresses, the same result bit for bit.
    m, n, k, group_size = 3, 48, 256, 64
    a = rng.standard_normal((m, k)).astype(np.float16)
    packed, scales, offsets = qgemm.quantize_weight_int4(rng.uniform(-0.3, 0.3, (n, k)).astype(np.float32),
                                                         group_size)
    row_major = qgemm.weight_only_mm(a, packed, scales, offsets, group_size)
    scales_gm, offsets_gm = np.ascontiguousarray(scales.T).T, np.ascontiguousarray(offsets.T).T
    assert scales_gm.strides == (4, 4 * n)
    np.testing.assert_array_equal(qgemm.weight_only_mm(a, packed, scales_gm, offsets_gm, group_size), row_major)
    with pytest.raises(ValueError, match="offsets: expected the scales. layout"):
        qgemm.weight_only_mm(a, packed, scales_gm, offsets, group_size)


def test_weight_only_errors(rng):
    a = rng.standard_normal((2, 32)).astype(np.float16)
    with pytest.raises(TypeError, match=r"^a: "):
        qgemm.weight_only_mm(a.astype(np.float32), np.zeros((4, 32), np.int8), np.ones(4, np.float32),
                             out=np.empty((2, 4), np.float16))
    with pytest.raises(ValueError, match=r"group_size"):
        qgemm.weight_only_mm(a, np.zeros((4, 32), np.int8), np.ones((4, 2), np.float32), None, 7)


def test_workspace_on_the_cpu(rng):
    # The CPU backend needs no workspace (0 bytes) and gives the same bits with one; a bad one is refused.
    assert qgemm.weight_only_workspace_bytes() == qgemm.weight_only_workspace_bytes("cpu") == 0
    a = rng.standard_normal((3, 64)).astype(np.float16)
    q = rng.integers(-128, 128, (8, 64), dtype=np.int8)
    scales = rng.uniform(1e-3, 1e-2, 8).astype(np.float32)
    plain = qgemm.weight_only_mm(a, q, scales)
    scratch = np.full(256, 0xAB, np.uint8)
    np.testing.assert_array_equal(qgemm.weight_only_mm(a, q, scales, workspace=scratch), plain)
    with pytest.raises(TypeError, match=r"^workspace: .*uint8"):
        qgemm.weight_only_mm(a, q, scales, workspace=np.zeros(16, np.int8))
    with pytest.raises(ValueError, match=r"^workspace: .*contiguous"):
        qgemm.weight_only_mm(a, q, scales, workspace=scratch[::2])
    with pytest.raises(ValueError, match=r"device"):
        qgemm.weight_only_workspace_bytes("tpu")
    assert qgemm.weight_only_dense_workspace_bytes("cpu", 4096, 4096) == 0
    with pytest.raises(ValueError, match=r"weight_only_dense_workspace_bytes: expected n, k >= 0"):
        qgemm.weight_only_dense_workspace_bytes("cpu", -1, 64)
