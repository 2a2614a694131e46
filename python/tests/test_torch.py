"""PyTorch: the torch.ops.qgemm custom operators against PyTorch formulas,
their schemas and fake implementations (torch.library.opcheck),
torch.compile(fullgraph=True), CUDA graph capture and replay, streams.
CPU tests run wherever torch is installed; CUDA tests need a GPU and a CUDA
build of qgemm."""

import pytest

torch = pytest.importorskip("torch")
import qgemm  # noqa: E402

cuda = pytest.mark.skipif(not (torch.cuda.is_available() and qgemm.built_with_cuda()),
                          reason="needs a CUDA GPU and a CUDA build of qgemm")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]


def problem(device, m=64, n=96, k=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=g)
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)  # [N,K]; b = w.T
    sa = torch.rand(m, 1, generator=g) * 1e-2 + 1e-3
    sb = torch.rand(1, n, generator=g) * 1e-2 + 1e-3
    bias = torch.rand(n, generator=g) - 0.5
    return [t.to(device) for t in (a, w, sa, sb, bias)]


def torch_scaled_mm(a, w, sa, sb, bias=None, azp_term=None):
    acc = a.double() @ w.double().T
    if azp_term is not None:
        acc = acc - azp_term.double()
    out = acc * sa.double() * sb.double()
    return out if bias is None else out + bias.double()


