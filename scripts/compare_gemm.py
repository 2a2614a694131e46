#!/usr/bin/env python3
"""Compare the dispatched qgemm timings of two `qgemm bench gemm --json` files.

    scripts/compare_gemm.py BEFORE.json AFTER.json [--changed]

For every shape in both files and each of qgemm-int8, qgemm-fp8 and
qgemm-fp8-fast: the kernel the dispatch ran in each file (its GemmKernel
number), the median µs before → after, their ratio (after / before: below 1
is faster), and the after-run against its cuBLASLt peer (cuBLASLt int8 for
int8, cuBLASLt fp8 for both fp8 modes; above 1 is faster than the peer).
Then, per implementation, the geometric mean, minimum and maximum of the
ratio. With --changed, only the shapes whose kernel changed are listed and
summed up; the unchanged ones show how far two calls drift apart.

This is how docs/gemm.md's before → after figures are read, e.g.
    scripts/compare_gemm.py bench/results/gemm-h200-small-m-ab-02668d8.json \\
        bench/results/gemm-h200-small-m-after-dcc0d50.json
"""
import argparse

from plot_gemm import geomean, load  # the same JSON reading (GPU records, keyed by (M, N, K))

IMPLS = {"qgemm-int8": "cublaslt-int8", "qgemm-fp8": "cublaslt-fp8", "qgemm-fp8-fast": "cublaslt-fp8"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--changed", action="store_true", help="only the shapes whose kernel changed")
    args = parser.parse_args()
    before_report, before, _ = load(args.before)
    after_report, after, _ = load(args.after)
    print(f"before: {before_report['commit']}  after: {after_report['commit']}  ({after_report['device']})")
    shapes = sorted(set(before) & set(after))
    for impl, peer in IMPLS.items():
        ratios = []
        for shape in shapes:
            old, new = before[shape].get(impl), after[shape].get(impl)
            if old is None or new is None:
                continue
            old_kernel, new_kernel = int(old.get("kernel", -1)), int(new.get("kernel", -1))
            if args.changed and old_kernel == new_kernel:
                continue
            ratio = new["median_us"] / old["median_us"]
            ratios.append(ratio)
            peer_record = after[shape].get(peer)
            against_peer = f"{peer_record['median_us'] / new['median_us']:.3f}x {peer}" if peer_record else "no peer"
            label = "x".join(str(d) for d in shape)
            print(f"{impl:15s} {label:16s} kernel {old_kernel:2d} -> {new_kernel:2d}  "
                  f"{old['median_us']:8.1f} -> {new['median_us']:8.1f} us  x{ratio:.3f}  ({against_peer})")
        if ratios:
            print(f"{impl}: {len(ratios)} shapes, time after / before geomean {geomean(ratios):.3f}, "
                  f"min {min(ratios):.3f}, max {max(ratios):.3f}\n")


if __name__ == "__main__":
    main()
