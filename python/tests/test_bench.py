"""python -m qgemm.bench on the GPU: the wonly family runs every peer, and
each peer's output matches the fp32 reference of its case (the check that
keeps PyTorch's differently packed peers honest); a tolerance nothing meets
makes the benchmark fail; the --ops / --shapes selection (no GPU needed)."""

import json

import pytest

import qgemm
from qgemm import bench

try:
    import torch
except ImportError:
    torch = None

cuda = pytest.mark.skipif(not (torch is not None and torch.cuda.is_available() and qgemm.built_with_cuda()),
                          reason="needs PyTorch, a CUDA GPU and a CUDA build of qgemm")
# Small and odd sizes: M = 1 and 33 (decode and tensor-core kernels), N = 1000 (not a tile multiple).
SHAPES = [(1, 1000, 512), (33, 4096, 1024)]
ARGS = ["wonly", "--runs", "50", "--warmup", "2", "--no-compile", "--rounds", "2", "--cooldown", "1"]


@cuda
def test_wonly_peers_match_the_reference(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "WONLY_SHAPES", SHAPES)
    path = tmp_path / "wonly.json"
    assert bench.main(ARGS + ["--json", str(path)]) == 0
    records = json.loads(path.read_text())["results"]
    seen = {(r["op"], (r["shape"]["M"], r["shape"]["N"], r["shape"]["K"]), r["peer"]): r for r in records}
    expected = ["qgemm", "qgemm prepacked", "torch eager dequant+linear", "torch bf16 linear"]
    for label, torch_kernel in (("W4A16 g128", "torch._weight_int4pack_mm"),
                                ("W8A16 per-channel", "torch._weight_int8pack_mm")):
        for shape in SHAPES:
            peers = expected + ([torch_kernel] if hasattr(torch, torch_kernel.split(".")[1]) else [])
            peers.append("copy (same bytes)")
            for peer in peers:
                record = seen.get((f"weight_only_mm {label} bf16", shape, peer))
                assert record is not None, (label, shape, peer)
                if peer.startswith("copy"):
                    assert "max_rel_err" not in record
                else:
                    assert 0 <= record["max_rel_err"] <= bench.WONLY_TOLERANCE, record
                assert record["median_us"] > 0 and record["rounds"] == 2 and record["round_spread"] >= 0


@cuda
def test_wonly_fails_when_a_peer_misses_the_reference(monkeypatch):
    monkeypatch.setattr(bench, "WONLY_SHAPES", SHAPES[:1])
    monkeypatch.setattr(bench, "WONLY_TOLERANCE", 0.0)  # no bf16 output is exact
    assert bench.main(ARGS) == 1


def test_selection_by_op_words_and_shape():
    w4 = bench.Case("wonly", "weight_only_mm W4A16 g128 bf16", {"M": 1, "N": 4096, "K": 4096}, 0, 0, 1)
    w8 = bench.Case("wonly", "weight_only_mm W8A16 per-channel bf16", {"M": 16, "N": 4096, "K": 4096}, 0, 0, 1)
    azp = bench.Case("gemm", "scaled_mm_azp int8->bf16", {"M": 1, "N": 8, "K": 32}, 0, 0, 1)
    assert bench.selected(w4, None, None) and bench.selected(w8, {"weight_only_mm"}, None)
    assert bench.selected(w4, {"weight_only_mm W4A16"}, None) and not bench.selected(w8, {"weight_only_mm W4A16"}, None)
    assert not bench.selected(azp, {"scaled_mm"}, None)  # whole words only
    assert bench.selected(w8, {"weight_only_mm"}, {"16x4096x4096"}) and not bench.selected(w4, None, {"16x4096x4096"})
