#!/usr/bin/env bash
# Times every M > 256 tile candidate of the Hopper dispatch (tile model in
# src/gemm/cuda/dispatch_table.h) on the issue's eight (N, K) at the M values
# given, one JSON per M under $OUT (so a timeout keeps what finished).
#   BIN=... OUT=... [KERNELS=name,...] scripts/device_sweep_tiles.sh M [M ...]
# KERNELS: the --kernels list (default: the M > 256 candidates and the 64×128
# cluster-2×1 ping-pong tile).
set -uo pipefail
kernels=${KERNELS:-sm90-128x256-coop,sm90-128x256-coop-1x2,sm90-128x128-pingpong,sm90-64x128-pingpong-2x1,sm90-fp8-128x192-coop,sm90-fp8-128x128-coop}
nk=(6144x4096 4096x4096 28672x4096 4096x14336 10240x8192 8192x8192 57344x8192 8192x28672)
for m in "$@"; do
  shapes=$(printf "${m}x%s," "${nk[@]}")
  timeout 300 "$BIN/qgemm" bench gemm --sweep --no-peers --kernels "$kernels" --shapes "${shapes%,}" \
    --json "$OUT/tiles-m$m.json" > "$OUT/tiles-m$m.log" 2>&1 || echo "M=$m failed: $(tail -1 "$OUT/tiles-m$m.log")"
  echo "M=$m done $(date +%T)"
done
