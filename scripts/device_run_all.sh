#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool) from the repository root,
# with .carry/bin staged by scripts/stage_device.sh: every GoogleTest suite,
# a compute-sanitizer pass over a subset, the demo and the benchmarks. Logs
# and JSON go to $OUT. Usage: scripts/device_run_all.sh [tests|bench|all]
set -uo pipefail
what="${1:-all}"
out="${OUT:-/tmp/qgemm-out}"
mkdir -p "$out"
export QGEMM_COMMIT="$(cat .carry/bin/COMMIT)"
status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in .carry/bin/qgemm_test_*; do
    name="$(basename "$t")"
    "$t" --gtest_brief=1 > "$out/$name.log" 2>&1
    rc=$?
    [ $rc -ne 0 ] && status=1
    echo "$name rc=$rc: $(grep -E '^\[  (PASSED|FAILED)  \]|tests? ran' "$out/$name.log" | tr '\n' ' ')"
    grep -E '^\[  FAILED  \]' "$out/$name.log" | head -20
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  .carry/bin/qgemm demo 2>&1 | tee "$out/demo.log"
fi
exit $status
