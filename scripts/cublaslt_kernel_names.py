#!/usr/bin/env python3
"""Which kernel cuBLASLt's fp8 GEMM runs at each shape, and how long it takes.

Calls torch._scaled_mm (fp8 e4m3 A [M, K] row-major, B [K, N] column-major,
per-tensor scales, bf16 out: the cuBLASLt path `qgemm bench gemm` times as
`cublaslt-fp8`) under torch.profiler and prints, per shape, the names of the
kernels that ran. cuBLASLt's Hopper kernels spell their configuration in the
name, e.g. nvjet_sm90_qqtst_96x64_128x10_1x2_h_bz_algo2_TNN: a tile of 96
output channels × 64 tokens, k 128 per stage, 10 stages, cluster 1×2 (the
tile's first side is N's, its second M's, in both the TNN and the swapped
TNT kernels). Each shape is also timed with CUDA events over a CUDA graph of
50 calls whose weights rotate through copies that exceed L2 (a cross-check,
without the Python launch overhead; `qgemm bench` gives the figures that
count).

    python3 scripts/cublaslt_kernel_names.py 136x2560x4096 160x3072x14336 ...
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile


# The rotation and the graph timing mirror python/qgemm/bench.py's
# rotation_count and time_peer_graph, which this script cannot import: that
# module imports qgemm and so needs the built extension, and this runs where
# only PyTorch is (the device machine, before or without a qgemm build).
def copies_past_l2(make, bytes_each, l2_bytes):
    count = max(2, -(-4 * l2_bytes // bytes_each))
    return [make() for _ in range(count)]


def main(shapes):
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    print(f"# {props.name}, PyTorch {torch.__version__}, CUDA {torch.version.cuda}")
    one = torch.ones((), device=dev)
    for text in shapes:
        m, n, k = (int(x) for x in text.split("x"))
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        weights = copies_past_l2(lambda: torch.randn(n, k, device=dev).to(torch.float8_e4m3fn), n * k, l2)

        def call(i):
            return torch._scaled_mm(a, weights[i % len(weights)].t(), scale_a=one, scale_b=one,
                                    out_dtype=torch.bfloat16)

        for i in range(10):
            call(i)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(5):
                call(i)
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(50):
                call(i)
        graph.replay()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        torch.cuda.synchronize()
        mean_us = start.elapsed_time(stop) * 1000 / 50
        print(f"{text:>16}  {mean_us:7.1f} us  " + "  ".join(names))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
