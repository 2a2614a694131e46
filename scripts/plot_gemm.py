#!/usr/bin/env python3
"""Plot and summarize `qgemm bench gemm --json` results.

  scripts/plot_gemm.py bench/results/gemm-h100.json [--png out.png] [--md out.md]

Writes a PNG of speedup over cuBLAS bf16 against M (one panel per (N, K),
one line per implementation), prints the acceptance figures of the issue
(TOPS at 8192^3, ratios to cuBLASLt, weight bandwidth at small M) and, when
the run used --sweep, the fastest kernel config per shape.
"""
import argparse
import collections
import json
import math
import sys

PEERS = ["qgemm-int8", "qgemm-fp8", "qgemm-fp8-fast", "cublaslt-int8", "cublaslt-int8+epilogue", "cublaslt-fp8", "cublaslt-fp8-fastaccum", "cublas-bf16"]


def load(path):
    with open(path) as f:
        data = json.load(f)
    table = collections.defaultdict(dict)  # (m, n, k) -> impl -> record
    copy_gbps = None
    for r in data["records"]:
        if r["op"] == "copy":
            copy_gbps = r.get("copy_gbps", r.get("gbps"))  # older gemm files: "gbps"
        if r["op"] != "scaled_mm" or r["device"] != "cuda":
            continue
        m, n, k = (int(x) for x in r["shape"].split("x"))
        table[(m, n, k)][r["impl"]] = r
    return data, table, copy_gbps


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def ratio(table, shape, num, den):
    rec = table[shape]
    if num in rec and den in rec:
        return rec[den]["median_us"] / rec[num]["median_us"]
    return None


def summary(table, copy_gbps):
    lines = []
    big = (8192, 8192, 8192)
    def tops(shape, impl):
        r = table.get(shape, {}).get(impl)
        return r["ops"] / r["median_us"] / 1e6 if r else float("nan")
    lines.append(f"device copy bandwidth: {copy_gbps:.0f} GB/s (read + write)" if copy_gbps else "no copy record")
    for impl in ["qgemm-int8", "qgemm-fp8", "qgemm-fp8-fast", "cublaslt-int8", "cublaslt-fp8",
                 "cublaslt-fp8-fastaccum", "cublas-bf16"]:
        lines.append(f"{impl:24s} 8192^3: {tops(big, impl):7.0f} TOPS")
    large = [s for s in table if s[0] >= 1024 and "qgemm-int8" in table[s]]
    if large:
        worst = min(large, key=lambda s: tops(s, "qgemm-int8"))
        lines.append(f"qgemm-int8 slowest shape with M >= 1024: {'x'.join(map(str, worst))} at {tops(worst, 'qgemm-int8'):.0f} TOPS")
    for num, den, min_m, max_m in [("qgemm-int8", "cublaslt-int8", 256, None), ("qgemm-int8", "cublas-bf16", 1024, None),
                                   ("qgemm-int8", "cublaslt-int8+epilogue", 1, None), ("qgemm-fp8", "cublaslt-fp8", 1, None),
                                   ("qgemm-fp8-fast", "cublaslt-fp8-fastaccum", 1, None),
                                   ("qgemm-fp8-fast", "cublaslt-fp8", 1, None),
                                   ("qgemm-fp8-fast", "qgemm-fp8", 1, None),
                                   ("qgemm-int8", "cublaslt-int8", 1, None)]:
        rs = [(s, ratio(table, s, num, den)) for s in sorted(table) if s[0] >= min_m]
        rs = [(s, r) for s, r in rs if r]
        if rs:
            worst = min(rs, key=lambda x: x[1])
            lines.append(f"{num} vs {den}, M >= {min_m}: geomean {geomean([r for _, r in rs]):.2f}x, "
                         f"min {worst[1]:.2f}x at {'x'.join(map(str, worst[0]))}")
    # --rounds: how far each implementation's round medians spread.
    spreads = sorted((r["round_spread"], s, impl) for s in table for impl, r in table[s].items() if "round_spread" in r)
    if spreads:
        rounds = sorted({int(r["rounds"]) for s in table for r in table[s].values() if "rounds" in r})
        top = spreads[-1]
        lines.append(f"rounds {'/'.join(map(str, rounds))}: round spread (max - min) / median, median "
                     f"{100 * spreads[len(spreads) // 2][0]:.2f} %, largest {100 * top[0]:.1f} % "
                     f"({top[2]} at {'x'.join(map(str, top[1]))})")
    for impl in ["qgemm-int8", "qgemm-fp8", "qgemm-fp8-fast", "cublaslt-int8", "cublaslt-fp8"]:
        fr = [(s, table[s][impl].get("weight_bw_fraction", 0)) for s in sorted(table) if s[0] <= 16 and impl in table[s]]
        if fr:
            worst = min(fr, key=lambda x: x[1])
            lines.append(f"{impl} M <= 16 weight bytes/time / copy bandwidth: min {worst[1]:.2f} at "
                         f"{'x'.join(map(str, worst[0]))}, mean {sum(f for _, f in fr) / len(fr):.2f}")
    return lines


