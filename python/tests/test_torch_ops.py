"""PyTorch: the custom operators on CPU and CUDA tensors against PyTorch
formulas, torch.compile(fullgraph=True), CUDA-graph capture, streams."""

import pytest

torch = pytest.importorskip("torch")
import qgemm  # noqa: E402

cuda = pytest.mark.skipif(not (torch.cuda.is_available() and qgemm.built_with_cuda()),
                          reason="needs a CUDA GPU and a CUDA build of qgemm")


def _problem(device, m=64, n=96, k=128, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, generator=g).to(device)
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g).to(device)
    sa = (torch.rand(m, 1, generator=g) * 1e-2 + 1e-3).to(device)
    sb = (torch.rand(1, n, generator=g) * 1e-2 + 1e-3).to(device)
    bias = (torch.rand(n, generator=g) - 0.5).to(device)
    return a, w, sa, sb, bias


def _reference(a, w, sa, sb, bias):
    return (a.double() @ w.double().T) * sa.double() * sb.double() + bias.double()


def test_scaled_mm_on_cpu_tensors():
    a, w, sa, sb, bias = _problem("cpu")
    out = qgemm.scaled_mm(a, w.T, sa, sb, bias, out_dtype=torch.float32)
    assert out.dtype == torch.float32 and out.device.type == "cpu"
    torch.testing.assert_close(out.double(), _reference(a, w, sa, sb, bias), rtol=1e-6, atol=1e-6)


def test_errors_are_value_and_type_errors():
    a, w, sa, sb, bias = _problem("cpu")
    with pytest.raises(ValueError, match="scale_b: expected 1 or N=96 elements"):
        qgemm.scaled_mm(a, w.T, sa, sb[:, :5], out_dtype=torch.float32)
    with pytest.raises(TypeError, match="a: expected dtype int8 or fp8e4m3, got fp32"):
        qgemm.scaled_mm(a.float(), w.T, sa, sb, out_dtype=torch.float32)


@cuda
@pytest.mark.parametrize("m,n,k", [(1, 32, 32), (64, 96, 128), (100, 4096, 512), (17, 1000, 48)])
def test_scaled_mm_int8_bf16(m, n, k):
    a, w, sa, sb, bias = _problem("cuda", m, n, k)
    out = qgemm.scaled_mm(a, w.T, sa, sb, bias.bfloat16())
    assert out.dtype == torch.bfloat16 and out.is_cuda
    ref = _reference(a, w, sa, sb, bias.bfloat16().float())
    torch.testing.assert_close(out.double(), ref, rtol=2**-7, atol=1e-6)


@cuda
def test_scaled_mm_fp8_native_dtype():
    g = torch.Generator().manual_seed(3)
    a = (torch.randn(48, 64, generator=g) * 4).to(torch.float8_e4m3fn).cuda()
    w = (torch.randn(80, 64, generator=g)).to(torch.float8_e4m3fn).cuda()
    sa, sb = torch.full((1,), 0.5, device="cuda"), torch.full((1,), 0.25, device="cuda")
    out = qgemm.scaled_mm(a, w.T, sa, sb, out_dtype=torch.float16)
    ref = (a.double() @ w.double().T) * 0.125
    torch.testing.assert_close(out.double(), ref, rtol=2e-3, atol=1e-3)


@cuda
def test_quantize_matches_torch_formula_bit_for_bit():
    x = torch.randn(257, 4096, device="cuda", dtype=torch.bfloat16) * 3
    q, scale, azp = qgemm.quantize(x)
    assert azp is None
    expected_scale = x.float().abs().amax(dim=1) / 127
    torch.testing.assert_close(scale, expected_scale, rtol=0, atol=0)
    expected_q = torch.round(x.float() / expected_scale[:, None]).clamp(-128, 127).to(torch.int8)
    assert torch.equal(q, expected_q)


@cuda
def test_out_argument_is_written_in_place_on_the_current_stream():
    a, w, sa, sb, bias = _problem("cuda")
    out = torch.full((a.shape[0], w.shape[0]), float("nan"), device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        result = qgemm.scaled_mm(a, w.T, sa, sb, bias.bfloat16(), out=out)
    torch.cuda.current_stream().wait_stream(side)
    assert result.data_ptr() == out.data_ptr()
    assert not torch.isnan(out).any()


@cuda
def test_torch_compile_fullgraph():
    a, w, sa, sb, bias = _problem("cuda")
    x = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)

    def layer(x, w, sb, bias):
        q, s, _ = qgemm.quantize(x)
        return qgemm.scaled_mm(q, w.T, s.view(-1, 1), sb, bias)

    compiled = torch.compile(layer, fullgraph=True)
    out = compiled(x, w, sb, bias.bfloat16())
    torch.testing.assert_close(out, layer(x, w, sb, bias.bfloat16()), rtol=0, atol=0)


@cuda
def test_cuda_graph_capture_and_replay():
    a, w, sa, sb, bias = _problem("cuda")
    bias = bias.bfloat16()
    static_a = a.clone()
    qgemm.scaled_mm(static_a, w.T, sa, sb, bias)  # warm up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = qgemm.scaled_mm(static_a, w.T, sa, sb, bias)
    for seed in range(3):
        fresh, *_ = _problem("cuda", seed=seed + 10)
        static_a.copy_(fresh)
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(static_out.double(), _reference(fresh, w, sa, sb, bias.float()), rtol=2**-7,
                                   atol=1e-6)
