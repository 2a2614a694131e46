#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool) from the repository root:
# uses the extension carried in .carry/py (scripts/stage_device.sh python), or
# else builds one for that machine's python3 (3.12, PyTorch) with the CUDA
# backend — CUTLASS headers carried in .deps/cutlass or
# .carry/cutlass.tar.xz; ~5 minutes — then runs the
# Python tests and/or (after them) the Python benchmarks. Logs and JSON go to
# $OUT; pytest's summary line is printed after its failures.
#   scripts/device_python.sh [tests|bench|all]   (default: tests)
# Environment: QGEMM_CUDA_ARCHS (default 90a), QGEMM_COMMIT (for bench JSON),
# PYTEST_ARGS (extra pytest arguments, e.g. "-k torch"), QGEMM_BENCH_FAMILIES
# (default "gemm quant fused wonly"), QGEMM_BENCH_ARGS (extra arguments, e.g. "--no-compile"),
# QGEMM_BENCH_TIMEOUT (seconds per family, 250).
set -uo pipefail
what="${1:-tests}"
out="${OUT:-/tmp/qgemm-out}"
build="${QGEMM_PY_BUILD_DIR:-build-py}"
mkdir -p "$out"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
# The CUTLASS headers: .deps/cutlass if carried as files, else the archive
# scripts/stage_device.sh writes (.carry/cutlass.tar.xz, ~1 MB instead of 27).
if [ ! -d .deps/cutlass ] && [ -f .carry/cutlass.tar.xz ]; then
  xz -dc .carry/cutlass.tar.xz | tar xf -
fi
python3 -c "import numpy, pytest" 2>/dev/null \
  || { echo "python3 lacks numpy or pytest"; python3 -m pip list 2>/dev/null | grep -iE "numpy|pytest|torch"; exit 1; }
carried=$(ls .carry/py/_qgemm.cpython-*.so.xz 2>/dev/null | head -n 1)
if [ -n "$carried" ]; then
  # The extension built on the workstation (scripts/build_device_python.sh,
  # staged by scripts/stage_device.sh python): the package is its module next
  # to this checkout's python/qgemm/ files.
  mkdir -p "$build/python/qgemm"
  cp python/qgemm/*.py python/qgemm/py.typed "$build/python/qgemm/"
  xz -dc "$carried" > "$build/python/qgemm/$(basename "$carried" .xz)"
  echo "extension carried: $(basename "$carried" .xz), built at $(cat .carry/py/COMMIT 2>/dev/null || echo '?')"
else
  python3 -c "import nanobind" 2>/dev/null || { echo "python3 lacks nanobind"; exit 1; }
  start=$(date +%s)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQGEMM_BUILD_TESTS=OFF -DQGEMM_BUILD_TOOLS=OFF \
    -DQGEMM_BUILD_PYTHON=ON -DQGEMM_CUDA_ARCHS="${QGEMM_CUDA_ARCHS:-90a}" -DCUTLASS_DIR="$PWD/.deps/cutlass" \
    -DPython_EXECUTABLE="$(command -v python3)" >"/tmp/py-configure.log" 2>&1 \
    || { tail -30 /tmp/py-configure.log; echo "configure failed"; exit 1; }
  # Only the extension (and the library under it): no tests, no CLI.
  ninja -C "$build" -j "${QGEMM_JOBS:-16}" _qgemm qgemm_python_files >/tmp/py-build.log 2>&1 \
    || { grep -E -A3 "error|FAILED" /tmp/py-build.log | head -60; echo "build failed"; exit 1; }
  echo "extension built in $(( $(date +%s) - start )) s: $(ls "$build"/python/qgemm/_qgemm*.so)"
fi
export PYTHONPATH="$PWD/$build/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python3 -c "import qgemm, torch; print('qgemm', qgemm.__version__, 'cuda build', qgemm.built_with_cuda(), \
'archs', qgemm.cuda_archs(), 'devices', qgemm.cuda_device_count(), '| torch', torch.__version__, \
torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU')"
status=0
if [ "$what" = tests ] || [ "$what" = all ]; then
  # shellcheck disable=SC2086
  python3 -m pytest -q -p no:cacheprovider -rs ${PYTEST_ARGS:-} python/tests >"$out/pytest.log" 2>&1 || status=1
  grep -E "^(FAILED|ERROR)" "$out/pytest.log" | head -30
  grep -E "^E  " "$out/pytest.log" | head -20
  tail -n 1 "$out/pytest.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  for family in ${QGEMM_BENCH_FAMILIES:-gemm quant fused wonly}; do
    # shellcheck disable=SC2086
    timeout "${QGEMM_BENCH_TIMEOUT:-250}" python3 -m qgemm.bench "$family" ${QGEMM_BENCH_ARGS:-} \
      --json "$out/python-bench-$family.json" 2>&1 | tee "$out/python-bench-$family.log" \
      | tail -40 || status=1
  done
fi
exit $status
