"""GPTQ / AWQ int4 checkpoints into weight_only_mm's layout (qgemm.from_awq,
qgemm.from_gptq over the C++ int4_from_awq / int4_from_gptq): codes, scales and
offsets bit for bit against packings written here from the formats'
definitions, the layer's output against both qgemm's formula and the
checkpoint's own, (q − z)·s, and the refusals. NumPy on the CPU; the same with
PyTorch tensors (CPU, and CUDA where present) at the end."""

import numpy as np
import pytest
import reference as ref
from test_weight_only_numpy import check

import qgemm

AWQ_ORDER = (0, 2, 4, 6, 1, 3, 5, 7)  # nibble i of an AWQ word holds column 8c + AWQ_ORDER[i]


def pack_awq(values_kn):
    """[R, N] codes 0…15 → int32 [R, N/8], AutoAWQ's order along N."""
    rows, n = values_kn.shape
    words = np.zeros((rows, n // 8), np.uint32)
    for c in range(n // 8):
        for i in range(8):
            words[:, c] |= values_kn[:, 8 * c + AWQ_ORDER[i]].astype(np.uint32) << (4 * i)
    return words.view(np.int32)


def pack_gptq_weight(values_kn):
    """[K, N] codes → int32 [K/8, N]: row 8r + i in nibble i of word r."""
    words = np.zeros((values_kn.shape[0] // 8, values_kn.shape[1]), np.uint32)
    for i in range(8):
        words |= values_kn[i::8, :].astype(np.uint32) << (4 * i)
    return words.view(np.int32)


def pack_gptq_zeros(values_gn):
    """[G, N] codes → int32 [G, N/8]: column 8c + i in nibble i of word c."""
    words = np.zeros((values_gn.shape[0], values_gn.shape[1] // 8), np.uint32)
    for i in range(8):
        words |= values_gn[:, i::8].astype(np.uint32) << (4 * i)
    return words.view(np.int32)


def layer(rng, n, k, group_size, zero_low=0):
    groups = k // group_size
    q = rng.integers(0, 16, (n, k), dtype=np.uint8)
    z = rng.integers(zero_low, 16, (groups, n), dtype=np.uint8)
    s = rng.uniform(1e-3, 1e-2, (groups, n)).astype(np.float16)
    return q, z, s


def check_weight(weight, q, z, s, group_size, param_dtype=np.float16):
    n, k = q.shape
    assert weight.group_size == group_size
    assert weight.w.dtype == np.uint8 and weight.w.shape == (n, k // 2)
    np.testing.assert_array_equal(qgemm.unpack_int4(weight.w), q)
    # Group-major [N, G] views of [G, N] arrays, in the parameter dtype.
    for p in (weight.scales, weight.offsets):
        assert p.dtype == param_dtype and p.shape == (n, k // group_size)
        assert p.T.flags.c_contiguous
    np.testing.assert_array_equal(weight.scales.T, s.astype(param_dtype))
    offsets = -(z.astype(np.float32) * s.astype(np.float32))  # exact in fp32
    np.testing.assert_array_equal(weight.offsets.T, offsets.astype(param_dtype))


def check_layer(rng, weight, q, z, s, group_size):
    """weight_only_mm on the converted layer: qgemm's formula exactly (the
    backend's bound), and the checkpoint's (q − z)·s within the offset's extra
    rounding (≤ half an fp16 ulp of z·s per weight) and the fp16 output."""
    a = rng.standard_normal((5, q.shape[1])).astype(np.float16)
    out = qgemm.weight_only_mm(a, *weight)
    expected, w_hat = ref.weight_only_mm(a, q, weight.scales, weight.offsets, group_size)
    check(out, expected, a, w_hat)
    w = (q.astype(np.float64) - np.repeat(z.T, group_size, axis=1)) * np.repeat(s.T, group_size, axis=1)
    checkpoint = a.astype(np.float64) @ w.T
    assert np.abs(out - checkpoint).max() <= 4e-3 * np.abs(checkpoint).max()


def check_both_layouts(rng, convert, q, z, s, group_size, param_dtype=np.float16):
    """The plain weight bit for bit; the default, prepacked one equal to
    weight_only_prepack of it and run through weight_only_mm."""
    plain = convert(prepack=False)
    check_weight(plain, q, z, s, group_size, param_dtype)
    prepacked = convert()
    np.testing.assert_array_equal(prepacked.w, qgemm.weight_only_prepack(plain.w))
    check_layer(rng, prepacked, q, z, s, group_size)


@pytest.mark.parametrize("n,k,group_size", [(48, 256, 64), (16, 512, 128), (8, 96, 32)])
def test_awq(rng, n, k, group_size):
    q, z, s = layer(rng, n, k, group_size)
    check_both_layouts(rng, lambda **kw: qgemm.from_awq(pack_awq(q.T), pack_awq(z), s, **kw), q, z, s, group_size)


@pytest.mark.parametrize("zero_offset", [1, 0])  # v1 stores z − 1, v2 stores z
@pytest.mark.parametrize("n,k,group_size", [(48, 256, 64), (24, 128, 128), (16, 64, 64)])
def test_gptq(rng, n, k, group_size, zero_offset):
    q, z, s = layer(rng, n, k, group_size, zero_low=zero_offset)
    g_idx = (np.arange(k) // group_size).astype(np.int32)
    check_both_layouts(rng, lambda **kw: qgemm.from_gptq(pack_gptq_weight(q.T), pack_gptq_zeros(z - zero_offset), s,
                                                         g_idx, zero_offset=zero_offset, **kw), q, z, s, group_size)


def test_gptq_symmetric_is_exact(rng):
    # z = 8 (v1 stores 7): the offset −8·s is exact, so ŵ = (q − 8)·s rounded once, as GPTQ's kernels.
    n, k, group_size = 32, 256, 128
    q, _, s = layer(rng, n, k, group_size)
    z = np.full((k // group_size, n), 8, np.uint8)
    weight = qgemm.from_gptq(pack_gptq_weight(q.T), pack_gptq_zeros(z - 1), s)
    _, w_hat = ref.weight_only_mm(np.zeros((1, k), np.float16), q, weight.scales, weight.offsets, group_size)
    exact = ((q.astype(np.float64) - 8) * np.repeat(s.T, group_size, axis=1)).astype(np.float16)
    np.testing.assert_array_equal(w_hat, exact)


def test_per_channel_and_fp32_parameters(rng):
    # GPTQ with group_size −1 stores one group; fp32 parameters keep −z·s exact.
    n, k = 16, 128
    q, z, s = layer(rng, n, k, k, zero_low=1)
    check_both_layouts(rng, lambda **kw: qgemm.from_gptq(pack_gptq_weight(q.T), pack_gptq_zeros(z - 1), s,
                                                         param_dtype="fp32", **kw), q, z, s, k, np.float32)


def test_refusals(rng):
    q, z, s = layer(rng, 16, 128, 32)
    qweight, qzeros = pack_gptq_weight(q.T), pack_gptq_zeros(z)
    act_order = (np.arange(128) % 4).astype(np.int32)
    with pytest.raises(ValueError, match="g_idx: an act-order"):
        qgemm.from_gptq(qweight, qzeros, s, act_order)
    with pytest.raises(ValueError, match=r"g_idx: expected a contiguous \[K=128\] vector"):
        qgemm.from_gptq(qweight, qzeros, s, np.zeros(64, np.int32))
    with pytest.raises(TypeError, match="qweight: .*int32.*fp32"):
        qgemm.from_gptq(qweight.astype(np.float32), qzeros, s)
    with pytest.raises(TypeError, match="qzeros: .*int32.*uint8"):
        qgemm.from_awq(pack_awq(q.T), z, s)
    with pytest.raises(ValueError, match="scales: .*N=16"):
        qgemm.from_gptq(qweight, qzeros, s[:, :8])
    with pytest.raises(ValueError, match="qzeros: "):
        qgemm.from_gptq(qweight, qzeros[:2], s)
    with pytest.raises(ValueError, match=r"scales: 3 groups \(rows\) do not divide K=128"):
        qgemm.from_awq(pack_awq(q.T), pack_awq(z[:3]), s[:3])
    with pytest.raises(TypeError, match="param_dtype"):
        qgemm.from_awq(pack_awq(q.T), pack_awq(z), s, param_dtype="bf16")  # NumPy has no bf16
    with pytest.raises(TypeError, match="qweight: expected a NumPy array or a PyTorch tensor"):
        qgemm.from_awq(qweight.tolist(), qzeros, s)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_torch_tensors(rng, device):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not (torch.cuda.is_available() and qgemm.built_with_cuda()):
        pytest.skip("needs a CUDA GPU and a CUDA build of qgemm")
    n, k, group_size = 40, 256, 128
    q, z, s = layer(rng, n, k, group_size)
    expected = qgemm.from_awq(pack_awq(q.T), pack_awq(z), s)
    t = lambda x: torch.from_numpy(np.ascontiguousarray(x)).to(device)  # noqa: E731
    weight = qgemm.from_awq(t(pack_awq(q.T)), t(pack_awq(z)), t(s), param_dtype="bf16")
    assert weight.w.device.type == device and weight.scales.dtype == torch.bfloat16
    np.testing.assert_array_equal(weight.w.cpu().numpy(), expected.w)
    bf16_scales = torch.from_numpy(expected.scales.astype(np.float32)).to(torch.bfloat16)
    torch.testing.assert_close(weight.scales.cpu(), bf16_scales, rtol=0, atol=0)
    assert weight.scales.t().is_contiguous()  # group-major
    # The layer in bf16 on this device against the same call on the CPU (same ŵ; summation order aside).
    a = torch.randn(3, k, dtype=torch.bfloat16)
    out = qgemm.weight_only_mm(a.to(device), *weight)
    cpu = qgemm.weight_only_mm(a, *(x.cpu() if hasattr(x, "cpu") else x for x in weight))
    torch.testing.assert_close(out.cpu().float(), cpu.float(), rtol=2**-7, atol=1e-3)
    gptq = qgemm.from_gptq(t(pack_gptq_weight(q.T)), t(pack_gptq_zeros(z)), t(s), zero_offset=0)
    np.testing.assert_array_equal(gptq.w.cpu().numpy(), expected.w)
    np.testing.assert_array_equal(gptq.offsets.cpu().numpy(), expected.offsets)
