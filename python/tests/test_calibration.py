"""qgemm.Calibrator from Python: the histogram against NumPy, each method's
threshold on data whose answer is known, the scale through static quantize,
torch tensors, and the errors (the C++ tests, tests/calibration/, cover the
search itself)."""

import pathlib
import re
import subprocess

import numpy as np
import pytest

import qgemm


def heavy_tailed(rng, shape):
    return rng.standard_t(3, size=shape).astype(np.float32)


def test_histogram_matches_numpy(rng):
    x = heavy_tailed(rng, (64, 300))
    c = qgemm.Calibrator(bins=512)
    c.observe(x[:32])
    c.observe(x[32:])
    a = np.abs(x.astype(np.float64))
    assert c.count == x.size
    assert c.amax == a.max()
    assert c.range > c.amax
    edges = np.arange(513) * (c.range / 512)
    # The range is fixed by the first batch and doubled as needed: compare
    # against NumPy's histogram over the final range, allowing values that
    # sit within rounding of an edge to fall on either side.
    expected, _ = np.histogram(a, bins=edges)
    assert sum(c.bins) == x.size
    assert np.abs(np.array(c.bins) - expected).sum() <= 2


def test_methods(rng):
    x = heavy_tailed(rng, (100, 1000))
    c = qgemm.Calibrator()
    c.observe(x)
    amax = float(np.abs(x).max())
    assert c.threshold() == pytest.approx(amax)
    p = c.threshold("percentile", percentile=99.9)
    assert p == pytest.approx(np.percentile(np.abs(x), 99.9), abs=c.range / 2048)
    for method in ("mse", "entropy"):
        t = c.threshold(method)
        assert 0 < t < amax
    for method in ("max", "percentile", "mse", "entropy"):
        assert c.scale(method) == pytest.approx(c.threshold(method) / 127)
        assert c.scale(method, target="fp8e4m3") == pytest.approx(c.threshold(method, target="fp8e4m3") / 448)


def test_scale_feeds_static_quantize(rng):
    x = heavy_tailed(rng, (100, 1000))
    c = qgemm.Calibrator()
    c.observe(x)

    def round_trip_error(method):
        scale = np.array([c.scale(method)], dtype=np.float32)
        q, _, _ = qgemm.quantize(x, mode="static", scale=scale)
        back = qgemm.dequantize(q, scale, None, mode="static")
        return float(np.mean((x - back) ** 2))

    assert round_trip_error("mse") < round_trip_error("max")


def test_torch_cpu_tensors(rng):
    torch = pytest.importorskip("torch")
    x = heavy_tailed(rng, (16, 256))
    from_numpy, from_torch = qgemm.Calibrator(), qgemm.Calibrator()
    from_numpy.observe(x)
    from_torch.observe(torch.from_numpy(x).to(torch.bfloat16).float())
    from_torch_bf16 = qgemm.Calibrator()
    from_torch_bf16.observe(torch.from_numpy(x).to(torch.bfloat16))
    assert from_torch.bins == from_torch_bf16.bins
    assert from_numpy.count == from_torch.count == x.size
    assert from_torch.scale("mse", target=torch.float8_e4m3fn) > 0


def test_cuda_tensors_are_copied_to_the_host(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    x = heavy_tailed(rng, (16, 256))
    on_host, from_cuda = qgemm.Calibrator(), qgemm.Calibrator()
    on_host.observe(x)
    from_cuda.observe(torch.from_numpy(x).cuda())
    assert from_cuda.bins == on_host.bins and from_cuda.amax == on_host.amax
    # The extension itself takes host memory only.
    with pytest.raises(ValueError, match="x: expected a CPU tensor"):
        qgemm._qgemm.Calibrator(2048).observe(torch.ones(4, device="cuda"))


def test_errors():
    with pytest.raises(ValueError, match="bins"):
        qgemm.Calibrator(bins=64)
    c = qgemm.Calibrator()
    with pytest.raises(TypeError, match="x: expected dtype fp32, fp16 or bf16"):
        c.observe(np.zeros(4, dtype=np.int8))
    c.observe(np.array([1.0, -2.0], dtype=np.float32))
    with pytest.raises(ValueError, match="method"):
        c.threshold("kl")
    with pytest.raises(TypeError, match="target"):
        c.threshold("max", target="int32")
    with pytest.raises(ValueError, match="percentile"):
        c.threshold("percentile", percentile=0)
    assert c.count == 2


def test_nothing_observed_yet():
    c = qgemm.Calibrator()
    assert c.threshold("entropy") == 0.0
    assert c.scale("mse") == 1.0
    c.observe(np.zeros((3, 3), dtype=np.float16))
    assert c.count == 9 and c.amax == 0.0 and c.scale() == 1.0


def cli():
    """build/tools/qgemm next to the in-tree package (build/python/qgemm)."""
    path = pathlib.Path(qgemm.__file__).resolve().parents[2] / "tools" / "qgemm"
    if not path.exists():
        pytest.skip("no in-tree qgemm command line")
    return str(path)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cli_reads_npy_batches(rng, tmp_path, dtype):
    batches = [heavy_tailed(rng, (32, 128)).astype(dtype) for _ in range(3)]
    paths = []
    for i, b in enumerate(batches):
        paths.append(str(tmp_path / f"batch{i}.npy"))
        np.save(paths[-1], b)
    run = subprocess.run([cli(), "calibrate", "--npy", ",".join(paths), "--bins", "1024"], capture_output=True,
                         text=True, check=True)
    c = qgemm.Calibrator(bins=1024)
    for b in batches:
        c.observe(b.astype(np.float32))
    assert f"{c.count} finite" in run.stdout
    rows = {}
    for line in run.stdout.splitlines():
        m = re.match(r"(max|percentile|mse|entropy)\s+(int8|fp8e4m3)\s+(\S+)\s+(\S+)", line)
        if m:
            rows[(m.group(1), m.group(2))] = (float(m.group(3)), float(m.group(4)))
    assert len(rows) == 8
    for (method, target), (threshold, scale) in rows.items():
        assert threshold == pytest.approx(c.threshold(method, target=target), rel=1e-4)
        assert scale == pytest.approx(c.scale(method, target=target), rel=1e-4)


def test_cli_refuses_what_it_cannot_read(tmp_path):
    bad = tmp_path / "ints.npy"
    np.save(bad, np.arange(6, dtype=np.int32))
    run = subprocess.run([cli(), "calibrate", "--npy", str(bad)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "ints.npy: expected little-endian float16, float32 or float64" in run.stderr
