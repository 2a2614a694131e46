#!/usr/bin/env bash
# Compiles one CUDA source of the library for sm_90a with its build flags
# (from BUILD/compile_commands.json) and prints, per kernel, the registers
# and spills ptxas reports; with a pattern, also the SASS of the kernels
# whose mangled name contains it. No GPU needed: this is how the decode
# kernel's load section and registers were counted (docs/weight_only.md,
# "32-bit load offsets").
#
#   scripts/sass.sh [--build DIR] SOURCE.cu [NAME_PATTERN]
#
# The disassembler (cuobjdump and the nvdisasm it runs, from NVIDIA's
# nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm PyPI wheels; the CUDA
# toolkit here ships without them) is fetched into .deps/nvtools
# (git-ignored) on first use.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
if [ "${1:-}" = "--build" ]; then build="$2"; shift 2; fi
[ $# -ge 1 ] || { echo "usage: scripts/sass.sh [--build DIR] SOURCE.cu [NAME_PATTERN]" >&2; exit 2; }
source="$(realpath "$1")"
pattern="${2:-}"
[ -f "$build/compile_commands.json" ] || { echo "sass.sh: no $build/compile_commands.json (configure first)" >&2; exit 1; }

tools="$root/.deps/nvtools"
cuobjdump="$(find "$tools" -name cuobjdump -type f 2>/dev/null | head -1 || true)"
if [ -n "$pattern" ] && { [ -z "$cuobjdump" ] || [ ! -x "$(dirname "$cuobjdump")/nvdisasm" ]; }; then
  echo "fetching cuobjdump and nvdisasm (NVIDIA's PyPI wheels) into $tools" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm -d "$tmp"
  mkdir -p "$tools"
  for wheel in "$tmp"/*.whl; do python3 -m zipfile -e "$wheel" "$tools"; done
  cuobjdump="$(find "$tools" -name cuobjdump -type f | head -1)"
  chmod +x "$cuobjdump" "$(dirname "$cuobjdump")/nvdisasm"
fi

# The source's compile command, retargeted to one sm_90a cubin.
cubin="$(mktemp --suffix=.cubin)"
command="$(python3 - "$build/compile_commands.json" "$source" "$cubin" <<'PY'
import json, shlex, sys
entries = json.load(open(sys.argv[1]))
entry = next((e for e in entries if e["file"] == sys.argv[2]), None)
if entry is None:
    sys.exit(f"sass.sh: {sys.argv[2]} is not in compile_commands.json")
args = entry.get("arguments") or shlex.split(entry["command"])
out, skip = [], False
for a in args:
    if skip:
        skip = False
        continue
    if a in ("-o", "-MF", "-MT", "-MQ") or a == "-c":
        skip = a != "-c"
        continue
    if a.startswith("--generate-code") or a.startswith("-gencode") or a == "-lineinfo":
        continue
    out.append(a)
out += ["--generate-code=arch=compute_90a,code=sm_90a", "-cubin", "-Xptxas", "-v", "-o", sys.argv[3]]
print("cd " + shlex.quote(entry["directory"]) + " && " + shlex.join(out))
PY
)"
report="$(bash -c "$command" 2>&1)" || { echo "$report" >&2; exit 1; }
# ptxas -v: "Compiling entry function 'NAME' for 'sm_90a'", then its spills and registers.
echo "$report" | awk '
  /Compiling entry function/ { name = $0; sub(/.*function .\047?/, "", name); sub(/\047? for .*/, "", name) }
  /spill stores/ { spills = $0; sub(/.*ptxas info *: */, "", spills) }
  /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); print substr($0, RSTART, RLENGTH) " | " spills " | " name }'
if [ -n "$pattern" ]; then
  PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -sass "$cubin" | awk -v p="$pattern" '/Function : /{show = index($0, p) > 0} show'
fi
rm -f "$cubin"
