# Steadyhand — every target sets up what it needs (a local .venv) by itself.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
## pytest-xdist workers, for make check and make test. The end-to-end tests wait on the
## servers and editors they drive, so more workers than cores pays; on two cores 3 did best
## for make check and 4 for make test, where one worker mostly waits on code-server.
WORKERS ?= 3
TEST_WORKERS ?= 4
PYTEST := $(BIN)/python -m pytest --dist loadgroup
## make, in the stages of `make test` (not spelled $(MAKE) there: `make -n test` runs nothing)
SUBMAKE = $(MAKE) --no-print-directory

.PHONY: venv demo check test lint format bench nearmiss torture vsix vscode-check clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## The main job: drive the real server through a real LSP client on a sample workspace.
demo: $(STAMP)
	$(BIN)/steadyhand demo

## Bytecode is cached for the tests (pytest's rewritten test modules, the server's modules):
## an environment that turns caching off would make every worker and server compile again.
check test: export PYTHONDONTWRITEBYTECODE =

## The inner loop (about a minute): lint and types, then the unit tests and the fast
## end-to-end tests, everything but the tests marked slow (tests/conftest.py).
check: lint
	$(PYTEST) -n $(WORKERS) -m "not slow" $(PYTEST_ARGS)

## The whole test suite: lint and types, the extension's checks, and every test (real
## editors and VS Code included), with the wall time of each stage printed at the end
## (tests/stages.py). code-server, for the VS Code test, is installed from the start, beside
## the set-up (a first run only: it is kept in .cache/); the checks run beside pytest, which
## starts the slowest tests first. A stage that must run after pytest goes after it, as
## "name=command".
test:
	@$(PY) tests/stages.py \
	  "&code-server=$(CODE_SERVER_EARLY)" \
	  "!set-up=$(SUBMAKE) venv" \
	  "&lint=$(SUBMAKE) lint" \
	  "&vscode-check=$(SUBMAKE) vscode-check" \
	  "pytest=$(PYTEST) -n $(TEST_WORKERS) --durations=25 $(PYTEST_ARGS)"

## Where Chromium and npm are (else the VS Code test skips, or fails under CI=true, and says
## why), code-server is installed at once, its native modules built on every core (JOBS for
## node-gyp); the test waits for it (the script takes a lock).
CODE_SERVER_EARLY = if command -v npm >/dev/null && { [ -n '$$CHROMIUM' ] || command -v chromium \
  >/dev/null || [ -x /usr/bin/chromium ]; }; then JOBS=max bash vscode-extension/scripts/setup-code-server.sh \
  || echo 'not installed here: the VS Code test tries again and says why'; else echo 'skipped: \
  no npm or no Chromium'; fi

## Benchmark against the floor and the MCP peer (needs Node 20+ and npm);
## BENCH_ARGS=--quick for a smoke run. Prints a table, also in bench/results/latest.md.
bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

## Share of near-miss edits recovered, and wrongly applied (must be 0).
nearmiss: $(STAMP)
	$(BIN)/python bench/nearmiss.py --json bench/results/nearmiss.json

lint: $(STAMP)
	$(BIN)/ruff check server tests bench
	$(BIN)/ruff format --check server tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

## The torture suite at full size, with a table of trials, faults and losses.
torture: $(STAMP)
	$(BIN)/python tests/torture/report.py

## The VS Code extension: vscode-extension/steadyhand-<platform>-<version>.vsix (docs/vscode.md).
vsix: $(STAMP)
	PYTHON=$(abspath $(BIN)/python) bash vscode-extension/scripts/build-vsix.sh

## The extension's type check, lint and unit tests.
vscode-check:
	bash vscode-extension/scripts/check.sh

format: $(STAMP)
	$(BIN)/ruff format server tests bench
	$(BIN)/ruff check --fix server tests bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .test-logs
	rm -rf vscode-extension/out vscode-extension/out-test vscode-extension/bundled vscode-extension/*.vsix