def sweep_report(table):
    lines = []
    for shape in sorted(table, key=lambda s: (s[1], s[2], s[0])):
        for dtype in ["int8", "fp8", "fp8-fast"]:
            sweeps = {i: r for i, r in table[shape].items() if i.startswith(f"sweep-qgemm-{dtype}-")
                      and not (dtype == "fp8" and i.startswith("sweep-qgemm-fp8-fast-"))}
            if not sweeps:
                continue
            best = min(sweeps, key=lambda i: sweeps[i]["median_us"])
            chosen = table[shape].get(f"qgemm-{dtype}")
            cells = " ".join(f"{i.split(dtype + '-', 1)[1]}={r['median_us']:.1f}" for i, r in sorted(sweeps.items()))
            lines.append(f"{'x'.join(map(str, shape)):18s} {dtype:8s} best {best.split(dtype + '-', 1)[1]:22s} "
                         f"dispatched {chosen['median_us'] if chosen else float('nan'):.1f}us | {cells}")
    return lines


def plot(table, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = sorted({(n, k) for (_, n, k) in table})
    cols = 3
    rows = (len(groups) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, (n, k) in zip(axes.flat, groups):
        ms = sorted(m for (m, n2, k2) in table if (n2, k2) == (n, k))
        for impl in PEERS:
            xs, ys = [], []
            for m in ms:
                r = ratio(table, (m, n, k), impl, "cublas-bf16")
                if r:
                    xs.append(m)
                    ys.append(r)
            if xs:
                ax.plot(xs, ys, marker="o", markersize=3, label=impl)
        ax.set_xscale("log", base=2)
        ax.axhline(1.0, color="gray", linewidth=0.5)
        ax.set_title(f"N={n}, K={k}")
        ax.set_xlabel("M")
        ax.set_ylabel("speedup over cuBLAS bf16")
        ax.grid(True, which="both", linewidth=0.3)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower right", fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--png")
    ap.add_argument("--md", help="also write the summary and sweep lines to this file")
    args = ap.parse_args()
    data, table, copy_gbps = load(args.json)
    out = [f"device: {data['device']}  commit: {data['commit']}"]
    if data.get("note"):
        out.append(f"note: {data['note']}")
    out += summary(table, copy_gbps)
    sweep = sweep_report(table)
    if sweep:
        out += ["", "sweep (median us per kernel config):"] + sweep
    print("\n".join(out))
    if args.md:
        with open(args.md, "w") as f:
            f.write("\n".join(out) + "\n")
    if args.png:
        plot(table, args.png, f"qgemm scaled_mm, {data['device']}")
        print(f"wrote {args.png}", file=sys.stderr)


if __name__ == "__main__":
    main()
