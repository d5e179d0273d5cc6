#!/usr/bin/env bash
# The extension's static checks and unit tests: npm ci (skipped when node_modules matches
# package-lock.json), tsc --noEmit, eslint, node:test unit tests.
# Without Node 20+ and npm they are skipped with a note, except under CI=true, where
# they must run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if ! command -v npm >/dev/null 2>&1 || [[ "$node_major" -lt 20 ]]; then
  if [[ "${CI:-}" == "true" ]]; then
    echo "The VS Code extension's checks need Node 20+ and npm, which were not found." >&2
    exit 1
  fi
  echo "Skipped the VS Code extension's checks: they need Node 20+ and npm, which were not found (CI runs them)."
  exit 0
fi
LOCK_SUM="$(sha256sum package-lock.json | cut -c1-16)"
# One npm ci at a time here: `make test` runs these checks beside the VS Code end-to-end
# test, which builds the extension (scripts/build-vsix.sh takes the same lock).
if command -v flock >/dev/null 2>&1; then exec 8<package-lock.json; flock 8; fi
if [[ "$(cat node_modules/.lock-sum 2>/dev/null)" != "$LOCK_SUM" ]]; then
  npm ci --no-audit --no-fund
  echo "$LOCK_SUM" > node_modules/.lock-sum
fi
if command -v flock >/dev/null 2>&1; then exec 8<&-; fi
npm run --silent typecheck
npm run --silent lint
npm test --silent
