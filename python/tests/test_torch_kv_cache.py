"""PyTorch: the paged KV cache ops (qgemm/kv_cache.h) as torch.ops.qgemm
custom operators. CPU tensors (bf16 too, which NumPy lacks) against the
float64 reference of test_kv_cache_numpy.py; CUDA tensors against the CPU
backend (kv_cache_write bit for bit, paged_attention_decode within the
summation-order bound below); opcheck, torch.compile and a CUDA graph."""

import math

import pytest

torch = pytest.importorskip("torch")
import numpy as np  # noqa: E402
from test_kv_cache_numpy import attention_reference  # noqa: E402

import qgemm  # noqa: E402

cuda = pytest.mark.skipif(not (torch.cuda.is_available() and qgemm.built_with_cuda()),
                          reason="needs a CUDA GPU and a CUDA build of qgemm")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]
FP8 = torch.float8_e4m3fn
CACHES = [torch.int8, FP8, "16-bit"]
DTYPES = [torch.bfloat16, torch.float16]
# One 16-bit ulp relative to the value: 2⁻⁷ for bf16 (8 significant bits), 2⁻¹⁰ for fp16 (11).
ULP = {torch.bfloat16: 2.0**-7, torch.float16: 2.0**-10}


def raw(t):
    """A tensor's bytes as an integer tensor on the CPU, for bit-for-bit comparisons (fp8 included)."""
    t = t.cpu()
    if t.dtype in (FP8, torch.int8):
        return t.view(torch.uint8)
    return t.view(torch.int16) if t.element_size() == 2 else t.view(torch.int32)


def random_cache(g, kind, dtype, num_blocks, block_size, kv_heads, head_dim):
    """Random pools (every int8 code; every finite fp8 code) and their scales; no scales for 16 bits."""
    shape = (num_blocks, block_size, kv_heads, head_dim)
    if kind == "16-bit":
        return torch.randn(shape, generator=g).to(dtype), torch.randn(shape, generator=g).to(dtype), None, None
    pools = []
    for _ in range(2):
        if kind == torch.int8:
            pools.append(torch.randint(-128, 128, shape, dtype=torch.int8, generator=g))
        else:
            codes = torch.randint(0, 0x7F, shape, dtype=torch.uint8, generator=g)  # 0x7F / 0xFF are NaN
            pools.append((codes | (torch.randint(0, 2, shape, dtype=torch.uint8, generator=g) << 7)).view(FP8))
    top = 0.02 if kind == torch.int8 else 0.02 / 448 * 127  # |k̂| up to ~2.5 either way
    scales = [torch.rand(shape[:3], generator=g) * top + 1e-4 for _ in range(2)]
    return pools[0], pools[1], scales[0], scales[1]


def dequantized(pool, scale):
    """k̂ = code · scale in float64 (the values themselves for a 16-bit cache)."""
    values = pool.double()
    return values if scale is None else values * scale.double()[..., None]


