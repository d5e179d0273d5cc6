#!/usr/bin/env bash
# Builds the installable VS Code extension.
#
#   scripts/build-vsix.sh [--target T | --universal] [OUTPUT.vsix]
#
# T is a VS Code platform: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64 (default: this
# machine's). The VSIX carries bundled/: the Steadyhand server wheel, the wheels of its dependencies
# for CPython 3.11-3.14 on that platform (xxhash and friends are compiled), pip's own wheel and
# manifest.json; `vsce package --target T` marks it as platform-specific, so the Marketplace serves
# each user the right one. --universal bundles every platform's wheels into one (larger) VSIX.
# On first start the extension installs bundled/ into a private folder with pip run from its wheel
# (see docs/vscode.md). Output: vscode-extension/steadyhand-T-<version>.vsix unless OUTPUT is given.
#
# Steps: npm ci (skipped when node_modules matches package-lock.json), type check, esbuild bundle,
# wheels, vsce package.
#
# Environment: PYTHON (default python3; must have pip), STEADYHAND_PY_VERSIONS (default
# "3.11 3.12 3.13 3.14"), STEADYHAND_SKIP_NPM=1 to reuse node_modules, STEADYHAND_SERVER_SRC=DIR to
# bundle the server from another tree holding pyproject.toml and server/ (default: this checkout).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PY="${PYTHON:-python3}"
cd "$HERE"

log() { echo "[build-vsix] $*" >&2; }

# vsce target -> pip platform tags of the wheels that run there.
declare -A PIP_PLATFORMS=(
  [linux-x64]="manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64"
  [linux-arm64]="manylinux_2_28_aarch64 manylinux_2_17_aarch64 manylinux2014_aarch64"
  [darwin-x64]="macosx_10_13_x86_64 macosx_10_10_x86_64 macosx_10_9_x86_64 macosx_10_9_universal2"
  [darwin-arm64]="macosx_11_0_arm64 macosx_10_9_universal2"
  [win32-x64]="win_amd64"
)
PY_VERSIONS="${STEADYHAND_PY_VERSIONS:-3.11 3.12 3.13 3.14}"

host_target() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo linux-x64 ;;
    Linux-aarch64) echo linux-arm64 ;;
    Darwin-x86_64) echo darwin-x64 ;;
    Darwin-arm64) echo darwin-arm64 ;;
    *) echo "unsupported host $(uname -s)-$(uname -m); pass --target" >&2; exit 2 ;;
  esac
}

TARGET=""
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) TARGET="$2"; shift 2 ;;
    --universal) TARGET="universal"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) OUT="$1"; shift ;;
  esac
done
TARGET="${TARGET:-$(host_target)}"
if [[ "$TARGET" == universal ]]; then
  TARGETS=("${!PIP_PLATFORMS[@]}")
  VSCE_TARGET=()
elif [[ -n "${PIP_PLATFORMS[$TARGET]:-}" ]]; then
  TARGETS=("$TARGET")
  VSCE_TARGET=(--target "$TARGET")
else
  echo "unknown target $TARGET (one of: ${!PIP_PLATFORMS[*]} universal)" >&2
  exit 2
fi
VERSION="$(node -p "require('./package.json').version")"
if [[ "$TARGET" == universal ]]; then
  OUT="${OUT:-$HERE/steadyhand-$VERSION.vsix}"
else
  OUT="${OUT:-$HERE/steadyhand-$TARGET-$VERSION.vsix}"
fi

# --- 1. npm dependencies --------------------------------------------------------------------
LOCK_SUM="$(sha256sum package-lock.json | cut -c1-16)"
# One npm ci at a time here (scripts/check.sh takes the same lock).
if command -v flock >/dev/null 2>&1; then exec 8<package-lock.json; flock 8; fi
if [[ "${STEADYHAND_SKIP_NPM:-}" != 1 && "$(cat node_modules/.lock-sum 2>/dev/null)" != "$LOCK_SUM" ]]; then
  log "npm ci"
  npm ci --no-audit --no-fund >&2
  echo "$LOCK_SUM" > node_modules/.lock-sum
