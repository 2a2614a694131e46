#!/usr/bin/env bash
# Downloads the CUTLASS 4.2 headers from the nvidia-cutlass PyPI wheel into
# .deps/cutlass (git-ignored): include/ and tools/util/include/ only. Nothing
# from CUTLASS is committed. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.deps/cutlass"
version="${QGEMM_CUTLASS_VERSION:-4.2.0.0}"

if [ -f "$dest/include/cutlass/cutlass.h" ] && [ "$(cat "$dest/VERSION" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetching CUTLASS $version headers from PyPI (nvidia-cutlass wheel)"
python3 -m pip download --quiet --no-deps --only-binary=:all: "nvidia-cutlass==$version" -d "$tmp"
python3 - "$tmp" "$dest" <<'PY'
import pathlib, shutil, sys, zipfile
tmp, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(tmp.glob("nvidia_cutlass-*.whl"))
prefixes = {"cutlass_library/source/include/": "include/",
            "cutlass_library/source/tools/util/include/": "tools/util/include/"}
if dest.exists():
    shutil.rmtree(dest)
with zipfile.ZipFile(wheel) as zf:
    for name in zf.namelist():
        for src, dst in prefixes.items():
            if name.startswith(src) and not name.endswith("/"):
                target = dest / (dst + name[len(src):])
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(name))
PY
echo "$version" > "$dest/VERSION"
echo "CUTLASS headers in $dest"
