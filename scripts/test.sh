#!/usr/bin/env bash
# Sets up, builds and runs every test: the GoogleTest suites through ctest
# and the Python tests through pytest. GPU tests skip without a GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$@"
build="${QGEMM_BUILD_DIR:-$root/build}"
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)"
if [ -d "$root/python/tests" ]; then
  PYTHONPATH="$build/python:${PYTHONPATH:-}" python3 -m pytest -q "$root/python/tests"
fi
