"""Scaled GEMMs on the CPU backend through NumPy against reference.py:
every scale granularity, bias, output dtype, fp8, zero points, sub-matrix
views, out=, zero-copy."""

import numpy as np
import pytest
import reference as ref

import qgemm

SHAPES = [(1, 1, 1), (3, 17, 100), (33, 8, 64), (5, 130, 257)]


def ulps(actual, expected):
    """Distance in units of the last place of actual's dtype."""
    expected = expected.astype(actual.dtype)
    return np.abs(actual.astype(np.float64) - expected.astype(np.float64)) / np.spacing(np.abs(expected))


def random_int8_problem(rng, m, n, k, per_token=True, per_channel=True):
    a = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)  # weight [N,K]; b = w.T is [K,N] column-major
    sa = rng.uniform(1e-3, 2e-2, (m, 1) if per_token else (1,)).astype(np.float32)
    sb = rng.uniform(1e-3, 2e-2, (1, n) if per_channel else (1,)).astype(np.float32)
    return a, w, sa, sb


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("per_token,per_channel", [(True, True), (False, False), (True, False), (False, True)])
def test_scaled_mm_int8_fp32_is_exact(rng, m, n, k, per_token, per_channel):
    a, w, sa, sb = random_int8_problem(rng, m, n, k, per_token, per_channel)
    out = qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32")
    assert out.dtype == np.float32 and out.shape == (m, n)
    np.testing.assert_array_equal(out, ref.scaled_mm(a, w.T, sa, sb))


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("out_dtype", [np.float32, np.float16])
def test_scaled_mm_int8_with_bias(rng, m, n, k, out_dtype):
    a, w, sa, sb = random_int8_problem(rng, m, n, k)
    bias = rng.uniform(-4, 4, n).astype(out_dtype)
    out = qgemm.scaled_mm(a, w.T, sa, sb, bias)  # out dtype defaults to bias's
    assert out.dtype == out_dtype
    # fma through float64 may round twice: one ulp of the output.
    assert ulps(out, ref.scaled_mm(a, w.T, sa, sb, bias)).max() <= 1


def test_scaled_mm_fp16_output_into_out(rng):
    a, w, sa, sb = random_int8_problem(rng, 4, 6, 32)
    out = np.full((4, 6), np.nan, np.float16)
    result = qgemm.scaled_mm(a, w.T, sa, sb, out=out)
    assert result is out
    np.testing.assert_array_equal(out, ref.scaled_mm(a, w.T, sa, sb).astype(np.float16))


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_scaled_mm_fp8(rng, m, n, k):
    a, w = ref.random_fp8_codes(rng, (m, k)), ref.random_fp8_codes(rng, (n, k))
    sa = np.float32([0.5])
    sb = rng.uniform(0.5, 1, n).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    out = qgemm.scaled_mm(qgemm.fp8(a), qgemm.fp8(w.T), sa, sb, bias, out_dtype="fp32")
    av, wv = ref.fp8_decode(a), ref.fp8_decode(w)
    expected = ref.scaled_mm(av, wv.T, sa, sb, bias)
    # fp32 accumulation in an order of the backend's choosing: k·2⁻²⁴·Σ|a·b| scaled, plus an ulp.
    bound = k * 2.0**-24 * (np.abs(av) @ np.abs(wv).T) * 0.5 * sb + np.spacing(np.abs(expected)) * 2
    assert np.all(np.abs(out - expected) <= bound)


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_scaled_mm_fast_accum_is_precise_on_cpu(rng, m, n, k):
    """fast_accum is a GPU tensor-core rounding mode: the CPU backend gives
    the precise result, bit for bit, for fp8 and (ignored) for int8."""
    a, w = ref.random_fp8_codes(rng, (m, k)), ref.random_fp8_codes(rng, (n, k))
    sa = np.float32([0.5])
    sb = rng.uniform(0.5, 1, n).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    precise = qgemm.scaled_mm(qgemm.fp8(a), qgemm.fp8(w.T), sa, sb, bias, out_dtype="fp32")
    fast = qgemm.scaled_mm(qgemm.fp8(a), qgemm.fp8(w.T), sa, sb, bias, out_dtype="fp32", fast_accum=True)
    np.testing.assert_array_equal(fast, precise)
    ai, wi, sai, sbi = random_int8_problem(rng, m, n, k)
    np.testing.assert_array_equal(qgemm.scaled_mm(ai, wi.T, sai, sbi, out_dtype="fp32", fast_accum=True),
                                  ref.scaled_mm(ai, wi.T, sai, sbi))


