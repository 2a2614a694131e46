#!/usr/bin/env bash
# Runs each GoogleTest binary named in $QGEMM_TEST_SHARDS shards at once
# (default 12), the binaries one after the other, and prints one line per
# binary (passed, skipped, seconds), its failures, its slowest shard and
# its five slowest tests (what to shorten when a shard nears its timeout). Used on the GPU
# machine by device_run_all.sh and device_gemm.sh.
#   scripts/run_sharded_tests.sh LOG_DIR BINARY...
# Many shards because the CPU reference's exact sums are single-threaded per
# case, and the heavy cases of a suite must not share a shard (at 4 the gemm
# suite's fp8 cases put one shard past 540 s); the machine has 16 cores.
# Each shard is cut at $QGEMM_SHARD_TIMEOUT seconds (default 540) and named
# when it is. Exit status 1 when any shard failed or was cut.
set -uo pipefail
logs="$1"; shift
mkdir -p "$logs"
shards="${QGEMM_TEST_SHARDS:-12}"
limit="${QGEMM_SHARD_TIMEOUT:-540}"
threads=$(( $(nproc) / shards )); [ "$threads" -ge 1 ] || threads=1
status=0
for t in "$@"; do
  name="$(basename "$t")"
  rm -f "$logs/$name"-*.log  # an earlier run's shards
  start=$(date +%s)
  pids=()
  for ((shard = 0; shard < shards; ++shard)); do
    OMP_NUM_THREADS=$threads GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard \
      timeout "$limit" stdbuf -oL "$t" > "$logs/$name-$shard.log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for ((shard = 0; shard < shards; ++shard)); do
    wait "${pids[$shard]}"; code=$?
    if [ $code -ne 0 ]; then
      rc=1
      [ $code -eq 124 ] && echo "$name shard $shard/$shards: cut at $limit s"
    fi
  done
  [ $rc -ne 0 ] && status=1
  passed=$(awk '/^\[  PASSED  \]/ {n += $4} END {print n + 0}' "$logs/$name"-*.log)
  skipped=$(awk '/^\[  SKIPPED \]/ && $5 ~ /^tests?[.,]$/ {n += $4} END {print n + 0}' "$logs/$name"-*.log)
  echo "$name rc=$rc: passed $passed, skipped $skipped ($shards shards, $(( $(date +%s) - start )) s)"
  grep -hE '^\[  FAILED  \]' "$logs/$name"-*.log | sort -u | head -20
  # "[==========] N tests from S test suites ran. (T ms total)" per shard.
  awk '/^\[==========\] .* ran\./ {gsub(/[(]/, "", $(NF-2)); if ($(NF-2) + 0 > most) most = $(NF-2) + 0}
       END {printf "  slowest shard %.0f s; slowest tests (ms):\n", most / 1000}' "$logs/$name"-*.log
  sed -nE 's/^\[       OK \] (.*) \(([0-9]+) ms\)$/\2 \1/p' "$logs/$name"-*.log | sort -rn | head -5 | sed 's/^/    /'
done
exit $status
