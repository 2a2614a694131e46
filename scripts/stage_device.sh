#!/usr/bin/env bash
# Stages what the GPU machine needs into .carry (git-ignored): in bin/ the
# qgemm CLI and the test executables built here (the GPU machine has no
# GoogleTest), stripped and xz-compressed, with the commit they were built
# at; and the CUTLASS headers as cutlass.tar.xz. Carry it with `carry: [".carry"]`.
#
#   scripts/stage_device.sh [--build DIR] [--hide-results] [NAME ...]
#   scripts/stage_device.sh --restore-results
#
# The device tool also carries the tracked tree, and bench/results (~22 MiB
# of JSON) leaves no room for the CLI: --hide-results moves it to .hold/
# (git-ignored, not carried) after staging; --restore-results moves it back
# (before committing anything). The COMMIT file ignores that move.
#
# NAME: qgemm (the CLI), a suite (core, fused, gemm, quant, wonly, kv_cache), or
# python: the extension for the GPU machine's Python 3.12, built here by
# scripts/build_device_python.sh (into .carry/py/; scripts/device_python.sh
# then uses it instead of building one there, ~5 minutes of device time; 51 MiB
# compressed, so carry it alone); none: all but python. The device tool carries at most 64 MiB with the working tree
# (~11 MiB), and all of them compressed are far more: each links what it uses
# of the library, whose fatbins are already compressed (at 3845e71: the CLI
# and the core suite, whose op-chain tests use every family, 43 MiB each;
# fused 32; wonly 8; quant 4.5; gemm 3.4). So stage what one call runs —
# `fused gemm quant wonly` (60 MiB with the tree), then `core`, then `qgemm`
# for benchmarks — each in its own call. The total with the working tree is
# printed, and refused from 63 MiB on.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
hide_results=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --hide-results) hide_results=1; shift ;;
    --restore-results)
      [ -d "$root/.hold/results" ] || { echo "stage_device.sh: no .hold/results to restore" >&2; exit 1; }
      [ ! -e "$root/bench/results" ] || { echo "stage_device.sh: bench/results exists; .hold/results left as is" >&2; exit 1; }
      mv "$root/.hold/results" "$root/bench/results"
      echo "restored bench/results"
      exit 0 ;;
    *) break ;;
  esac
done
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(qgemm core fused gemm quant wonly kv_cache)
rm -rf "$root/.carry/bin" "$root/.carry/py"
mkdir -p "$root/.carry/bin"
for name in "${names[@]}"; do
  case "$name" in
    python)
      module=$(ls "$root"/build-py312/python/qgemm/_qgemm.cpython-312-*.so 2>/dev/null | head -n 1)
      [ -n "$module" ] || { echo "stage_device.sh: no build-py312 extension; run scripts/build_device_python.sh" >&2; exit 1; }
      mkdir -p "$root/.carry/py"
      strip -o "$root/.carry/py/$(basename "$module")" "$module"
      xz -T2 -6 "$root/.carry/py/$(basename "$module")"
      continue ;;
    qgemm) src="$build/tools/qgemm" ;;
    core | fused | gemm | quant | wonly) src="$build/tests/$name/qgemm_test_$name" ;;
    kv_cache) src="$build/tests/kvcache/qgemm_test_kv_cache" ;;
    *) echo "stage_device.sh: unknown name '$name' (qgemm, core, fused, gemm, quant, wonly, kv_cache, python)" >&2; exit 2 ;;
  esac
  [ -x "$src" ] || { echo "stage_device.sh: $src is not built" >&2; exit 1; }
  strip -o "$root/.carry/bin/$(basename "$src")" "$src"
done
compgen -G "$root/.carry/bin/qgemm*" >/dev/null && xz -T2 -6 "$root/.carry/bin/"qgemm*
# The CUTLASS headers for building the Python extension there
# (scripts/device_python.sh unpacks them): 27 MB as files, ~1 MB as .tar.xz.
# Not needed when the extension itself travels.
if [ -d "$root/.deps/cutlass" ] && [ ! -d "$root/.carry/py" ]; then
  tar -C "$root" -cf - .deps/cutlass | xz -T2 -6 > "$root/.carry/cutlass.tar.xz"
fi
# The commit, "-dirty" when a tracked file outside bench/results differs.
commit=$(git -C "$root" rev-parse --short=12 HEAD)
git -C "$root" diff --quiet HEAD -- . ':(exclude)bench/results' || commit="$commit-dirty"
echo "$commit" > "$root/.carry/bin/COMMIT"
[ ! -d "$root/.carry/py" ] || echo "$commit" > "$root/.carry/py/COMMIT"
if [ "$hide_results" = 1 ] && [ -d "$root/bench/results" ]; then
  [ ! -e "$root/.hold/results" ] || { echo "stage_device.sh: .hold/results exists; restore it first" >&2; exit 1; }
  mkdir -p "$root/.hold"
  mv "$root/bench/results" "$root/.hold/results"
  echo "bench/results moved to .hold/results: scripts/stage_device.sh --restore-results puts it back"
fi
# What travels: .carry plus the tracked files (and untracked, not ignored ones).
carry_bytes=$(du -sb "$root/.carry" | cut -f1)
# (files moved away, bench/results among them, count 0: cat fails on them)
tree_bytes=$(git -C "$root" ls-files -z --cached --others --exclude-standard | (cd "$root" && xargs -0 cat 2>/dev/null || true) | wc -c)
total=$(( (carry_bytes + tree_bytes) / 1048576 ))
du -sh "$root/.carry/bin/"* "$root/.carry/py/"* 2>/dev/null || true
echo "staged ${names[*]}: .carry $((carry_bytes / 1048576)) MiB + tree $((tree_bytes / 1048576)) MiB = $total MiB"
if [ "$total" -ge 63 ]; then
  echo "stage_device.sh: $total MiB — the device tool carries at most 64 MiB; stage fewer names" >&2
  exit 1
fi
