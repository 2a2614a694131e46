#!/usr/bin/env python3
"""Markdown tables for docs/performance.md from the committed bench JSON:

    scripts/perf_tables.py quant bench/results/quant-h100.json
    scripts/perf_tables.py fused bench/results/fused-h100.json

quant: device time per call (launches queued behind a spin kernel) and, in
brackets, the fraction of the 1 GiB copy bandwidth / of a copy of the same
size. fused: the fraction of the 1 GiB copy bandwidth and the speed-up over
the unfused chain of simple kernels.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def header(report):
    return f"{report['device']}, commit {report['commit']}: `{report['command']}`\n"


def quant_table(report):
    impls = ["qgemm-token-int8", "qgemm-token-fp8", "qgemm-group128-int8", "qgemm-static-int8",
             "qgemm-dequant-token-int8"]
    titles = ["per-token int8", "per-token fp8", "per-group(128) int8", "static int8", "dequantize per-token"]
    rows = {}
    for r in report["records"]:
        if r["impl"] in impls:
            rows.setdefault(r["shape"], {})[r["impl"]] = r
    lines = ["| T×H | " + " | ".join(titles) + " |", "| --- |" + " --- |" * len(titles)]
    for shape in sorted(rows, key=lambda s: [int(x) for x in s.split("x")]):
        cells = []
        for impl in impls:
            r = rows[shape].get(impl)
            if r is None:
                cells.append("")
                continue
            us = r.get("device_us", r["median_us"])
            big = int(shape.split("x")[0]) >= 256
            extra = f" ({r['frac_of_copy_bw'] * 100:.0f} % / {r['frac_of_same_size_copy'] * 100:.0f} %)" if big else ""
            cells.append(f"{us:.1f} µs{extra}")
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fused_table(report):
    shapes = []
    rows = {}
    for r in report["records"]:
        if not r["impl"].startswith("qgemm") or "frac_of_copy_bw" not in r:
            continue
        if int(r["shape"].split("x")[0]) < 256:
            continue
        if r["shape"] not in shapes:
            shapes.append(r["shape"])
        rows.setdefault((r["op"], r["impl"][len("qgemm-"):]), {})[r["shape"]] = r
    shapes.sort(key=lambda s: [int(x) for x in reversed(s.split("x"))])
    lines = ["| op | variant | " + " | ".join(shapes) + " |", "| --- | --- |" + " --- |" * len(shapes)]
    for (op, variant), by_shape in rows.items():
        cells = []
        for s in shapes:
            r = by_shape.get(s)
            cells.append("" if r is None else
                         f"{r['frac_of_copy_bw'] * 100:.0f} % ({r.get('speedup_vs_unfused', 0):.1f}×)")
        lines.append(f"| {op} | {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    family, path = sys.argv[1], sys.argv[2]
    report = load(path)
    print(header(report))
    print({"quant": quant_table, "fused": fused_table}[family](report))


if __name__ == "__main__":
    main()
