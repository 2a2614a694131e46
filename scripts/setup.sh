#!/usr/bin/env bash
# Installs what qgemm needs on a fresh Debian/Ubuntu machine (idempotent):
# compilers and build tools, GoogleTest and ccache from the distribution;
# nanobind, scikit-build-core, NumPy and pytest from PyPI; and, when nvcc is
# present, the CUTLASS headers (scripts/fetch_cutlass.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v ninja >/dev/null || need_apt+=(ninja-build)
command -v g++ >/dev/null || need_apt+=(g++)
command -v ccache >/dev/null || need_apt+=(ccache)
command -v git >/dev/null || need_apt+=(git)
[ -f /usr/include/gtest/gtest.h ] || need_apt+=(libgtest-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${need_apt[*]} (apt)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "missing: ${need_apt[*]} — install them with your package manager" >&2
    exit 1
  fi
fi

python3 - <<'PY' || python3 -m pip install --quiet --disable-pip-version-check nanobind scikit-build-core numpy pytest
import importlib.util, sys
missing = [m for m in ("nanobind", "scikit_build_core", "numpy", "pytest") if importlib.util.find_spec(m) is None]
sys.exit(1 if missing else 0)
PY

if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  "$root/scripts/fetch_cutlass.sh"
fi
