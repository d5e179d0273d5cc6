#!/usr/bin/env bash
# Builds the installable VS Code extension: one VSIX per platform.
#
#   scripts/build-vsix.sh                      all five platforms
#   scripts/build-vsix.sh --host               this machine's platform only
#   scripts/build-vsix.sh --target T [--target T2 ...]
#   scripts/build-vsix.sh --universal          one VSIX carrying every platform's wheels (larger)
#   options: --out-dir DIR (default vscode-extension/), or OUTPUT.vsix with a single platform
#
# T is a VS Code platform: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64. Each VSIX
# carries bundled/: the Steadyhand server wheel, the wheels of its dependencies for CPython
# 3.11-3.14 on that platform (xxhash, orjson, pillow, watchdog, tree-sitter and its grammars are
# compiled; the grammars use the stable ABI), pip's own wheel and manifest.json, and is marked
# with `vsce package --target T`, so the Marketplace serves each user the right one. Before
# packaging, scripts/vsix_wheels.py checks that the bundle installs offline for CPython 3.11, 3.12
# and 3.13 on that platform (dependencies and markers followed for it) and holds no other
# platform's wheel; the build fails otherwise. 3.14 is bundled when its wheels exist.
# On first start the extension installs bundled/ into a private folder with pip run from its wheel
# (see docs/vscode.md). Output: steadyhand-T-<version>.vsix per platform
# (steadyhand-<version>.vsix for --universal).
#
# Steps: npm ci (skipped when node_modules matches package-lock.json), type check, esbuild bundle,
# the server wheel and pip's wheel (once), then per platform: its wheels, the check, vsce package.
# Nothing is fetched but npm packages and wheels (pip download, from the package index).
#
# Environment: PYTHON (default python3; must have pip), STEADYHAND_PY_VERSIONS (default
# "3.11 3.12 3.13 3.14"), STEADYHAND_SKIP_NPM=1 to reuse node_modules, STEADYHAND_SERVER_SRC=DIR to
# bundle the server from another tree holding pyproject.toml and server/ (default: this checkout).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PY="${PYTHON:-python3}"
CALLER_PWD="$PWD"
cd "$HERE"

log() { echo "[build-vsix] $*" >&2; }

WHEELS_PY="$HERE/scripts/vsix_wheels.py"
mapfile -t ALL_TARGETS < <("$PY" "$WHEELS_PY" targets)
PY_VERSIONS="${STEADYHAND_PY_VERSIONS:-3.11 3.12 3.13 3.14}"

host_target() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo linux-x64 ;;
    Linux-aarch64) echo linux-arm64 ;;
    Darwin-x86_64) echo darwin-x64 ;;
    Darwin-arm64) echo darwin-arm64 ;;
    MINGW*-x86_64 | MSYS*-x86_64 | CYGWIN*-x86_64) echo win32-x64 ;;
    *) echo "unsupported host $(uname -s)-$(uname -m); pass --target" >&2; return 2 ;;
  esac
}

