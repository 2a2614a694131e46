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
      # Every staged suite, sharded (run_sharded_tests.sh).
      bash scripts/run_sharded_tests.sh "$logs" "$bin"/qgemm_test_* || status=1 ;;
    bench:*)
      op="${what#bench:}"
      "$bin/qgemm" bench "$op" --json "$out/$op.json" > "$logs/bench-$op.log" 2>&1 || status=1
      echo "bench $op: $(grep -c . "$logs/bench-$op.log") lines"
      cat "$logs/bench-$op.log" >> "$out/bench.log" ;;
  esac
done
exit $status
