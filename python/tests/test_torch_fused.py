"""PyTorch: the fused and weight-only custom operators against PyTorch
formulas and the CPU backend, opcheck, and a quantized decoder MLP block
under torch.compile and in a CUDA graph."""

import pytest

torch = pytest.importorskip("torch")
import qgemm  # noqa: E402

F = torch.nn.functional
cuda = pytest.mark.skipif(not (torch.cuda.is_available() and qgemm.built_with_cuda()),
                          reason="needs a CUDA GPU and a CUDA build of qgemm")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda)]


def assert_codes_close(q, y, scale):
    """q = rne(y / scale) within one step (fp32 sums in another order)."""
    expected = torch.round(y.double() / scale.double()).clamp(-128, 127)
    diff = (q.double() - expected).abs()
    assert diff.max() <= 1 and (diff == 0).double().mean() > 0.99


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rms_norm_quant(device, dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(33, 512, generator=g).to(dtype).to(device)
    weight = (torch.rand(512, generator=g) + 0.5).to(dtype).to(device)
    q, scale, azp = qgemm.rms_norm_quant(x, weight, 1e-6)
    assert q.shape == (33, 512) and scale.shape == (33, 1) and azp is None
    y = F.rms_norm(x.double(), (512,), weight.double(), 1e-6)
    torch.testing.assert_close(scale.double(), y.abs().amax(1, keepdim=True) / 127, rtol=1e-5, atol=0)
    assert_codes_close(q, y, scale)
    if device == "cuda":
        q_cpu, scale_cpu, _ = qgemm.rms_norm_quant(x.cpu(), weight.cpu(), 1e-6)
        assert (q.cpu().int() - q_cpu.int()).abs().max() <= 1
        torch.testing.assert_close(scale.cpu(), scale_cpu, rtol=1e-5, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_add_rms_norm_quant_and_silu_and_mul(device):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(8, 256, generator=g).bfloat16().to(device)
    residual = torch.randn(8, 256, generator=g).bfloat16().to(device)
    expected_residual = residual + x
    weight = torch.ones(256, dtype=torch.bfloat16, device=device)
    q, scale, _ = qgemm.add_rms_norm_quant(x, residual, weight, 1e-6)
    assert torch.equal(residual, expected_residual)
    assert_codes_close(q, F.rms_norm(residual.double(), (256,), None, 1e-6), scale)
    gate_up = torch.randn(8, 2 * 128, generator=g).bfloat16().to(device)
    q, scale, _ = qgemm.silu_and_mul_quant(gate_up)
    gate, up = gate_up.double().chunk(2, dim=1)
    assert_codes_close(q, F.silu(gate) * up, scale)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("approximation", ["none", "tanh"])
def test_bias_gelu_and_layer_norm(device, approximation):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 384, generator=g).to(device)
    bias = torch.randn(384, generator=g).to(device)
    q, scale, _ = qgemm.bias_gelu_quant(x, bias, approximation)
    assert_codes_close(q, F.gelu(x.double() + bias.double(), approximate=approximation), scale)
    gamma, beta = torch.rand(384, generator=g).to(device) + 0.5, torch.randn(384, generator=g).to(device) * 0.1
    q, scale, _ = qgemm.layer_norm_quant(x, gamma, beta, 1e-5, bias=bias)
    assert_codes_close(q, F.layer_norm(x.double() + bias.double(), (384,), gamma.double(), beta.double(), 1e-5),
                       scale)


@pytest.mark.parametrize("device", DEVICES)
def test_weight_only_mm(device):
    g = torch.Generator().manual_seed(3)
    a = torch.randn(5, 256, generator=g).bfloat16().to(device)
    w = torch.rand(64, 256, generator=g) - 0.5
    packed, scales, offsets = qgemm.quantize_weight_int4(w, 128)  # offline, on the CPU
    packed, scales, offsets = packed.to(device), scales.to(device), offsets.to(device)
    out = qgemm.weight_only_mm(a, packed, scales, offsets, 128)
    assert out.dtype == torch.bfloat16 and out.shape == (5, 64)
    values = qgemm.unpack_int4(packed.cpu()).to(device)
    # ŵ = bf16(q·bf16(s) + bf16(o)) rounded once (docs/weight_only.md); float64 holds q·s + o exactly here.
    s_t = scales.bfloat16().double().repeat_interleave(128, 1)
    o_t = offsets.bfloat16().double().repeat_interleave(128, 1)
    w_hat = (values.double() * s_t + o_t).bfloat16()
    torch.testing.assert_close(out.float(), a.float() @ w_hat.float().T, rtol=2**-7, atol=1e-2)
    prepacked = qgemm.weight_only_prepack(packed)
    torch.testing.assert_close(qgemm.weight_only_mm(a, prepacked, scales, offsets, 128), out, rtol=2**-7, atol=1e-2)
    # bf16 scales and offsets (a's dtype): the same bits as fp32 ones holding the same values.
    s16, o16 = scales.bfloat16(), offsets.bfloat16()
    half = qgemm.weight_only_mm(a, packed, s16, o16, 128)
    assert torch.equal(half, qgemm.weight_only_mm(a, packed, s16.float(), o16.float(), 128))
    assert torch.equal(half, out)  # fp32 parameters are rounded to bf16 first: the same ŵ


def _int4_problem(seed, m, n, k, device):
    """bf16 activations [m, k], a packed int4 weight [n, k/2] and its group-128 scales."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).bfloat16().to(device)
    packed = torch.randint(0, 256, (n, k // 2), dtype=torch.uint8, generator=g).to(device)
    scales = (torch.rand(n, k // 128, generator=g) * 0.01).to(device)
    return g, a, packed, scales


@pytest.mark.parametrize("device", DEVICES)
def test_weight_only_mm_workspace(device):
    # 256 × 28672 × 1024 runs the tensor-core kernel's stream-K on an H100 (224 tiles on 132 SMs): the same
    # result as without a workspace up to the fp32 summation order, and the same bits from call to call.
    m, n, k = (256, 28672, 1024) if device == "cuda" else (5, 64, 256)
    _, a, packed, scales = _int4_problem(6, m, n, k, device)
    workspace = torch.empty(qgemm.weight_only_workspace_bytes(a.device), dtype=torch.uint8, device=device)
    plain = qgemm.weight_only_mm(a, packed, scales, None, 128)
    first = qgemm.weight_only_mm(a, packed, scales, None, 128, workspace=workspace)
    second = qgemm.weight_only_mm(a, packed, scales, None, 128, workspace=workspace)
    torch.testing.assert_close(first, plain, rtol=2**-7, atol=1e-2)
    assert torch.equal(first, second)
    out = torch.empty_like(first)
    qgemm.weight_only_mm(a, packed, scales, None, 128, out=out, workspace=workspace)
    assert torch.equal(out, first)


@pytest.mark.parametrize("device", DEVICES)
def test_weight_only_mm_dense_workspace(device):
    # 4096 tokens with a workspace that holds the dequantized weight: the dense prefill path on sm_90 (the
    # fused kernels elsewhere), the same values as without it up to the fp32 summation order.
    m, n, k = (4096, 1024, 512) if device == "cuda" else (5, 64, 256)
    g, a, packed, scales = _int4_problem(8, m, n, k, device)
    offsets = (torch.rand(n, k // 128, generator=g) * -0.08).to(device)
    bias = torch.randn(n, generator=g).bfloat16().to(device)
    size = qgemm.weight_only_dense_workspace_bytes(a.device, n, k)
    assert size == (max(n * k * 2, qgemm.weight_only_workspace_bytes(a.device)) if device == "cuda" else 0)
    workspace = torch.empty(size, dtype=torch.uint8, device=device)
    plain = qgemm.weight_only_mm(a, packed, scales, offsets, 128, bias)
    dense = qgemm.weight_only_mm(a, packed, scales, offsets, 128, bias, workspace=workspace)
    torch.testing.assert_close(dense, plain, rtol=2**-7, atol=1e-2)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_fused_and_weight_only(device):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(4, 64, generator=g).to(device)
    w = torch.ones(64, device=device)
    ops = torch.ops.qgemm
    residual = torch.randn(4, 64, generator=g).to(device)
    q = torch.empty(4, 64, dtype=torch.int8, device=device)
    s = torch.empty(4, 1, device=device)
    a = torch.randn(4, 64, generator=g).bfloat16().to(device)
    w8 = torch.randint(-128, 128, (32, 64), dtype=torch.int8, generator=g).to(device)
    cases = [
        (ops.rms_norm_quant, (x, w, 1e-6, torch.int8, "per_token", False, False, None, None)),
        (ops.add_rms_norm_quant, (x, residual, w, 1e-6, torch.int8, "per_token", True, False, None, None)),
        (ops.silu_and_mul_quant, (x, torch.float8_e4m3fn, "static", True, False, torch.tensor([0.1], device=device),
                                  None)),
        (ops.bias_gelu_quant, (x, None, "tanh", torch.int8, "per_token", True, True, None, None)),
        (ops.rms_norm_quant_out, (q, s, None, x, w, 1e-6, "per_token", False)),
        (ops.weight_only_mm, (a, w8, torch.rand(32, device=device), None, 64, None, None)),
        (ops.weight_only_mm, (a, w8, torch.rand(32, device=device), None, 64, None,
                              torch.empty(qgemm.weight_only_workspace_bytes(a.device), dtype=torch.uint8,
                                          device=device))),
        (ops.weight_only_prepack, (w8,)),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))


def mlp_block(x, residual, norm_weight, w_gate_up, s_gate_up, w_down, s_down):
    """residual += x; h = RMSNorm(residual) → W8A8 gate/up GEMM → SiLU-and-mul → W8A8 down GEMM."""
    q, s, _ = qgemm.add_rms_norm_quant(x, residual, norm_weight, 1e-6)
    gate_up = qgemm.scaled_mm(q, w_gate_up.T, s, s_gate_up, out_dtype=torch.bfloat16)
    q, s, _ = qgemm.silu_and_mul_quant(gate_up)
    return qgemm.scaled_mm(q, w_down.T, s, s_down, out_dtype=torch.bfloat16)


def mlp_inputs(device, tokens=32, hidden=128, inner=256):
    g = torch.Generator().manual_seed(5)
    return [t.to(device) for t in (
        torch.randn(tokens, hidden, generator=g).bfloat16(), torch.randn(tokens, hidden, generator=g).bfloat16(),
        torch.ones(hidden, dtype=torch.bfloat16),
        torch.randint(-128, 128, (2 * inner, hidden), dtype=torch.int8, generator=g),
        torch.rand(1, 2 * inner, generator=g) * 1e-3,
        torch.randint(-128, 128, (hidden, inner), dtype=torch.int8, generator=g),
        torch.rand(1, hidden, generator=g) * 1e-3)]


@pytest.mark.parametrize("device,backend", [("cpu", "aot_eager"), pytest.param("cuda", "inductor", marks=cuda)])
def test_mlp_block_under_torch_compile(device, backend):
    torch._dynamo.reset()
    inputs = mlp_inputs(device)
    eager_inputs = [t.clone() for t in inputs]
    out = torch.compile(mlp_block, fullgraph=True, backend=backend)(*inputs)
    expected = mlp_block(*eager_inputs)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)
    torch.testing.assert_close(inputs[1], eager_inputs[1], rtol=0, atol=0)  # the residual was updated in place


@cuda
def test_mlp_block_in_a_cuda_graph():
    inputs = mlp_inputs("cuda")
    residual_start = inputs[1].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        mlp_block(*[t.clone() for t in inputs])  # warm-up
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = mlp_block(*inputs)
    inputs[1].copy_(residual_start)
    graph.replay()
    torch.cuda.synchronize()
    fresh = [t.clone() for t in inputs]
    fresh[1].copy_(residual_start)
    torch.testing.assert_close(static_out, mlp_block(*fresh), rtol=0, atol=0)