TARGETS=()
UNIVERSAL=""
OUT=""
OUT_DIR="$HERE"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) TARGETS+=("$2"); shift 2 ;;
    --host) TARGETS+=("$(host_target)"); shift ;;
    --universal) UNIVERSAL=1; shift ;;
    --out-dir) OUT_DIR="$(cd "$CALLER_PWD" && mkdir -p "$2" && cd "$2" && pwd)"; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) OUT="$1"; [[ "$OUT" == /* ]] || OUT="$CALLER_PWD/$OUT"; shift ;;
  esac
done
for t in "${TARGETS[@]}"; do
  if [[ " ${ALL_TARGETS[*]} " != *" $t "* ]]; then
    echo "unknown target $t (one of: ${ALL_TARGETS[*]})" >&2
    exit 2
  fi
done
if [[ -n "$UNIVERSAL" && ${#TARGETS[@]} -gt 0 ]]; then
  echo "--universal bundles every platform: give no --target or --host with it" >&2
  exit 2
fi
[[ -n "$UNIVERSAL" || ${#TARGETS[@]} -gt 0 ]] || TARGETS=("${ALL_TARGETS[@]}")
if [[ -n "$OUT" && -z "$UNIVERSAL" && ${#TARGETS[@]} -ne 1 ]]; then
  echo "OUTPUT.vsix names one file: build one platform (--host or --target T), or use --out-dir" >&2
  exit 2
fi
VERSION="$(node -p "require('./package.json').version")"
HOST="$(host_target 2>/dev/null || true)"

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

# --- 3. the Python server and pip's wheel (once) ----------------------------------------------
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
SERVER_VERSION="$(basename "$SERVER_WHEEL" | cut -d- -f2)"

log "pip's own wheel (runs the install on the user's machine; no pip or venv needed there)"
"$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --no-deps -d "$BUILD_TMP/pip" 'pip>=24.2,<27' >&2
PIP_WHEEL="$(basename "$(ls "$BUILD_TMP"/pip/pip-*.whl | head -1)")"

# --- 4. per platform: its wheels, the check, the package -----------------------------------------
# $1: the VSIX's name for the log; the rest: the platforms whose wheels it carries.
bundle() {
  local label="$1"; shift
  local wheels="$HERE/bundled/wheels"
  rm -rf "$HERE/bundled"
  mkdir -p "$wheels"
  cp "$SERVER_WHEEL" "$BUILD_TMP/pip/$PIP_WHEEL" "$wheels/"
  local target pyver p args
  for target in "$@"; do
    if [[ "$target" == "$HOST" ]]; then
      log "$label: dependencies for this machine's Python"
      "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: -d "$wheels" "$SERVER_WHEEL" >&2
    fi
    for pyver in $PY_VERSIONS; do
      args=()
      while IFS= read -r p; do args+=(--platform "$p"); done < <("$PY" "$WHEELS_PY" pip-platforms "$target")
      log "$label: dependencies for CPython $pyver on $target"
      if ! "$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: --implementation cp \
          --python-version "$pyver" "${args[@]}" -d "$wheels" "$SERVER_WHEEL" >"$BUILD_TMP/dl.log" 2>&1; then
        log "warning: no complete wheel set for CPython $pyver on $target"
        tail -2 "$BUILD_TMP/dl.log" >&2
      fi
    done
  done
  "$PY" - "$HERE/bundled" "$SERVER_VERSION" "$PIP_WHEEL" "$PY_VERSIONS" "$@" <<'PYEOF'
import json, os, sys
bundled, version, pip_wheel, versions, *targets = sys.argv[1:]
wheels = sorted(os.listdir(os.path.join(bundled, "wheels")))
manifest = {
    "serverVersion": version,
    "requirement": f"steadyhand=={version}",
    "pipWheel": pip_wheel,
    "targets": targets,
    "pythonVersions": versions.split(),
    "wheels": wheels,
}
with open(os.path.join(bundled, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2)
print(f"[build-vsix] bundled {len(wheels)} wheels", file=sys.stderr)
PYEOF
  local check_args=()
  for target in "$@"; do check_args+=(--target "$target"); done
  "$PY" "$WHEELS_PY" check "$HERE/bundled" "${check_args[@]}"
}

package() {
  local out="$1"; shift
  log "vsce package -> $out"
  npx vsce package --no-dependencies "$@" --out "$out" >&2
  log "done: $out ($(du -h "$out" | cut -f1))"
  echo "$out"
}

if [[ -n "$UNIVERSAL" ]]; then
  bundle universal "${ALL_TARGETS[@]}"
  package "${OUT:-$OUT_DIR/steadyhand-$VERSION.vsix}"
else
  for target in "${TARGETS[@]}"; do
    bundle "$target" "$target"
    package "${OUT:-$OUT_DIR/steadyhand-$target-$VERSION.vsix}" --target "$target"
  done
fi
