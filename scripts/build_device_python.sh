#!/usr/bin/env bash
# Builds, on this workstation, the Python extension for the GPU machine's
# Python 3.12 (the device tool's machine has no network, and building it there
# costs ~5 of the session's 30 device minutes): build-py312/, configured like
# build/ (same CUDA architectures and flags, so ccache serves the whole library
# and only the bindings compile). scripts/stage_device.sh python then stages it.
#   scripts/build_device_python.sh [PYTHON3.12]
# PYTHON3.12: an interpreter of 3.12 (default: python3.12 on PATH, else pyenv's);
# nanobind is installed into it when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${1:-}"
if [ -z "$python" ]; then
  python=$(command -v python3.12 2>/dev/null || true)
  "$python" --version >/dev/null 2>&1 || python=$(ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 2>/dev/null | tail -n 1)
fi
[ -n "$python" ] && "$python" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null \
  || { echo "build_device_python.sh: no Python 3.12 found; pass one" >&2; exit 1; }
"$python" -c "import nanobind" 2>/dev/null || "$python" -m pip install -q nanobind
archs=$(sed -n 's/^QGEMM_CUDA_ARCHS:STRING=//p' "$root/build/CMakeCache.txt" 2>/dev/null || true)
cmake -S "$root" -B "$root/build-py312" -G Ninja -DCMAKE_BUILD_TYPE=Release -DQGEMM_BUILD_TESTS=OFF \
  -DQGEMM_BUILD_TOOLS=OFF -DQGEMM_BUILD_PYTHON=ON -DQGEMM_CUDA_ARCHS="${archs:-90a;89;80}" \
  -DPython_EXECUTABLE="$python" >/dev/null
cmake --build "$root/build-py312" --target _qgemm -j "$(nproc)"
ls "$root"/build-py312/python/qgemm/_qgemm.cpython-312-*.so
