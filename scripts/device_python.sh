#!/usr/bin/env bash
# Runs on the GPU machine from the repository root (through the device tool):
# builds the extension for that machine's Python (3.12, PyTorch) with the CUDA
# backend — CUTLASS headers carried in .deps/cutlass — and runs the Python
# tests. Summary last.
set -uo pipefail
out="${OUT:-/tmp/qgemm-out}"
mkdir -p "$out"
start=$(date +%s)
cmake -S . -B build-py -G Ninja -DQGEMM_BUILD_TESTS=OFF -DQGEMM_BUILD_TOOLS=OFF -DQGEMM_BUILD_PYTHON=ON \
  -DQGEMM_CUDA_ARCHS="${QGEMM_CUDA_ARCHS:-90a}" -DPython_EXECUTABLE="$(command -v python3)" >"$out/py-configure.log" 2>&1 \
  || { tail -30 "$out/py-configure.log"; exit 1; }
cmake --build build-py --parallel 16 >"$out/py-build.log" 2>&1 || { grep -E "error" "$out/py-build.log" | head -30; exit 1; }
echo "python extension built in $(( $(date +%s) - start )) s"
PYTHONUNBUFFERED=1 PYTHONPATH="$PWD/build-py/python" python3 -m pytest -q -p no:cacheprovider python/tests \
  2>&1 | tee "$out/pytest.log" | tail -25
