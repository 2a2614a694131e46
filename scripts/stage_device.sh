#!/usr/bin/env bash
# Stages what the GPU machine needs into .carry/ (git-ignored): the test
# executables and the qgemm CLI built here (the GPU machine has no
# GoogleTest), and the CUTLASS headers for building the Python extension
# there. Usage: scripts/stage_device.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
rm -rf "$root/.carry/bin"
mkdir -p "$root/.carry/bin"
cp "$build/tools/qgemm" "$root/.carry/bin/"
find "$build/tests" -maxdepth 2 -type f -name 'qgemm_test_*' -perm -u+x -exec cp {} "$root/.carry/bin/" \;
# xz: the carried tree must stay under the device tool's 64 MiB (gzip: 67 MiB).
strip "$root/.carry/bin/"qgemm* && xz -T2 -6 "$root/.carry/bin/"qgemm*
git -C "$root" rev-parse --short=12 HEAD > "$root/.carry/bin/COMMIT"
du -sh "$root/.carry/bin"
