#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool) from the repository root,
# with .carry/bin staged by scripts/stage_device.sh: every GoogleTest suite,
# then the named benchmarks. Logs and JSON go to $OUT.
# Usage: scripts/device_run_all.sh [tests] [bench:<op>...]
set -uo pipefail
out="${OUT:-/tmp/qgemm-out}"
logs=/tmp/qgemm-logs  # only JSON goes to $OUT (the device tool returns at most 8 files)
mkdir -p "$out" "$logs"
bin=/tmp/qgemm-bin
mkdir -p "$bin"
for f in .carry/bin/*; do
  case "$f" in
    *.gz) gunzip -c "$f" > "$bin/$(basename "$f" .gz)" && chmod +x "$bin/$(basename "$f" .gz)" ;;
    *.xz) xz -dc "$f" > "$bin/$(basename "$f" .xz)" && chmod +x "$bin/$(basename "$f" .xz)" ;;
    *) cp "$f" "$bin/" ;;
  esac
done
export QGEMM_COMMIT="$(cat "$bin/COMMIT")"
status=0
for what in "$@"; do
  case "$what" in
    tests)
      # Each suite in $QGEMM_TEST_SHARDS shards at once (default 12: the
      # CPU reference's exact sums are single-threaded per case and the
      # heavy cases of one suite must not share a shard; the machine has 16
      # cores), the suites one after the other, each shard cut at
      # $QGEMM_SHARD_TIMEOUT seconds (a cut shard reports rc=1 and is named).
      shards="${QGEMM_TEST_SHARDS:-12}"
      threads=$(( $(nproc) / shards )); [ "$threads" -ge 1 ] || threads=1
      for t in "$bin"/qgemm_test_*; do
        name="$(basename "$t")"
        start=$(date +%s)
        pids=()
        for ((shard = 0; shard < shards; ++shard)); do
          OMP_NUM_THREADS=$threads GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$shard \
            timeout "${QGEMM_SHARD_TIMEOUT:-540}" stdbuf -oL "$t" --gtest_brief=1 > "$logs/$name-$shard.log" 2>&1 &
          pids+=($!)
        done
        rc=0
        for ((shard = 0; shard < shards; ++shard)); do
          wait "${pids[$shard]}"; code=$?
          if [ $code -ne 0 ]; then
            rc=1
            [ $code -eq 124 ] && echo "$name shard $shard/$shards: cut at ${QGEMM_SHARD_TIMEOUT:-540} s"
          fi
        done
        [ $rc -ne 0 ] && status=1
        passed=$(awk '/^\[  PASSED  \]/ {n += $4} END {print n + 0}' "$logs/$name"-*.log)
        skipped=$(awk '/^\[  SKIPPED \]/ && $5 ~ /^tests?,$/ {n += $4} END {print n + 0}' "$logs/$name"-*.log)
        echo "$name rc=$rc: passed $passed, skipped $skipped ($shards shards, $(( $(date +%s) - start )) s)"
        grep -hE '^\[  FAILED  \]' "$logs/$name"-*.log | head -20
      done ;;
    bench:*)
      op="${what#bench:}"
      "$bin/qgemm" bench "$op" --json "$out/$op.json" > "$logs/bench-$op.log" 2>&1 || status=1
      echo "bench $op: $(grep -c . "$logs/bench-$op.log") lines"
      cat "$logs/bench-$op.log" >> "$out/bench.log" ;;
  esac
done
exit $status