def shuffled_tables(g, seq_lens, block_size, num_blocks, max_blocks):
    """Distinct blocks per sequence in random order; unused entries out of range (never read)."""
    needed = [(max(n, 0) + block_size - 1) // block_size for n in seq_lens]
    assert sum(needed) <= num_blocks and max(needed) <= max_blocks
    order = torch.randperm(num_blocks, generator=g)
    tables = torch.full((len(seq_lens), max_blocks), num_blocks + 5, dtype=torch.int32)
    at = 0
    for s, n in enumerate(needed):
        tables[s, :n] = order[at:at + n]
        at += n
    return tables


def decode_problem(seed, kind, dtype, seq_lens, head_dim, block_size=16, kv_heads=2, group=4):
    """One decode step on the CPU: query the q slice of a fused qkv array, random pools, shuffled tables."""
    g = torch.Generator().manual_seed(seed)
    blocks = [(max(n, 0) + block_size - 1) // block_size for n in seq_lens]
    num_blocks, max_blocks = sum(blocks) + 3, max(blocks) + 1
    pools = random_cache(g, kind, dtype, num_blocks, block_size, kv_heads, head_dim)
    tables = shuffled_tables(g, seq_lens, block_size, num_blocks, max_blocks)
    q_heads = group * kv_heads
    qkv = torch.randn(len(seq_lens), (q_heads + 2 * kv_heads) * head_dim, generator=g).to(dtype)
    query = qkv.view(len(seq_lens), q_heads + 2 * kv_heads, head_dim)[:, :q_heads]
    return query, pools, tables, torch.tensor(seq_lens, dtype=torch.int32)


def decode(device, query, pools, tables, seq_lens, **kwargs):
    key, value, key_scale, value_scale = (None if t is None else t.to(device) for t in pools)
    return qgemm.paged_attention_decode(query.to(device), key, value, tables.to(device), seq_lens.to(device),
                                        key_scale=key_scale, value_scale=value_scale, **kwargs)


def assert_cpu_matches_reference(out, query, pools, tables, seq_lens, softmax_scale):
    # The float64 reference rounded to out's dtype is half a 16-bit ulp away, and the CPU's fp32 sums add far
    # less than another half: within |ref|·u + 1e-5·max|v̂| (u the dtype's ulp relative to the value).
    key, value, key_scale, value_scale = pools
    v_hat = dequantized(value, value_scale)
    expected = torch.from_numpy(attention_reference(
        query.double().numpy(), dequantized(key, key_scale).numpy(), v_hat.numpy(), tables.numpy(), seq_lens.numpy(),
        np.float32(softmax_scale)))
    assert torch.equal(out.double().isnan(), expected.isnan())
    finite = ~expected.isnan()
    bound = expected.abs() * ULP[out.dtype] + 1e-5 * v_hat.abs().max().item()
    assert ((out.double() - expected).abs() <= bound)[finite].all()


def assert_gpu_close(gpu, cpu, v_hat):
    # |gpu − cpu| ≤ |cpu|·u + 1e-5·max|v̂|: both backends compute in fp32, but in a different summation order
    # (the GPU over threads and warps, and over partitions when split) and with a different exp, so their fp32
    # results differ by a few fp32 ulps of max|v̂|; rounding those to 16 bits can then land one 16-bit ulp
    # apart (u = 2⁻⁷ for bf16, 2⁻¹⁰ for fp16). NaN exactly where the CPU has NaN.
    assert gpu.device.type == "cuda" and gpu.dtype == cpu.dtype and gpu.shape == cpu.shape
    g, c = gpu.cpu().double(), cpu.double()
    assert torch.equal(g.isnan(), c.isnan())
    finite = ~c.isnan()
    bound = c.abs() * ULP[cpu.dtype] + 1e-5 * v_hat.abs().max().item()
    excess = ((g - c).abs() - bound)[finite]
    assert excess.numel() == 0 or excess.max().item() <= 0, f"max excess over the bound: {excess.max().item()}"


def test_registered():
    assert qgemm.torch_ops_registered
    for name in ("kv_cache_write", "paged_attention_decode", "paged_attention_decode_out"):
        assert hasattr(torch.ops.qgemm, name)


# ---- paged_attention_decode --------------------------------------------------

@pytest.mark.parametrize("kind", CACHES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_decode_cpu_against_reference(kind, dtype, head_dim):
    # GQA (8 query heads on 2 kv heads), shuffled blocks, lengths 0, 1, a block, odd ones.
    query, pools, tables, seq_lens = decode_problem(0, kind, dtype, [0, 1, 16, 37, 90], head_dim)
    out = decode("cpu", query, pools, tables, seq_lens)
    assert out.dtype == dtype and out.shape == query.shape
    assert torch.equal(out[0], torch.zeros_like(out[0]))
    assert_cpu_matches_reference(out, query, pools, tables, seq_lens, 1 / math.sqrt(head_dim))


@cuda
@pytest.mark.parametrize("kind", CACHES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_decode_cuda_against_cpu(kind, dtype, head_dim):
    query, pools, tables, seq_lens = decode_problem(1, kind, dtype, [0, 1, 16, 37, 90, 300, 5], head_dim)
    cpu = decode("cpu", query, pools, tables, seq_lens)
    gpu = decode("cuda", query, pools, tables, seq_lens)
    assert_gpu_close(gpu, cpu, dequantized(pools[1], pools[3]))


@cuda
@pytest.mark.parametrize("kind", CACHES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_decode_cuda_split_with_workspace(kind, dtype, head_dim):
    # Sequences longer than max_seq_len's partitions with a workspace (flash-decoding's split over CTAs and the
    # combine), next to short ones and an empty one: as close to the CPU as the unsplit kernel; without a
    # workspace the same sequences run unsplit; the same bits from call to call.
    lengths = [2000, 0, 513, 1, 1024, 77]
    query, pools, tables, seq_lens = decode_problem(2, kind, dtype, lengths, head_dim)
    cpu = decode("cpu", query, pools, tables, seq_lens)
    max_len = max(lengths)
    size = qgemm.paged_attention_workspace_bytes(len(lengths), query.shape[1], head_dim, max_len)
    assert size > 0
    workspace = torch.full((size,), 0xAB, dtype=torch.uint8, device="cuda")
    split = decode("cuda", query, pools, tables, seq_lens, max_seq_len=max_len, workspace=workspace)
    again = decode("cuda", query, pools, tables, seq_lens, max_seq_len=max_len, workspace=workspace)
    unsplit = decode("cuda", query, pools, tables, seq_lens, max_seq_len=max_len)
    v_hat = dequantized(pools[1], pools[3])
    assert_gpu_close(split, cpu, v_hat)
    assert_gpu_close(unsplit, cpu, v_hat)
    assert torch.equal(raw(split), raw(again))
    # max_seq_len is a hint: a smaller one still attends every token.
    hinted = decode("cuda", query, pools, tables, seq_lens, max_seq_len=600,
                    workspace=torch.empty(qgemm.paged_attention_workspace_bytes(len(lengths), query.shape[1],
                                                                               head_dim, 600),
                                          dtype=torch.uint8, device="cuda"))
    assert_gpu_close(hinted, cpu, v_hat)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", CACHES)
def test_decode_bad_rows_give_nan(device, kind):
    # A block id out of range among the used entries, −1, a negative length, a length beyond the table row:
    # NaN for that sequence only, on both backends; the others as on the CPU.
    query, pools, tables, seq_lens = decode_problem(3, kind, torch.bfloat16, [40, 40, 40, 3, 20, 600], 128)
    num_blocks = pools[0].shape[0]
    tables[0, 2] = num_blocks
    tables[1, 0] = -1
    seq_lens[2] = -5
    seq_lens[4] = tables.shape[1] * 16 + 1
    out = decode(device, query, pools, tables, seq_lens)
    nan = out.float().isnan().flatten(1).all(1).cpu()
    assert nan.tolist() == [True, True, True, False, True, False]
    assert not out[[3, 5]].float().isnan().any()
    cpu = decode("cpu", query, pools, tables, seq_lens)
    if device == "cuda":
        assert_gpu_close(out, cpu, dequantized(pools[1], pools[3]))
        workspace = torch.empty(qgemm.paged_attention_workspace_bytes(6, query.shape[1], 128, 600),
                                dtype=torch.uint8, device="cuda")
        split = decode(device, query, pools, tables, seq_lens, max_seq_len=600, workspace=workspace)
        assert_gpu_close(split, cpu, dequantized(pools[1], pools[3]))
    else:
        assert_cpu_matches_reference(out, query, pools, tables, seq_lens, 1 / math.sqrt(128))


@pytest.mark.parametrize("device", DEVICES)
def test_decode_out_and_explicit_scale(device):
    # out= (written in place, also with a workspace through the _out op) and an explicit softmax_scale.
    query, pools, tables, seq_lens = decode_problem(4, torch.int8, torch.float16, [5, 700], 64)
    expected = decode(device, query, pools, tables, seq_lens, softmax_scale=0.25)
    out = torch.empty(query.shape, dtype=query.dtype, device=device)
    assert decode(device, query, pools, tables, seq_lens, softmax_scale=0.25, out=out) is out
    assert torch.equal(raw(out), raw(expected))
    workspace = torch.empty(qgemm.paged_attention_workspace_bytes(2, 8, 64, 700), dtype=torch.uint8, device=device)
    with_workspace = decode(device, query, pools, tables, seq_lens, softmax_scale=0.25, max_seq_len=700,
                            workspace=workspace)
    if device == "cpu":
        assert torch.equal(raw(with_workspace), raw(expected))
        assert_cpu_matches_reference(expected, query, pools, tables, seq_lens, 0.25)
    else:
        cpu = decode("cpu", query, pools, tables, seq_lens, softmax_scale=0.25)
        assert_gpu_close(with_workspace, cpu, dequantized(pools[1], pools[3]))


# ---- kv_cache_write ----------------------------------------------------------

def sentinel_cache(kind, dtype, num_blocks, block_size, kv_heads, head_dim, device):
    """A cache whose every byte is a sentinel, to see the slots a write touches."""
    shape = (num_blocks, block_size, kv_heads, head_dim)
    if kind == "16-bit":
        return [torch.full(shape, -3.0, dtype=dtype, device=device) for _ in range(2)] + [None, None]
    pools = [torch.full(shape, 0x55, dtype=torch.uint8, device=device) for _ in range(2)]
    pools = [p.view(FP8) if kind == FP8 else p.view(torch.int8) for p in pools]
    return pools + [torch.full(shape[:3], -1.0, device=device) for _ in range(2)]


def write_problem(seed, dtype, tokens, kv_heads=2, q_heads=8, head_dim=128, slots=64):
    """key / value: slices of a fused qkv [T, (q + 2·kv)·head_dim] (rows of very different ranges, one head
    vector all zero); slot_mapping: distinct slots with −1 padding and one past the pool."""
    g = torch.Generator().manual_seed(seed)
    qkv = torch.randn(tokens, (q_heads + 2 * kv_heads) * head_dim, generator=g) * (torch.rand(tokens, 1, generator=g)
                                                                                 * 30 + 0.01)
    heads = qkv.to(dtype).view(tokens, q_heads + 2 * kv_heads, head_dim)
    heads[1, q_heads] = 0
    slot_mapping = torch.randperm(slots, generator=g)[:tokens]
    slot_mapping[2], slot_mapping[-1] = -1, slots
    return heads[:, q_heads:q_heads + kv_heads], heads[:, q_heads + kv_heads:], slot_mapping


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", [torch.int8, FP8])
@pytest.mark.parametrize("dtype", DTYPES)
def test_write_matches_quantize(device, kind, dtype):
    # Every written head vector holds qgemm.quantize's per-token codes and scale of that [1, head_dim] vector,
    # bit for bit; padding (−1) and out-of-pool slots leave the sentinel.
    key, value, slot_mapping = write_problem(5, dtype, 12)
    cache = sentinel_cache(kind, dtype, 4, 16, 2, 128, device)
    qgemm.kv_cache_write(cache[0], cache[1], key.to(device), value.to(device), slot_mapping.to(device), cache[2],
                         cache[3])
    written = torch.zeros(64, dtype=torch.bool)
    for pool, scales, source in ((cache[0], cache[2], key), (cache[1], cache[3], value)):
        pool, scales = pool.cpu().flatten(0, 1), scales.cpu().flatten(0, 1)
        for t, slot in enumerate(slot_mapping.tolist()):
            if not 0 <= slot < 64:
                continue
            written[slot] = True
            for h in range(2):
                q, s, _ = qgemm.quantize(source[t, h][None].to(device), dtype=kind)
                assert torch.equal(raw(pool[slot, h]), raw(q[0])) and torch.equal(scales[slot, h], s.cpu()[0, 0])
        assert (raw(pool[~written]) == 0x55).all() and (scales[~written] == -1).all()
    assert written.sum() == 10


@cuda
@pytest.mark.parametrize("kind", CACHES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_write_cuda_equals_cpu(kind, dtype, index_dtype):
    # CPU and CUDA codes and scales are bit-identical (qgemm/kv_cache.h); the untouched slots too.
    key, value, slot_mapping = write_problem(6, dtype, 40, slots=256)
    slot_mapping = slot_mapping.to(index_dtype)
    results = []
    for device in ("cpu", "cuda"):
        cache = sentinel_cache(kind, dtype, 16, 16, 2, 128, device)
        qgemm.kv_cache_write(cache[0], cache[1], key.to(device), value.to(device), slot_mapping.to(device),
                             cache[2], cache[3])
        results.append(cache)
    for cpu, gpu in zip(*results):
        if cpu is not None:
            assert torch.equal(raw(gpu), raw(cpu))


@cuda
@pytest.mark.parametrize("kind", CACHES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_write_then_decode_cuda(kind, dtype):
    # A prefill written token by token into shuffled blocks on both backends, then one decode step.
    g = torch.Generator().manual_seed(7)
    lengths, block_size, kv_heads, head_dim = [33, 0, 160, 16], 16, 2, 128
    num_blocks = 20
    tables = shuffled_tables(g, lengths, block_size, num_blocks, 11)
    slot_mapping = torch.tensor([int(tables[s, j // block_size]) * block_size + j % block_size
                                 for s, n in enumerate(lengths) for j in range(n)])
    key = torch.randn(len(slot_mapping), kv_heads, head_dim, generator=g).to(dtype)
    value = torch.randn(len(slot_mapping), kv_heads, head_dim, generator=g).to(dtype)
    query = torch.randn(len(lengths), 4 * kv_heads, head_dim, generator=g).to(dtype)
    seq_lens = torch.tensor(lengths, dtype=torch.int32)
    outs, caches = [], []
    for device in ("cpu", "cuda"):
        cache = sentinel_cache(kind, dtype, num_blocks, block_size, kv_heads, head_dim, device)
        qgemm.kv_cache_write(cache[0], cache[1], key.to(device), value.to(device), slot_mapping.to(device), cache[2],
                             cache[3])
        outs.append(decode(device, query, cache, tables, seq_lens))
        caches.append(cache)
    v_hat = dequantized(caches[0][1], caches[0][3]).flatten(0, 1)[slot_mapping]  # the written slots only
    assert_gpu_close(outs[1], outs[0], v_hat)
    for cpu, gpu in zip(*caches):
        if cpu is not None:
            assert torch.equal(raw(gpu), raw(cpu))


# ---- torch.library: opcheck, torch.compile, CUDA graphs --------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", [torch.int8, "16-bit"])
def test_opcheck(device, kind):
    query, pools, tables, seq_lens = decode_problem(8, kind, torch.bfloat16, [20, 600], 64)
    key_cache, value_cache, key_scale, value_scale = (None if t is None else t.to(device) for t in pools)
    query, tables, seq_lens = query.to(device), tables.to(device), seq_lens.to(device)
    key, value, slot_mapping = write_problem(9, torch.bfloat16, 6, head_dim=64, slots=16)
    key, value, slot_mapping = key.to(device), value.to(device), slot_mapping.to(device)
    out = torch.empty(query.shape, dtype=query.dtype, device=device)
    workspace = torch.empty(qgemm.paged_attention_workspace_bytes(2, 8, 64, 600), dtype=torch.uint8, device=device)
    ops = torch.ops.qgemm
    cases = [
        (ops.paged_attention_decode, (query, key_cache, value_cache, key_scale, value_scale, tables, seq_lens,
                                      0.125, 0)),
        (ops.paged_attention_decode_out, (out, query, key_cache, value_cache, key_scale, value_scale, tables,
                                          seq_lens, 0.125, 600, workspace)),
        (ops.paged_attention_decode_out, (out, query, key_cache, value_cache, key_scale, value_scale, tables,
                                          seq_lens, 0.125, 0, None)),
        (ops.kv_cache_write, (key_cache, value_cache, key_scale, value_scale, key, value, slot_mapping)),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))


def decode_step(key, value, slot_mapping, query, key_cache, value_cache, key_scale, value_scale, tables, seq_lens):
    """Append this step's key / value to the cache, then attend over it."""
    qgemm.kv_cache_write(key_cache, value_cache, key, value, slot_mapping, key_scale, value_scale)
    return qgemm.paged_attention_decode(query, key_cache, value_cache, tables, seq_lens, None, key_scale,
                                        value_scale)


def step_inputs(device, kind=torch.int8):
    """A decode step of 3 sequences of lengths 20, 7, 33 (this step's token last)."""
    g = torch.Generator().manual_seed(10)
    lengths, block_size, head_dim = [20, 7, 33], 16, 64
    query, pools, tables, seq_lens = decode_problem(11, kind, torch.bfloat16, lengths, head_dim)
    slot_mapping = torch.tensor([int(tables[s, (n - 1) // block_size]) * block_size + (n - 1) % block_size
                                 for s, n in enumerate(lengths)])
    key = torch.randn(3, 2, head_dim, generator=g).bfloat16()
    value = torch.randn(3, 2, head_dim, generator=g).bfloat16()
    tensors = [key, value, slot_mapping, query, *pools, tables, seq_lens]
    return [None if t is None else t.to(device) for t in tensors]


def clone(inputs):
    return [None if t is None else t.clone() for t in inputs]


@pytest.mark.parametrize("device,backend", [("cpu", "aot_eager"), pytest.param("cuda", "inductor", marks=cuda)])
@pytest.mark.parametrize("kind", [torch.int8, "16-bit"])
def test_decode_step_under_torch_compile(device, backend, kind):
    torch._dynamo.reset()
    inputs = step_inputs(device, kind)
    eager_inputs = clone(inputs)
    out = torch.compile(decode_step, fullgraph=True, backend=backend)(*inputs)
    expected = decode_step(*eager_inputs)
    assert torch.equal(raw(out), raw(expected))
    for compiled, eager in zip(inputs[4:8], eager_inputs[4:8]):  # the cache was updated in place
        if compiled is not None:
            assert torch.equal(raw(compiled), raw(eager))


@cuda
def test_decode_step_in_a_cuda_graph():
    inputs = step_inputs("cuda")
    start = clone(inputs)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        decode_step(*clone(inputs))  # warm-up
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = decode_step(*inputs)
    for t, s in zip(inputs, start):
        if t is not None:
            t.copy_(s)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(raw(static_out), raw(decode_step(*clone(start))))
