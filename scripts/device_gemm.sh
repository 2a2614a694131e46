#!/usr/bin/env bash
# GPU batch for the scaled GEMMs, run on the device machine from the repo root
# with the binaries staged in .carry/gemm (qgemm_test_gemm, qgemm):
#   scripts/device_gemm.sh [tests] [sanitize] [bench] [sweep]
# Writes logs and bench_gemm.json under $OUT (or ./gemm-out). Expected time on
# an H100: tests ~5 min (12 shards; the device machines differ in CPU speed), sanitize ~2-3 min, bench ~1 min (sweep ~1 min).
set -uo pipefail
BIN=${BIN:-.carry/gemm}
OUT=${OUT:-gemm-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
nvidia-smi -L
status=0
for phase in "$@"; do
  case $phase in
    tests)
      # Sharded (run_sharded_tests.sh): the CPU reference dominates.
      bash scripts/run_sharded_tests.sh "$OUT" "$BIN/qgemm_test_gemm" || status=1 ;;
    sanitize)
      # Representative subset: every kernel forced once on a small ragged
      # shape (the direct-store one also at an odd N), the dispatcher on odd
      # M, views, misaligned pointers and unaligned outputs; the Hopper decode
      # kernel (shared-memory stages) at M on both sides of 8, with its ring
      # of stages reused within and across tiles, walked in both K directions; the stream-K kernel split,
      # with its workspace, and whole-tile.
      filter='Forced/ScaledMmKernel.*17x272x208*:Forced/ScaledMmKernel.*/sm90_skinny_stream_3x136x8208:Forced/ScaledMmKernel.*/sm90_skinny_stream_13x1001x3088:Forced/ScaledMmKernel.*/sm90_skinny_stream_5x8192x208:Forced/ScaledMmKernel.*/sm90_skinny_stream_4x4111x2064:Forced/ScaledMmKernel.*/sm90_direct_store_5x1001x208:ScaledMmDispatch.SubMatrixViews:ScaledMmDispatch.MisalignedPointersFallBack:ScaledMmDispatch.UnalignedOutputsRunTheDirectStoreKernelOnHopper:ModelShapes/ScaledMmGrid.*/1000x1000:ModelShapes/ScaledMmGrid.*/4096x48:ScaledMmStreamK.DeterministicAndDataParallelWithoutRoom'
      timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$BIN/qgemm_test_gemm" --gtest_brief=1 \
        --gtest_filter="$filter" 2>&1 | tee "$OUT/memcheck.log" | tail -8 || status=1
      timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 "$BIN/qgemm_test_gemm" --gtest_brief=1 \
        --gtest_filter='Forced/ScaledMmKernel.*/fallback_17x*:Forced/ScaledMmKernel.*/skinny_*:Forced/ScaledMmKernel.*/sm90*17x*:Forced/ScaledMmKernel.*/sm90_skinny_stream_3x136x8208:Forced/ScaledMmKernel.*/sm90_skinny_stream_5x8192x208:Forced/ScaledMmKernel.*/sm90_skinny_stream_4x4111x2064' \
        2>&1 | tee "$OUT/racecheck.log" | tail -8 || status=1 ;;
    bench)
      timeout 150 "$BIN/qgemm" bench gemm --json "$OUT/bench_gemm.json" > "$OUT/bench.log" 2>&1 || status=1
      tail -4 "$OUT/bench.log" ;;
    sweep)
      timeout 240 "$BIN/qgemm" bench gemm --sweep --json "$OUT/bench_gemm.json" > "$OUT/bench.log" 2>&1 || status=1
      tail -4 "$OUT/bench.log" ;;
  esac
done
exit $status