def test_registered():
    assert qgemm.torch_ops_registered
    for name in ("scaled_mm", "scaled_mm_out", "scaled_mm_azp", "scaled_mm_azp_out", "azp_adj", "azp_adj_out",
                 "quantize", "quantize_out", "dequantize", "dequantize_out", "quantize_weight_int4", "pack_int4",
                 "unpack_int4"):
        assert hasattr(torch.ops.qgemm, name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m,n,k", [(1, 32, 32), (64, 96, 128), (17, 1000, 48), (100, 4096, 512), (300, 1001, 256)])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16])
def test_scaled_mm_int8(device, m, n, k, out_dtype):
    # (300, 1001, 256): an odd N, which on Hopper runs the direct-store kernel (docs/gemm.md).
    a, w, sa, sb, bias = problem(device, m, n, k)
    bias = bias.to(out_dtype)
    out = qgemm.scaled_mm(a, w.T, sa, sb, bias)
    assert out.dtype == out_dtype and out.device == a.device and out.shape == (m, n)
    eps = 2**-8 if out_dtype == torch.bfloat16 else 2**-11
    torch.testing.assert_close(out.double(), torch_scaled_mm(a, w, sa, sb, bias), rtol=eps, atol=1e-5)
    if device == "cuda":  # the CPU backend is the oracle: within one output ulp
        cpu = qgemm.scaled_mm(*(t.cpu() for t in (a, w.T, sa, sb, bias)))
        torch.testing.assert_close(out.cpu(), cpu, rtol=eps, atol=1e-5)


@cuda
@pytest.mark.parametrize("m,n,k", [(320, 4096, 14336), (640, 8192, 8192), (1000, 4096, 2048), (33, 600, 208)])
@pytest.mark.parametrize("dtype", [torch.int8, torch.float8_e4m3fn])
def test_scaled_mm_with_workspace(m, n, k, dtype):
    # With a workspace the Hopper dispatch may run stream-K: int8 gives the same bits as without one
    # (exact int32 sums), fp8 the same values up to the fp32 summation order; twice the same bits.
    a, w, sa, sb, bias = problem("cuda", m, n, k, seed=5)
    if dtype != torch.int8:
        a, w = (a.float() / 8).to(dtype), (w.float() / 8).to(dtype)
    bias = bias.bfloat16()
    workspace = torch.full((qgemm.scaled_mm_workspace_bytes(0),), 0xAB, dtype=torch.uint8, device="cuda")
    plain = qgemm.scaled_mm(a, w.T, sa, sb, bias)
    first = qgemm.scaled_mm(a, w.T, sa, sb, bias, workspace=workspace)
    again = qgemm.scaled_mm(a, w.T, sa, sb, bias, workspace=workspace)
    assert torch.equal(first, again)
    if dtype == torch.int8:
        assert torch.equal(first, plain)
    else:
        torch.testing.assert_close(first.double(), plain.double(), rtol=2**-7, atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
def test_scaled_mm_fp8_native_dtype(device):
    g = torch.Generator().manual_seed(3)
    a = (torch.randn(48, 64, generator=g) * 4).to(torch.float8_e4m3fn).to(device)
    w = torch.randn(80, 64, generator=g).to(torch.float8_e4m3fn).to(device)
    sa, sb = torch.full((1,), 0.5, device=device), torch.full((1,), 0.25, device=device)
    out = qgemm.scaled_mm(a, w.T, sa, sb, out_dtype=torch.float16)
    torch.testing.assert_close(out.double(), (a.double() @ w.double().T) * 0.125, rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("m", [7, 200, 1100])
def test_scaled_mm_fp8_fast_accum(device, m):
    """fast_accum=True against the exact result: on the CPU (and where no fast
    kernel exists) the precise result; on sm_90a at M > 128 the fast kernels,
    whose error bound grows with K (tests/gemm/test_scaled_mm_fp8_fast.cpp
    derives it): s_a·s_b·(2^-9·S + 34·2^-13·W) plus an output ulp, with
    S = Σ_k |a_k·b_k| and W = Σ_k (ceil(K/32) − floor(k/32))·|a_k·b_k|.
    Non-negative inputs (no cancellation: |D| = s_a·s_b·S) so that a wrong
    scale or a missing bias would exceed the bound."""
    g = torch.Generator().manual_seed(m)
    n, k = 256, 1040
    a = (torch.randn(m, k, generator=g).abs() * 4).to(torch.float8_e4m3fn)
    w = (torch.randn(n, k, generator=g).abs()).to(torch.float8_e4m3fn)
    sa = torch.rand(m, 1, generator=g) * 1e-2 + 1e-3
    sb = torch.rand(1, n, generator=g) * 1e-2 + 1e-3
    bias = (torch.rand(n, generator=g) - 0.5).bfloat16()
    out = qgemm.scaled_mm(*(t.to(device) for t in (a, w.T, sa, sb, bias)), fast_accum=True)
    assert out.dtype == torch.bfloat16 and out.shape == (m, n)
    exact = (a.double() @ w.double().T) * sa.double() * sb.double() + bias.double()
    scale = sa.double() * sb.double()
    weight = -(-k // 32) - torch.arange(k, dtype=torch.float64) // 32
    abs_sum = (a.double().abs() @ w.double().abs().T) * scale
    weighted = ((a.double().abs() * weight) @ w.double().abs().T) * scale
    bound = 2.0**-9 * abs_sum + 34 * 2.0**-13 * weighted + 2.0**-7 * exact.abs() + 1e-6
    assert torch.all((out.cpu().double() - exact).abs() <= bound)
    assert not torch.all((out.cpu().double() - (exact - bias.double())).abs() <= bound)  # the bound has teeth
    precise = qgemm.scaled_mm(*(t.to(device) for t in (a, w.T, sa, sb, bias)))
    if device == "cpu":
        torch.testing.assert_close(out, precise, rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("per_token_zero_points", [False, True])
def test_scaled_mm_azp(device, per_token_zero_points):
    a, w, sa, sb, bias = problem(device, 33, 80, 64)
    bias = bias.bfloat16()
    column_sums = w.long().sum(dim=1)
    if per_token_zero_points:
        azp = torch.randint(-20, 20, (33,), dtype=torch.int32, device=device)
        adj = qgemm.azp_adj(w.T)
        assert adj.dtype == torch.int32 and torch.equal(adj.long(), column_sums)
        out = qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, azp, bias)
        term = azp.long()[:, None] * column_sums[None, :]
    else:
        adj = qgemm.azp_adj(w.T, azp=3)
        out = qgemm.scaled_mm_azp(a, w.T, sa, sb, adj, None, bias)
        term = 3 * column_sums[None, :]
    torch.testing.assert_close(out.double(), torch_scaled_mm(a, w, sa, sb, bias, term), rtol=2**-8, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_quantize_per_token_matches_torch_bit_for_bit(device, dtype):
    x = (torch.randn(257, 1024, generator=torch.Generator().manual_seed(1)) * 3).to(dtype).to(device)
    q, scale, azp = qgemm.quantize(x)
    assert azp is None and q.dtype == torch.int8 and scale.shape == (257, 1)
    # The reference runs on the CPU: PyTorch's CUDA division by a scalar
    # multiplies by its reciprocal, which is not the IEEE quotient qgemm
    # (and PyTorch on the CPU) computes.
    x_cpu = x.float().cpu()
    expected_scale = x_cpu.abs().amax(dim=1, keepdim=True) / 127
    torch.testing.assert_close(scale.cpu(), expected_scale, rtol=0, atol=0)
    expected_q = torch.round(x_cpu * (1 / expected_scale)).clamp(-128, 127).to(torch.int8)
    assert torch.equal(q.cpu(), expected_q)
    back = qgemm.dequantize(q, scale, out_dtype=torch.float32)
    torch.testing.assert_close(back, q.float() * scale, rtol=0, atol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode,symmetric,dtype", [("per_token", False, torch.int8), ("per_group", True, torch.int8),
                                                  ("per_group", False, torch.int8),
                                                  ("per_token", True, torch.float8_e4m3fn),
                                                  ("per_group", True, torch.float8_e4m3fn)])
def test_quantize_modes_match_the_cpu_backend(device, mode, symmetric, dtype):
    x = torch.randn(19, 512, generator=torch.Generator().manual_seed(2)).bfloat16().to(device)
    q, scale, azp = qgemm.quantize(x, dtype=dtype, mode=mode, symmetric=symmetric, group_size=64)
    assert q.dtype == dtype and scale.shape == ((19, 8) if mode == "per_group" else (19, 1))
    assert (azp is None) == symmetric
    q_cpu, scale_cpu, azp_cpu = qgemm.quantize(x.cpu(), dtype=dtype, mode=mode, symmetric=symmetric, group_size=64)
    assert torch.equal(q.cpu().view(torch.uint8), q_cpu.view(torch.uint8))
    assert torch.equal(scale.cpu(), scale_cpu)
    if not symmetric:
        assert torch.equal(azp.cpu(), azp_cpu)
    back = qgemm.dequantize(q, scale, azp, mode=mode, group_size=64, out_dtype=torch.bfloat16)
    assert back.dtype == torch.bfloat16
    step = scale.repeat_interleave(64, dim=1) if mode == "per_group" else scale
    error = (back.float() - x.float()).abs()
    if dtype == torch.int8:  # half a step, plus bf16 rounding of the result
        assert (error <= step * (0.5 + 2**-16) + x.float().abs() * 2**-8).all()
    else:  # half an fp8 ulp (3 mantissa bits) of x/s, times s, plus bf16 rounding
        assert (error <= x.float().abs() * (2**-4 + 2**-8) + step * 2**-9).all()


@pytest.mark.parametrize("device", DEVICES)
def test_quantize_static_and_out_variants(device):
    x = torch.randn(8, 64, device=device)
    scale, azp = torch.tensor([0.02], device=device), torch.tensor([5], dtype=torch.int32, device=device)
    q, s, z = qgemm.quantize(x, mode="static", scale=scale, azp=azp)
    assert s is scale and z is azp
    # References on the CPU (IEEE quotients; see above).
    x_cpu = x.cpu()
    expected = (torch.round(x_cpu * (1 / scale.cpu())).to(torch.int32) + 5).clamp(-128, 127).to(torch.int8)
    assert torch.equal(q.cpu(), expected)
    out = torch.empty_like(q)
    dynamic_scale = torch.empty(8, 1, device=device)
    q2, s2, _ = qgemm.quantize(x, out=out, scale=dynamic_scale)
    assert q2 is out and s2 is dynamic_scale
    torch.testing.assert_close(dynamic_scale.cpu(), x_cpu.abs().amax(dim=1, keepdim=True) / 127, rtol=0, atol=0)


def test_int4_weight_helpers_on_cpu_tensors():
    w = torch.rand(16, 128, generator=torch.Generator().manual_seed(4)) - 0.5
    packed, scale, offset = qgemm.quantize_weight_int4(w, 32)
    assert packed.shape == (16, 64) and scale.shape == (16, 4) and offset.shape == (16, 4)
    values = qgemm.unpack_int4(packed)
    assert torch.equal(qgemm.pack_int4(values), packed)
    assert torch.equal(packed[:, 0], values[:, 0] | (values[:, 1] << 4))
    back = values.float() * scale.repeat_interleave(32, 1) + offset.repeat_interleave(32, 1)
    assert ((back - w).abs() <= scale.repeat_interleave(32, 1) * (0.5 + 2**-16)).all()
    # group_major=True: the same values as [4, 16] tensors viewed transposed (weight_only_mm's fast layout).
    packed_gm, scale_gm, offset_gm = qgemm.quantize_weight_int4(w, 32, group_major=True)
    assert scale_gm.stride() == (1, 16) and offset_gm.stride() == (1, 16)
    assert torch.equal(packed_gm, packed) and torch.equal(scale_gm, scale) and torch.equal(offset_gm, offset)


def test_errors_are_value_and_type_errors():
    a, w, sa, sb, bias = problem("cpu")
    with pytest.raises(ValueError, match=r"^scale_b: expected 1 or N=96 elements"):
        qgemm.scaled_mm(a, w.T, sa, sb[:, :5], out_dtype=torch.float32)
    with pytest.raises(TypeError, match=r"^a: expected dtype int8 or fp8e4m3, got fp32$"):
        qgemm.scaled_mm(a.float(), w.T, sa, sb, out_dtype=torch.float32)
    with pytest.raises(TypeError, match=r"^a: "):
        torch.ops.qgemm.scaled_mm(a.float(), w.T, sa, sb, None, torch.float32)


@cuda
def test_mixed_devices_are_a_value_error():
    a, w, sa, sb, bias = problem("cuda")
    with pytest.raises(ValueError, match=r"^scale_a: "):
        qgemm.scaled_mm(a, w.T, sa.cpu(), sb, out_dtype=torch.bfloat16)


# ---- custom operator checks ---------------------------------------------------

def opcheck_cases(device):
    a, w, sa, sb, bias = problem(device, 8, 32, 64)
    x = torch.randn(8, 64, device=device)
    out = torch.empty(8, 32, dtype=torch.bfloat16, device=device)
    adj = qgemm.azp_adj(w.T)
    azp = torch.randint(-5, 5, (8,), dtype=torch.int32, device=device)
    q, s, _ = qgemm.quantize(x)
    workspace = torch.empty(qgemm.scaled_mm_workspace_bytes(device), dtype=torch.uint8, device=device)
    ops = torch.ops.qgemm
    return [
        (ops.scaled_mm, (a, w.T, sa, sb, bias.bfloat16(), torch.bfloat16)),
        (ops.scaled_mm_out, (out, a, w.T, sa, sb, None, None)),
        (ops.scaled_mm_out, (out, a, w.T, sa, sb, None, workspace)),
        (ops.scaled_mm_azp, (a, w.T, sa, sb, adj, azp, None, torch.float16)),
        (ops.scaled_mm_azp_out, (torch.empty(8, 32, dtype=torch.float16, device=device), a, w.T, sa, sb, adj, azp,
                                 None, workspace)),
        (ops.azp_adj, (w.T, 2)),
        (ops.quantize, (x, torch.int8, "per_token", False, False, 128, None, None)),
        (ops.quantize, (x, torch.int8, "per_group", True, True, 32, None, None)),
        (ops.quantize, (x, torch.float8_e4m3fn, "static", True, False, 128, torch.tensor([0.01], device=device),
                        None)),
        (ops.quantize_out, (torch.empty_like(q), torch.empty_like(s), None, x, "per_token", True, False, 128)),
        (ops.dequantize, (q, s, None, "per_token", 128, torch.bfloat16)),
    ]


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    for op, args in opcheck_cases(device):
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_fp8_fast_accum(device):
    # fp8 inputs, fast_accum=True. Without "test_schema": torch 2.11's
    # SchemaCheckMode multiplies the inputs it compares, which PyTorch does not
    # implement for float8_e4m3fn ("mul_cpu_reduced_float" / "mul_cuda" not
    # implemented), whatever the operator does.
    a, w, sa, sb, _ = problem(device, 8, 32, 64)
    args = (a.float().to(torch.float8_e4m3fn), w.float().div(64).to(torch.float8_e4m3fn).T, sa, sb, None,
            torch.bfloat16, True)
    torch.library.opcheck(torch.ops.qgemm.scaled_mm, args, test_utils=("test_faketensor", "test_aot_dispatch_dynamic"))


def test_opcheck_int4_helpers():
    w = torch.rand(4, 64) - 0.5
    torch.library.opcheck(torch.ops.qgemm.quantize_weight_int4, (w, 32))
    values = torch.randint(0, 16, (4, 64), dtype=torch.uint8)
    torch.library.opcheck(torch.ops.qgemm.pack_int4, (values,))
    torch.library.opcheck(torch.ops.qgemm.unpack_int4, (qgemm.pack_int4(values),))


def quantized_linear(x, w, sb, bias):
    """A W8A8 linear layer: dynamic per-token quantization, then the GEMM."""
    q, s, _ = qgemm.quantize(x)
    return qgemm.scaled_mm(q, w.T, s, sb, bias)


@pytest.mark.parametrize("device,backend", [("cpu", "aot_eager"), pytest.param("cuda", "inductor", marks=cuda)])
def test_torch_compile_fullgraph(device, backend):
    torch._dynamo.reset()
    _, w, _, sb, bias = problem(device)
    x = torch.randn(64, 128, device=device, dtype=torch.bfloat16)
    compiled = torch.compile(quantized_linear, fullgraph=True, backend=backend)
    out = compiled(x, w, sb, bias.bfloat16())
    torch.testing.assert_close(out, quantized_linear(x, w, sb, bias.bfloat16()), rtol=0, atol=0)
    x2 = torch.randn(17, 128, device=device, dtype=torch.bfloat16)  # another M: dynamic shapes
    torch.testing.assert_close(compiled(x2, w, sb, bias.bfloat16()), quantized_linear(x2, w, sb, bias.bfloat16()),
                               rtol=0, atol=0)


@cuda
def test_out_argument_on_a_side_stream():
    a, w, sa, sb, bias = problem("cuda")
    out = torch.full((a.shape[0], w.shape[0]), float("nan"), device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        result = qgemm.scaled_mm(a, w.T, sa, sb, bias.bfloat16(), out=out)
    torch.cuda.current_stream().wait_stream(side)
    assert result is out and not torch.isnan(out).any()


@cuda
def test_explicit_stream_argument():
    a, w, sa, sb, bias = problem("cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    out = qgemm.scaled_mm(a, w.T, sa, sb, bias.bfloat16(), stream=side)  # torch.cuda.Stream or an int handle
    side.synchronize()
    torch.testing.assert_close(out.double(), torch_scaled_mm(a, w, sa, sb, bias.bfloat16()), rtol=2**-8, atol=1e-5)


@cuda
def test_cuda_graph_capture_and_replay():
    _, w, _, sb, bias = problem("cuda")
    bias = bias.bfloat16()
    static_x = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up outside the capture
        quantized_linear(static_x, w, sb, bias)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = quantized_linear(static_x, w, sb, bias)
    for seed in range(3):
        fresh = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16,
                            generator=torch.Generator(device="cuda").manual_seed(seed))
        static_x.copy_(fresh)
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(static_out, quantized_linear(fresh, w, sb, bias), rtol=0, atol=0)


@cuda
def test_compiled_module_in_a_cuda_graph():
    torch._dynamo.reset()
    _, w, _, sb, bias = problem("cuda")
    bias = bias.bfloat16()
    compiled = torch.compile(quantized_linear, fullgraph=True, mode="reduce-overhead")
    x = torch.randn(32, 128, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):  # reduce-overhead records a CUDA graph after warm-up runs
        out = compiled(x, w, sb, bias)
    torch.testing.assert_close(out, quantized_linear(x, w, sb, bias), rtol=0, atol=0)


@cuda
def test_programmatic_dependent_launch_keeps_the_bits():
    """A decode-sized chain of qgemm ops, each reading the previous one's output (norm + quant →
    GEMM → quant → GEMM …), eager and captured in a torch CUDA graph, with PDL on and off: the
    same bits (PDL overlaps launches, never a read with the write it depends on)."""
    _, w, _, sb, bias = problem("cuda", n=128, k=128)
    bias = bias.bfloat16()
    norm_w = torch.rand(128, device="cuda").bfloat16() + 0.5
    x0 = torch.randn(8, 128, device="cuda", dtype=torch.bfloat16)

    def chain(x):
        for _ in range(12):
            q, s, _ = qgemm.rms_norm_quant(x, norm_w, 1e-6)
            x = quantized_linear(qgemm.scaled_mm(q, w.T, s, sb, bias), w, sb, bias)
        return x

    before = qgemm.programmatic_dependent_launch()
    results = {}
    try:
        for pdl in (False, True):
            qgemm.set_programmatic_dependent_launch(pdl)
            results[pdl, "eager"] = chain(x0.clone())
            static_x = x0.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm up outside the capture
                chain(static_x)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = chain(static_x)
            graph.replay()
            torch.cuda.synchronize()
            results[pdl, "graph"] = static_out.clone()
    finally:
        qgemm.set_programmatic_dependent_launch(before)
    reference = results[False, "eager"]
    assert torch.isfinite(reference.float()).all()
    for key, value in results.items():
        assert torch.equal(value, reference), key
