"""Paged KV cache (qgemm/kv_cache.h) on the CPU backend through NumPy:
kv_cache_write against qgemm.quantize bit for bit, and paged_attention_decode
against an independent float64 reference written here (each sequence's
tokens gathered through its block-table row, code · scale, softmax), for
int8, fp8 (uint8 codes marked with qgemm.fp8) and fp16 caches; grouped-query
attention, shuffled blocks, odd and zero lengths, strided views, padding
slots, NaN for a bad table row, and argument errors. NumPy has no bf16: the
torch tests (test_torch_kv_cache.py) cover it."""

import math

import numpy as np
import pytest
import reference as ref

import qgemm

CACHE_DTYPES = ["int8", "fp8e4m3", "fp16"]


# ---- the reference -----------------------------------------------------------

def codes_of(x):
    """The uint8 / int8 / fp16 array behind a cache array (fp8: its uint8 codes)."""
    if isinstance(x, qgemm.Fp8):
        return x.array
    return x.view(np.uint8) if "float8" in str(x.dtype) else x


def dequantized(cache, scale, dtype):
    """The cache's values k̂ = code · scale in float64, [num_blocks, block_size, kv_heads, head_dim]."""
    codes = codes_of(cache)
    if dtype == "int8":
        return codes.astype(np.float64) * scale.astype(np.float64)[..., None]
    if dtype == "fp8e4m3":
        return ref.fp8_decode(codes) * scale.astype(np.float64)[..., None]
    return codes.astype(np.float64)


