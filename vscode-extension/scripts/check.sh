#!/usr/bin/env bash
# The extension's static checks and unit tests: npm ci (skipped when node_modules matches
# package-lock.json), tsc --noEmit, eslint, node:test unit tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOCK_SUM="$(sha256sum package-lock.json | cut -c1-16)"
if [[ "$(cat node_modules/.lock-sum 2>/dev/null)" != "$LOCK_SUM" ]]; then
  npm ci --no-audit --no-fund
  echo "$LOCK_SUM" > node_modules/.lock-sum
fi
npm run --silent typecheck
npm run --silent lint
npm test --silent