fi
if command -v flock >/dev/null 2>&1; then exec 8<&-; fi

# --- 2. type check and bundle ----------------------------------------------------------------
log "type check"
npx tsc --noEmit -p .
log "bundle"
rm -rf out
node esbuild.mjs --production >&2

# --- 3. the Python server and its wheels ---------------------------------------------------------
WHEELS="$HERE/bundled/wheels"
rm -rf "$HERE/bundled"
mkdir -p "$WHEELS"
BUILD_TMP="$(mktemp -d)"
trap 'rm -rf "$BUILD_TMP"' EXIT

log "building the server wheel from $REPO"
# Build from a copy so that setuptools leaves no build/ or *.egg-info in the checkout.
# STEADYHAND_SERVER_SRC: another tree holding pyproject.toml and server/ (default: this checkout).
SERVER_SRC="${STEADYHAND_SERVER_SRC:-$REPO}"
SRC="$BUILD_TMP/src"
mkdir -p "$SRC"
cp "$SERVER_SRC/pyproject.toml" "$SRC/"
for f in README.md LICENSE; do if [[ -f "$SERVER_SRC/$f" ]]; then cp "$SERVER_SRC/$f" "$SRC/"; fi; done
[[ -f "$SRC/README.md" ]] || echo "# steadyhand" > "$SRC/README.md"
(cd "$SERVER_SRC" && tar --exclude='__pycache__' --exclude='*.egg-info' -cf - server) | (cd "$SRC" && tar -xf -)
"$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$BUILD_TMP/server" "$SRC" >&2
SERVER_WHEEL="$(ls "$BUILD_TMP"/server/steadyhand-*.whl)"
cp "$SERVER_WHEEL" "$WHEELS/"
SERVER_VERSION="$(basename "$SERVER_WHEEL" | cut -d- -f2)"

if [[ "$TARGET" == "$(host_target 2>/dev/null || true)" || "$TARGET" == universal ]]; then
  log "dependencies for this machine's Python"
  "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: -d "$WHEELS" "$SERVER_WHEEL" >&2
fi
log "dependencies for CPython $PY_VERSIONS on ${TARGETS[*]}"

for target in "${TARGETS[@]}"; do
  for pyver in $PY_VERSIONS; do
    args=()
    for p in ${PIP_PLATFORMS[$target]}; do args+=(--platform "$p"); done
    if ! "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --implementation cp \
        --python-version "$pyver" "${args[@]}" -d "$WHEELS" "$SERVER_WHEEL" >"$BUILD_TMP/dl.log" 2>&1; then
      log "warning: no complete wheel set for CPython $pyver on $target (users there fall back to the package index)"
      tail -2 "$BUILD_TMP/dl.log" >&2
    fi
  done
done

log "pip's own wheel (runs the install on the user's machine; no pip or venv needed there)"
"$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --no-deps -d "$BUILD_TMP/pip" 'pip>=24.2,<27' >&2
PIP_WHEEL="$(basename "$(ls "$BUILD_TMP"/pip/pip-*.whl | head -1)")"
cp "$BUILD_TMP/pip/$PIP_WHEEL" "$WHEELS/"

"$PY" - "$HERE/bundled" "$SERVER_VERSION" "$PIP_WHEEL" <<'PYEOF'
import json, os, sys
bundled, version, pip_wheel = sys.argv[1:4]
wheels = sorted(os.listdir(os.path.join(bundled, "wheels")))
manifest = {
    "serverVersion": version,
    "requirement": f"steadyhand=={version}",
    "pipWheel": pip_wheel,
    "wheels": wheels,
}
with open(os.path.join(bundled, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2)
print(f"[build-vsix] bundled {len(wheels)} wheels", file=sys.stderr)
PYEOF

# --- 4. package ----------------------------------------------------------------------------------
log "vsce package -> $OUT"
npx vsce package --no-dependencies "${VSCE_TARGET[@]}" --out "$OUT" >&2
log "done: $OUT ($(du -h "$OUT" | cut -f1))"
echo "$OUT"
