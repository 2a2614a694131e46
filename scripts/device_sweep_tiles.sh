#!/usr/bin/env bash
# Times every M > 256 tile candidate of the Hopper dispatch (tile model in
# src/gemm/cuda/dispatch_table.h) on the issue's eight (N, K) at the M values
# given: one `qgemm bench gemm --sweep --no-peers` process per M (so a
# timeout loses one M), logs under /tmp, and the records of every M merged
# into $OUT/tiles.json (the device tool returns at most 8 files).
#   BIN=... OUT=... [KERNELS=name,...] [TIMEOUT=s] [ROUNDS=n] [PEERS=1] \
#     scripts/device_sweep_tiles.sh M [M ...]
# KERNELS: the --kernels list (default: every tile-model candidate and the
# stream-K build; for M ≤ 256 name the small tiles, as
# gemm-h200-sweep-small-m-02668d8.json did). ROUNDS (default 1) and PEERS=1
# (time cuBLAS / cuBLASLt too, cuBLAS bf16 first) as `qgemm bench gemm`
# takes them. One round without cooldown: the first implementation timed on
# a shape can read up to 20 % slow (bench/results/README.md,
# gemm-h200-sweep-tiles-844a3ae.json), so fit medians over many shapes and
# check a change in an interleaved A/B (--rounds, --cooldown).
set -uo pipefail
kernels=${KERNELS:-sm90-128x256-coop,sm90-128x256-coop-1x2,sm90-128x128-pingpong,sm90-128x192-coop,sm90-fp8-128x128-coop,sm90-128x256-coop-1x2-streamk}
nk=(6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672)
parts=/tmp/qgemm-tiles
rm -rf "$parts" && mkdir -p "$parts"
for m in "$@"; do
  shapes=$(printf "${m}x%s," "${nk[@]}")
  peers=--no-peers
  [ "${PEERS:-0}" = 1 ] && peers=
  timeout "${TIMEOUT:-300}" "$BIN/qgemm" bench gemm --sweep $peers --rounds "${ROUNDS:-1}" --kernels "$kernels" --shapes "${shapes%,}" \
    --json "$parts/m$m.json" > "$parts/m$m.log" 2>&1 || echo "M=$m failed: $(tail -1 "$parts/m$m.log")"
  echo "M=$m done $(date +%T)"
done
python3 - "$parts" "$OUT/tiles.json" <<'PY'
import glob, json, re, sys
merged = None
by_m = lambda path: int(re.search(r"m(\d+)\.json$", path).group(1))
for path in sorted(glob.glob(f"{sys.argv[1]}/m*.json"), key=by_m):
    part = json.load(open(path))
    if merged is None:
        merged, commands = part, [part["command"]]
    else:
        merged["records"] += part["records"]
        commands.append(part["command"])
if merged is not None:
    merged["command"] = " ; ".join(commands)
    json.dump(merged, open(sys.argv[2], "w"), separators=(",", ":"))
    print(f"wrote {sys.argv[2]}: {len(commands)} M values, {len(merged['records'])} records")
PY