def attention_reference(query, k_hat, v_hat, block_tables, seq_lens, softmax_scale):
    """float64 decode attention: out [S, q_heads, head_dim]; zeros for L = 0, NaN for an unusable table row."""
    num_blocks, block_size, kv_heads, head_dim = k_hat.shape
    seqs, q_heads, _ = query.shape
    group = q_heads // kv_heads
    out = np.zeros((seqs, q_heads, head_dim))
    for s in range(seqs):
        length = int(seq_lens[s])
        row = np.asarray(block_tables[s]).astype(np.int64)
        used = row[:(length + block_size - 1) // block_size] if length > 0 else row[:0]
        if length < 0 or length > row.size * block_size or np.any((used < 0) | (used >= num_blocks)):
            out[s] = np.nan
            continue
        if length == 0:
            continue
        j = np.arange(length)
        blocks, offsets = row[j // block_size], j % block_size
        keys, values = k_hat[blocks, offsets], v_hat[blocks, offsets]  # [L, kv_heads, head_dim]
        for h in range(q_heads):
            g = h // group
            logits = float(softmax_scale) * (keys[:, g] @ query[s, h].astype(np.float64))
            p = np.exp(logits - logits.max())
            out[s, h] = p @ values[:, g] / p.sum()
    return out


def assert_attention_close(out, expected, query, k_hat, v_hat, seq_lens, softmax_scale):
    """out (fp16) against the float64 reference, NaN where it is NaN. The CPU backend sums in fp32 in index
    order: a logit is off by at most δ = (head_dim + 2)·2⁻²⁴·softmax_scale·Σ_d |q_d·k̂_d|, which moves every
    p_j by that relative amount twice (its own logit and the max), and the Σ p·v̂ and Σ p sums add at most
    (L + 3)·2⁻²⁴ relative each: all within max|v̂|·(4·δ + 3·(L + head_dim)·2⁻²⁴). Then one fp16 ulp for the
    final rounding."""
    assert out.shape == expected.shape
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(out.astype(np.float64)), nan)
    head_dim = query.shape[-1]
    q_k = np.abs(query.astype(np.float64)).max() * np.abs(k_hat).sum(axis=-1).max()
    delta = (head_dim + 2) * 2.0**-24 * abs(float(softmax_scale)) * q_k
    length = max(int(np.max(seq_lens)), 0)
    bound = np.abs(v_hat).max() * (4 * delta + 3 * (length + head_dim) * 2.0**-24)
    bound = bound + np.spacing(np.abs(np.where(nan, 0, expected)).astype(np.float16)).astype(np.float64)
    diff = np.abs(out.astype(np.float64) - expected)
    assert np.all((diff <= bound)[~nan]), f"max excess {np.max((diff - bound)[~nan])}"


# ---- problems ----------------------------------------------------------------

def make_cache(rng, dtype, num_blocks, block_size, kv_heads, head_dim):
    """Random key / value pools and their scales (None for fp16)."""
    shape = (num_blocks, block_size, kv_heads, head_dim)
    scale_shape = shape[:3]
    if dtype == "fp16":
        return (rng.standard_normal(shape).astype(np.float16), rng.standard_normal(shape).astype(np.float16),
                None, None)
    if dtype == "int8":
        key, value = (rng.integers(-128, 128, shape, dtype=np.int8) for _ in range(2))
    else:
        key, value = (qgemm.fp8(ref.random_fp8_codes(rng, shape)) for _ in range(2))
    key_scale, value_scale = (rng.uniform(0.002, 0.02, scale_shape).astype(np.float32) for _ in range(2))
    return key, value, key_scale, value_scale


def shuffled_tables(rng, seq_lens, block_size, num_blocks, max_blocks, spare=None):
    """Each sequence gets distinct blocks in random order; entries past a sequence's blocks hold `spare`
    (default: an out-of-range id, which must never be read)."""
    needed = [(max(int(n), 0) + block_size - 1) // block_size for n in seq_lens]
    assert sum(needed) <= num_blocks and max(needed) <= max_blocks
    pool = rng.permutation(num_blocks)
    tables = np.full((len(seq_lens), max_blocks), num_blocks + 7 if spare is None else spare, np.int32)
    at = 0
    for s, n in enumerate(needed):
        tables[s, :n] = pool[at:at + n]
        at += n
    return tables


def attend(query, key, value, key_scale, value_scale, tables, seq_lens, dtype, softmax_scale=None, **kwargs):
    out = qgemm.paged_attention_decode(query, key, value, tables, seq_lens, softmax_scale, key_scale, value_scale,
                                       **kwargs)
    scale = np.float32(1 / math.sqrt(query.shape[-1]) if softmax_scale is None else softmax_scale)
    k_hat, v_hat = dequantized(key, key_scale, dtype), dequantized(value, value_scale, dtype)
    expected = attention_reference(query, k_hat, v_hat, tables, seq_lens, scale)
    assert_attention_close(out, expected, query, k_hat, v_hat, seq_lens, scale)
    return out, expected


# ---- paged_attention_decode --------------------------------------------------

@pytest.mark.parametrize("dtype", CACHE_DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_decode_gqa_shuffled_blocks(rng, dtype, head_dim):
    # GQA (8 query heads on 2 kv heads), blocks in random order, lengths 0, 1, a block exactly, odd ones.
    block_size, kv_heads, q_heads = 16, 2, 8
    seq_lens = np.int32([0, 1, 16, 37, 70, 5])
    num_blocks, max_blocks = 16, 6
    key, value, key_scale, value_scale = make_cache(rng, dtype, num_blocks, block_size, kv_heads, head_dim)
    tables = shuffled_tables(rng, seq_lens, block_size, num_blocks, max_blocks)
    query = rng.standard_normal((len(seq_lens), q_heads, head_dim)).astype(np.float16)
    out, expected = attend(query, key, value, key_scale, value_scale, tables, seq_lens, dtype)
    assert out.dtype == np.float16 and out.shape == query.shape
    np.testing.assert_array_equal(out[0], 0)  # L = 0: zeros
    assert np.isfinite(out).all()


@pytest.mark.parametrize("dtype", CACHE_DTYPES)
def test_decode_strided_query_table_and_out(rng, dtype):
    # query: the q slice of a fused qkv projection; block_tables: the first columns of a wider table; out=:
    # a strided view, written in place (its gaps untouched); an explicit softmax_scale.
    block_size, kv_heads, q_heads, head_dim = 8, 1, 4, 64
    seq_lens = np.int32([9, 24, 3])
    key, value, key_scale, value_scale = make_cache(rng, dtype, 12, block_size, kv_heads, head_dim)
    wide = np.full((3, 10), -1, np.int32)
    wide[:, :4] = shuffled_tables(rng, seq_lens, block_size, 12, 4)
    qkv = rng.standard_normal((3, (q_heads + 2 * kv_heads) * head_dim)).astype(np.float16)
    query = qkv.reshape(3, q_heads + 2 * kv_heads, head_dim)[:, :q_heads]
    backing = np.full((3, q_heads, 2 * head_dim), 7, np.float16)
    out = backing[:, :, :head_dim]
    result, _ = attend(query, key, value, key_scale, value_scale, wide[:, :4], seq_lens, dtype, softmax_scale=0.3,
                       out=out)
    assert result is out
    np.testing.assert_array_equal(backing[:, :, head_dim:], 7)


def test_decode_peaked_softmax(rng):
    # Logits in the hundreds (keys scaled up): the max subtraction keeps exp finite and the softmax nearly
    # one-hot; the result is still the reference's within the bound.
    block_size, head_dim = 16, 128
    key, value, key_scale, value_scale = make_cache(rng, "int8", 4, block_size, 1, head_dim)
    key_scale *= 50
    seq_lens = np.int32([40])
    tables = shuffled_tables(rng, seq_lens, block_size, 4, 3)
    query = rng.standard_normal((1, 4, head_dim)).astype(np.float16)
    attend(query, key, value, key_scale, value_scale, tables, seq_lens, "int8", softmax_scale=1.0)


@pytest.mark.parametrize("dtype", CACHE_DTYPES)
def test_decode_bad_rows_give_nan(rng, dtype):
    # A block id out of range among the first ceil(L / block_size) entries (num_blocks, −1), a negative length
    # and a length beyond the table row give NaN for that sequence only; an out-of-range id past the used
    # entries is never read.
    block_size, kv_heads, q_heads, head_dim, num_blocks = 16, 2, 8, 64, 12
    seq_lens = np.int32([20, 20, 33, 5, 20, 10])
    key, value, key_scale, value_scale = make_cache(rng, dtype, num_blocks, block_size, kv_heads, head_dim)
    tables = shuffled_tables(rng, [20, 20, 33, 5, 0, 10], block_size, num_blocks, 3)
    tables[0, 1] = num_blocks  # the second of two used blocks
    tables[1, 0] = -1
    seq_lens[3] = -1
    seq_lens[4] = 3 * block_size + 1  # beyond max_blocks · block_size
    tables[5, 1:] = 1 << 30  # unused entries: ignored
    query = rng.standard_normal((6, q_heads, head_dim)).astype(np.float16)
    out, _ = attend(query, key, value, key_scale, value_scale, tables, seq_lens, dtype)
    assert np.isnan(out[[0, 1, 3, 4]].astype(np.float32)).all()
    assert np.isfinite(out[[2, 5]]).all()


def test_decode_workspace_on_the_cpu(rng):
    # A long max_seq_len asks for a workspace (the CUDA split); the CPU computes unsplit, so the same bits
    # with or without one; too small a workspace is refused.
    block_size, kv_heads, q_heads, head_dim = 16, 2, 8, 64
    seq_lens = np.int32([700, 1, 0])
    num_blocks, max_blocks = 48, 44
    key, value, key_scale, value_scale = make_cache(rng, "int8", num_blocks, block_size, kv_heads, head_dim)
    tables = shuffled_tables(rng, seq_lens, block_size, num_blocks, max_blocks)
    query = rng.standard_normal((3, q_heads, head_dim)).astype(np.float16)
    plain, _ = attend(query, key, value, key_scale, value_scale, tables, seq_lens, "int8", max_seq_len=700)
    size = qgemm.paged_attention_workspace_bytes(3, q_heads, head_dim, 700)
    assert size > 0
    assert qgemm.paged_attention_workspace_bytes(3, q_heads, head_dim, 1) == 0
    workspace = np.full(size, 0xAB, np.uint8)
    split = qgemm.paged_attention_decode(query, key, value, tables, seq_lens, None, key_scale, value_scale, 700,
                                         workspace=workspace)
    np.testing.assert_array_equal(split, plain)
    # max_seq_len 0 means the table's capacity, 44 · 16 tokens: the workspace for that.
    capacity = qgemm.paged_attention_workspace_bytes(3, q_heads, head_dim, max_blocks * block_size)
    full = qgemm.paged_attention_decode(query, key, value, tables, seq_lens, None, key_scale, value_scale,
                                        workspace=np.zeros(capacity, np.uint8))
    np.testing.assert_array_equal(full, plain)
    with pytest.raises(ValueError, match=r"^workspace: needs at least paged_attention_workspace_bytes"):
        qgemm.paged_attention_decode(query, key, value, tables, seq_lens, None, key_scale, value_scale, 700,
                                     workspace=np.zeros(size - 1, np.uint8))


# ---- kv_cache_write ----------------------------------------------------------

def empty_cache(dtype, num_blocks, block_size, kv_heads, head_dim):
    """A cache filled with a sentinel (codes 0x55, scales −1), to see which slots a write touched."""
    shape = (num_blocks, block_size, kv_heads, head_dim)
    if dtype == "fp16":
        return np.full(shape, -3.0, np.float16), np.full(shape, -3.0, np.float16), None, None
    if dtype == "int8":
        key, value = np.full(shape, 0x55, np.int8), np.full(shape, 0x55, np.int8)
    else:
        key, value = qgemm.fp8(np.full(shape, 0x55, np.uint8)), qgemm.fp8(np.full(shape, 0x55, np.uint8))
    return key, value, np.full(shape[:3], -1, np.float32), np.full(shape[:3], -1, np.float32)


def quantized_head(x, dtype):
    """qgemm.quantize's dynamic symmetric per-token formula on one [1, head_dim] head vector: (codes, scale)."""
    q, scale, _ = qgemm.quantize(x[None, :], dtype=dtype, mode="per_token")
    return codes_of(q)[0], scale[0, 0]


def check_written(cache, scales, source, slot_mapping, dtype):
    """Slots named by slot_mapping hold source[t] (quantized as qgemm.quantize does); every other slot kept
    its sentinel."""
    codes = codes_of(cache)
    num_blocks, block_size, kv_heads, _ = codes.shape
    written = np.zeros((num_blocks, block_size), bool)
    for t, slot in enumerate(np.asarray(slot_mapping).astype(np.int64)):
        if slot < 0 or slot >= num_blocks * block_size:
            continue
        b, o = divmod(int(slot), block_size)
        written[b, o] = True
        for h in range(kv_heads):
            if dtype == "fp16":
                np.testing.assert_array_equal(codes[b, o, h], source[t, h])
            else:
                expected_codes, expected_scale = quantized_head(source[t, h], dtype)
                np.testing.assert_array_equal(codes[b, o, h], expected_codes)
                assert scales[b, o, h] == expected_scale  # bit-identical (both fp32)
    sentinel = -3.0 if dtype == "fp16" else 0x55
    assert np.all(codes[~written] == np.asarray(sentinel).astype(codes.dtype))
    if scales is not None:
        assert np.all(scales[~written] == -1)


@pytest.mark.parametrize("dtype", CACHE_DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_write_strided_qkv_and_padding(rng, dtype, index_dtype):
    # key / value: slices of a fused qkv projection (token stride (q + 2·kv)·head_dim, head stride head_dim);
    # slot −1 (padding) and a slot past the pool are skipped; some rows all zero (scale 1, codes 0) and some
    # with a large range.
    num_blocks, block_size, kv_heads, q_heads, head_dim, tokens = 6, 16, 2, 8, 64, 11
    key_cache, value_cache, key_scale, value_scale = empty_cache(dtype, num_blocks, block_size, kv_heads, head_dim)
    qkv = (rng.standard_normal((tokens, (q_heads + 2 * kv_heads) * head_dim))
           * rng.uniform(0.01, 30, (tokens, 1))).astype(np.float16)
    heads = qkv.reshape(tokens, q_heads + 2 * kv_heads, head_dim)
    key, value = heads[:, q_heads:q_heads + kv_heads], heads[:, q_heads + kv_heads:]
    assert key.strides == ((q_heads + 2 * kv_heads) * head_dim * 2, head_dim * 2, 2)
    key[2, 1] = 0
    slots = rng.permutation(num_blocks * block_size)[:tokens].astype(index_dtype)
    slots[3], slots[7] = -1, num_blocks * block_size
    assert qgemm.kv_cache_write(key_cache, value_cache, key, value, slots, key_scale, value_scale) is None
    check_written(key_cache, key_scale, key, slots, dtype)
    check_written(value_cache, value_scale, value, slots, dtype)
    if dtype != "fp16":
        b, o = divmod(int(slots[2]), block_size)
        assert key_scale[b, o, 1] == 1 and np.all(codes_of(key_cache)[b, o, 1] == 0)


@pytest.mark.parametrize("dtype", ["int8", "fp8e4m3"])
def test_write_then_decode(rng, dtype):
    # A prefill of three sequences token by token into shuffled blocks, then one decode step: the result is
    # the attention over the written cache (its codes · scales), close to the unquantized attention.
    num_blocks, block_size, kv_heads, q_heads, head_dim = 10, 16, 2, 8, 128
    seq_lens = np.int32([17, 40, 16])
    tables = shuffled_tables(rng, seq_lens, block_size, num_blocks, 4, spare=0)
    key_cache, value_cache, key_scale, value_scale = empty_cache(dtype, num_blocks, block_size, kv_heads, head_dim)
    keys = [rng.standard_normal((n, kv_heads, head_dim)).astype(np.float16) for n in seq_lens]
    values = [rng.standard_normal((n, kv_heads, head_dim)).astype(np.float16) for n in seq_lens]
    slots = [np.int64(tables[s, j // block_size]) * block_size + j % block_size
             for s, n in enumerate(seq_lens) for j in range(n)]
    qgemm.kv_cache_write(key_cache, value_cache, np.concatenate(keys), np.concatenate(values), np.array(slots),
                         key_scale, value_scale)
    query = rng.standard_normal((3, q_heads, head_dim)).astype(np.float16)
    out, _ = attend(query, key_cache, value_cache, key_scale, value_scale, tables, seq_lens, dtype)
    # The unquantized attention, through a 16-bit cache written the same way.
    k16, v16, _, _ = empty_cache("fp16", num_blocks, block_size, kv_heads, head_dim)
    qgemm.kv_cache_write(k16, v16, np.concatenate(keys), np.concatenate(values), np.array(slots))
    exact, _ = attend(query, k16, v16, None, None, tables, seq_lens, "fp16")
    tolerance = 0.05 if dtype == "int8" else 0.15  # quantization error of the cache (4 / 3 significant bits)
    assert np.abs(out.astype(np.float64) - exact.astype(np.float64)).max() < tolerance


# ---- errors ------------------------------------------------------------------

@pytest.fixture
def small(rng):
    key, value, key_scale, value_scale = make_cache(rng, "int8", 4, 16, 2, 64)
    query = rng.standard_normal((2, 4, 64)).astype(np.float16)
    tables = np.int32([[0, 1], [2, 3]])
    seq_lens = np.int32([20, 3])
    return query, key, value, key_scale, value_scale, tables, seq_lens


def test_decode_errors(small):
    query, key, value, key_scale, value_scale, tables, seq_lens = small
    with pytest.raises(ValueError, match=r"^cache.key_scale: a int8 cache needs its fp32 scales"):
        qgemm.paged_attention_decode(query, key, value, tables, seq_lens)
    with pytest.raises(ValueError, match=r"^cache.key_scale: a fp16 cache holds values, not codes"):
        qgemm.paged_attention_decode(query, key.astype(np.float16), value.astype(np.float16), tables, seq_lens,
                                     key_scale=key_scale, value_scale=value_scale)
    with pytest.raises(TypeError, match=r"^block_tables: expected dtype int32"):
        qgemm.paged_attention_decode(query, key, value, tables.astype(np.int64), seq_lens, None, key_scale,
                                     value_scale)
    with pytest.raises(TypeError, match=r"^block_tables: expected an array supporting DLPack"):
        qgemm.paged_attention_decode(query, key, value, [[0, 1], [2, 3]], seq_lens, None, key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^query: expected q_heads a positive multiple of the cache's kv_heads=2"):
        qgemm.paged_attention_decode(query[:, :3], key, value, tables, seq_lens, None, key_scale, value_scale)
    with pytest.raises(TypeError, match=r"^query: "):
        qgemm.paged_attention_decode(query.astype(np.float32), key, value, tables, seq_lens, None, key_scale,
                                     value_scale, out=np.empty(query.shape, np.float16))
    with pytest.raises(ValueError, match=r"^cache.key: paged_attention_decode takes head_dim 64, 128 or 256, got 32"):
        qgemm.paged_attention_decode(query[..., :32], key[..., :32].copy(), value[..., :32].copy(), tables, seq_lens,
                                     None, key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^seq_lens: expected shape \[S=2\]"):
        qgemm.paged_attention_decode(query, key, value, tables, seq_lens[:1], None, key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^softmax_scale: expected a finite value"):
        qgemm.paged_attention_decode(query, key, value, tables, seq_lens, float("inf"), key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^max_seq_len: expected >= 0"):
        qgemm.paged_attention_decode(query, key, value, tables, seq_lens, None, key_scale, value_scale, -1)
    with pytest.raises(ValueError, match=r"^cache.value_scale: expected a contiguous tensor"):
        qgemm.paged_attention_decode(query, key, value, tables, seq_lens, None, key_scale,
                                     np.ascontiguousarray(value_scale.transpose(2, 1, 0)).transpose(2, 1, 0))
    with pytest.raises(ValueError, match=r"^paged_attention_workspace_bytes: expected sizes >= 0"):
        qgemm.paged_attention_workspace_bytes(-1, 4, 64, 100)


def test_write_errors(small):
    _, key_cache, value_cache, key_scale, value_scale, _, _ = small
    rng = np.random.default_rng(0)
    key = rng.standard_normal((3, 2, 64)).astype(np.float16)
    slots = np.int32([0, 5, 9])
    with pytest.raises(TypeError, match=r"^slot_mapping: expected dtype int32 or int64"):
        qgemm.kv_cache_write(key_cache, value_cache, key, key, slots.astype(np.float32), key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^slot_mapping: expected shape \[T=3\]"):
        qgemm.kv_cache_write(key_cache, value_cache, key, key, slots[:2], key_scale, value_scale)
    with pytest.raises(TypeError, match=r"^key: "):
        qgemm.kv_cache_write(key_cache, value_cache, key.astype(np.float32), key.astype(np.float32), slots, key_scale,
                             value_scale)
    with pytest.raises(ValueError, match=r"^value: expected shape \[T=3, kv_heads=2, head_dim=64\]"):
        qgemm.kv_cache_write(key_cache, value_cache, key, key[:, :1], slots, key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^key: expected contiguous head vectors"):
        wide = rng.standard_normal((3, 2, 128)).astype(np.float16)
        qgemm.kv_cache_write(key_cache, value_cache, wide[..., ::2], key, slots, key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^cache.value_scale: a int8 cache needs its fp32 scales"):
        qgemm.kv_cache_write(key_cache, value_cache, key, key, slots, key_scale)
    with pytest.raises(ValueError, match=r"^cache.value: expected the shape of cache.key"):
        qgemm.kv_cache_write(key_cache, value_cache[:2], key, key, slots, key_scale, value_scale)
    with pytest.raises(ValueError, match=r"^cache.key: expected a contiguous tensor"):
        qgemm.kv_cache_write(key_cache[:, ::2], value_cache[:, ::2], key, key, slots, key_scale[:, ::2],
                             value_scale[:, ::2])
    with pytest.raises(TypeError, match=r"^cache.key: expected dtype"):
        qgemm.kv_cache_write(key_cache.astype(np.float32), value_cache.astype(np.float32), key, key, slots)