def test_scaled_mm_fp8_native_ml_dtypes(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = ref.random_fp8_codes(rng, (4, 16)).view(ml_dtypes.float8_e4m3fn)
    w = ref.random_fp8_codes(rng, (8, 16)).view(ml_dtypes.float8_e4m3fn)
    out = qgemm.scaled_mm(a, w.T, np.float32([1]), np.float32([1]), out_dtype="fp32")
    np.testing.assert_allclose(out, ref.fp8_decode(a.view(np.uint8)) @ ref.fp8_decode(w.view(np.uint8)).T,
                               rtol=1e-6)


def test_scaled_mm_on_submatrix_views_zero_copy(rng):
    big_a = rng.integers(-128, 128, (10, 40), dtype=np.int8)
    big_w = rng.integers(-128, 128, (12, 50), dtype=np.int8)
    a, w = big_a[2:7, 5:37], big_w[1:9, 10:42]  # leading dimensions larger than the rows
    big_out = np.full((7, 20), -1.0, np.float32)
    out = big_out[1:6, 3:11]
    a.flags.writeable = False  # read-only inputs are fine
    qgemm.scaled_mm(a, w.T, np.float32([1.0]), np.float32([1.0]), out=out)
    np.testing.assert_array_equal(big_out[1:6, 3:11], a.astype(np.float64) @ w.T.astype(np.float64))
    assert np.all(big_out[0] == -1) and np.all(big_out[:, :3] == -1)  # nothing outside the view written


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("per_token_zero_points", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_scaled_mm_azp(rng, m, n, k, per_token_zero_points, with_bias):
    a, w, sa, sb = random_int8_problem(rng, m, n, k)
    bias = rng.uniform(-1, 1, n).astype(np.float32) if with_bias else None
    column_sums = w.astype(np.int64).sum(axis=1)
    if per_token_zero_points:
        azp = rng.integers(-20, 20, m).astype(np.int32)
        adj = qgemm.azp_adj(w.T)
        np.testing.assert_array_equal(adj, column_sums)
        out = qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, azp, bias, out_dtype="fp32")
        azp_term = azp.astype(np.int64)[:, None] * column_sums[None, :]
    else:
        adj = qgemm.azp_adj(w.T, azp=5)
        assert adj.dtype == np.int32
        np.testing.assert_array_equal(adj, 5 * column_sums)
        out = qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, None, bias, out_dtype="fp32")
        azp_term = 5 * column_sums[None, :]
    expected = ref.scaled_mm(a, w.T, sa, sb, bias, azp_term=azp_term)
    if with_bias:
        assert ulps(out, expected).max() <= 1
    else:
        np.testing.assert_array_equal(out, expected)


def test_azp_adj_into_out(rng):
    w = rng.integers(-128, 128, (9, 33), dtype=np.int8)
    out = np.zeros(9, np.int32)
    assert qgemm.azp_adj(w.T, azp=-3, out=out) is out
    np.testing.assert_array_equal(out, -3 * w.astype(np.int64).sum(axis=1))


def test_stream_is_ignored_on_the_cpu(rng):
    a, w, sa, sb = random_int8_problem(rng, 2, 3, 4)
    np.testing.assert_array_equal(qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32", stream=0),
                                  ref.scaled_mm(a, w.T, sa, sb))


def test_workspace_on_the_cpu(rng):
    # The CPU backend needs no workspace (0 bytes) and gives the same bits with one; a bad one is refused.
    assert qgemm.scaled_mm_workspace_bytes() == qgemm.scaled_mm_workspace_bytes("cpu") == 0
    a, w, sa, sb = random_int8_problem(rng, 5, 24, 40)
    plain = qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32")
    scratch = np.full(256, 0xAB, np.uint8)
    np.testing.assert_array_equal(qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32", workspace=scratch), plain)
    adj = qgemm.azp_adj(w.T, 3)
    np.testing.assert_array_equal(qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, out_dtype="fp32", workspace=scratch),
                                  qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, out_dtype="fp32"))
    with pytest.raises(TypeError, match=r"^workspace: .*uint8"):
        qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32", workspace=np.zeros(16, np.int8))
    with pytest.raises(ValueError, match=r"^workspace: .*contiguous"):
        qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32", workspace=scratch[::2])
    with pytest.raises(ValueError, match=r"^workspace: must not overlap a"):
        qgemm.scaled_mm(a, w.T, sa, sb, out_dtype="fp32", workspace=a.reshape(-1).view(np.uint8))
