#!/usr/bin/env bash
# Sets up, builds and runs the main job: `qgemm demo` (a W8A8 Llama-sized
# linear layer on the GPU when one is present, else on the CPU).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
"${QGEMM_BUILD_DIR:-$root/build}/tools/qgemm" demo "$@"
