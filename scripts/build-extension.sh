#!/usr/bin/env bash
# Build the JupyterLab extension (extension/ -> kernel_magics/labextension) and install it into the venv.
#
#   scripts/build-extension.sh          install npm deps, type-check, lint, build, link (skips unchanged work)
#   FORCE=1 scripts/build-extension.sh  rebuild even when the sources are unchanged
#   scripts/build-extension.sh --lint   install npm deps, type-check and lint only (make lint)
#
# The build runs only when the sources, package.json or package-lock.json changed since the last
# successful build (a content hash in .stamps/extension). Linking the prebuilt extension and the
# server extension's config into the venv runs every time: it is cheap, and a reinstall of the Python
# package may have replaced the link with a stale copy.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
VENV_ABS=$(cd "$VENV" && pwd)
export PATH="$VENV_ABS/bin:$PATH"
NAME=flinkbench-jupyterlab
OUT=kernel_magics/labextension
STAMPS=.stamps
mkdir -p "$STAMPS"

for tool in node npm jupyter; do
  command -v "$tool" >/dev/null || { echo "build-extension: '$tool' not found on PATH (node >= 18 and npm are needed; jupyter comes from $VENV)" >&2; exit 1; }
done

hash_of() { find "$@" -type f ! -name '*.tsbuildinfo' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1; }

deps_hash=$(hash_of package.json package-lock.json)
if [ ! -d node_modules ] || [ "$(cat "$STAMPS/extension-deps" 2>/dev/null)" != "$deps_hash" ]; then
  echo "build-extension: installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$deps_hash" > "$STAMPS/extension-deps"
fi

if [ "${1:-}" = --lint ]; then
  npm run --silent typecheck
  npm run --silent lint
  exit 0
fi

src_hash=$(hash_of package.json package-lock.json extension/src extension/schema extension/style \
  extension/tsconfig.json extension/eslint.config.mjs)
built() { [ -f "$OUT/package.json" ] && ls "$OUT"/static/remoteEntry.*.js >/dev/null 2>&1; }
if [ "${FORCE:-0}" != 1 ] && built && [ "$(cat "$STAMPS/extension" 2>/dev/null)" = "$src_hash" ]; then
  echo "build-extension: sources unchanged, skipping the build"
else
  echo "build-extension: type check and lint"
  npm run --silent typecheck
  npm run --silent lint
  echo "build-extension: building $NAME into $OUT"
  rm -rf "$OUT" extension/lib extension/tsconfig.tsbuildinfo
  npm run --silent build
  echo "$src_hash" > "$STAMPS/extension"
fi

# Link like `jupyter labextension develop`: JupyterLab loads the build output in place.
target="$VENV_ABS/share/jupyter/labextensions/$NAME"
mkdir -p "$(dirname "$target")"
rm -rf "$target"
ln -s "$PWD/$OUT" "$target"
conf_dir="$VENV_ABS/etc/jupyter/jupyter_server_config.d"
mkdir -p "$conf_dir"
cp kernel_magics/server/config/flinkbench.json "$conf_dir/flinkbench.json"

if ! jupyter labextension list 2>&1 | grep -E "$NAME .*enabled" >/dev/null; then
  echo "build-extension: $NAME is not listed as enabled by 'jupyter labextension list'" >&2
  jupyter labextension list >&2 || true
  exit 1
fi
echo "build-extension: $NAME linked at $target and enabled"
