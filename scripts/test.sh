#!/usr/bin/env bash
# Sets up, builds and runs every test: the GoogleTest suites through ctest
# and the Python tests through pytest. GPU tests skip without a GPU. The last
# line sums up both runners: "tests: N passed, N failed, N skipped".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$@"
build="${QGEMM_BUILD_DIR:-$root/build}"
logs="$build/test-logs"
mkdir -p "$logs"

status=0
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" >"$logs/ctest.log" 2>&1 || status=1
grep -v -E '^\s+[0-9]+ - .*\(Skipped\)$' "$logs/ctest.log" | tail -n 40
c_total=$(sed -n -E 's/.*tests failed out of ([0-9]+).*/\1/p' "$logs/ctest.log" | tail -1)
c_failed=$(sed -n -E 's/.*, ([0-9]+) tests failed out of.*/\1/p' "$logs/ctest.log" | tail -1)
c_skipped=$(grep -c -E '\(Skipped\)$' "$logs/ctest.log" || true)
c_total=${c_total:-0}; c_failed=${c_failed:-0}
passed=$((c_total - c_failed - c_skipped)); failed=$c_failed; skipped=$c_skipped

if [ -d "$root/python/tests" ]; then
  PYTHONPATH="$build/python:${PYTHONPATH:-}" python3 -m pytest -q -p no:cacheprovider \
    "$root/python/tests" 2>&1 | tee "$logs/pytest.log" || status=1
  summary=$(tail -n 1 "$logs/pytest.log")
  p=$(sed -n -E 's/(^|.*[^0-9])([0-9]+) passed.*/\2/p' <<<"$summary"); passed=$((passed + ${p:-0}))
  f=$(sed -n -E 's/(^|.*[^0-9])([0-9]+) failed.*/\2/p' <<<"$summary"); failed=$((failed + ${f:-0}))
  s=$(sed -n -E 's/(^|.*[^0-9])([0-9]+) skipped.*/\2/p' <<<"$summary"); skipped=$((skipped + ${s:-0}))
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit $status
