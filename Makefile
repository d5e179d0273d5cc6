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

.PHONY: venv demo check test test-macos-emulated test-fat lint format bench nearmiss torture vsix vsix-host vscode-check tool-schemas clean

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
check test test-macos-emulated test-fat: export PYTHONDONTWRITEBYTECODE =

## pytest's exit status 5 is "no tests ran" (a path or a -k/-m that matches nothing): said
## in plain words, and a failure like any other. tests/stages.py says it for its stages.
NO_TESTS_RAN = || { s=$$?; [ $$s -ne 5 ] || echo "make: pytest ran no tests (exit 5): check the paths, -k and -m given" >&2; exit $$s; }

## The inner loop: lint and types, beside the unit tests and
## the fast end-to-end tests, everything but the tests marked slow (tests/conftest.py);
## the wall time of each stage is printed at the end.
check:
	@$(PY) tests/stages.py \
	  "!set-up=$(SUBMAKE) venv" \
	  "&lint=$(SUBMAKE) lint" \
	  "pytest=$(PYTEST) -n $(WORKERS) -m 'not slow' $(PYTEST_ARGS)"

## The whole test suite: lint and types, the extension's checks, and every test (real
## editors and VS Code included), then the end-to-end tests again with the server under an
## emulated macOS, with the wall time of each stage printed at the end (tests/stages.py).
## code-server, for the VS Code test, is installed from the start, beside the set-up (a
## first run only: it is kept in .cache/); the checks run beside pytest, which starts the
## slowest tests first. A stage that must run after pytest goes after it, as "name=command".
test:
	@$(PY) tests/stages.py \
	  "&code-server=$(CODE_SERVER_EARLY)" \
	  "!set-up=$(SUBMAKE) venv" \
	  "&lint=$(SUBMAKE) lint" \
	  "&vscode-check=$(SUBMAKE) vscode-check" \
	  "pytest=$(PYTEST) -n $(TEST_WORKERS) --durations=25 $(PYTEST_ARGS)" \
	  "pytest-macos-emulated=$(SUBMAKE) test-macos-emulated"

## Where Chromium and npm are (else the VS Code test skips, or fails under CI=true, and says
## why), code-server is installed at once, its native modules built on every core (JOBS for
## node-gyp); the test waits for it (the script takes a lock).
CODE_SERVER_EARLY = if command -v npm >/dev/null && { [ -n '$$CHROMIUM' ] || command -v chromium \
  >/dev/null || [ -x /usr/bin/chromium ]; }; then JOBS=max bash vscode-extension/scripts/setup-code-server.sh \
  || echo 'not installed here: the VS Code test tries again and says why'; else echo 'skipped: \
  no npm or no Chromium'; fi

## The end-to-end suite (not the real editors) with every server process on an emulated
## macOS: sys.platform is "darwin", Linux-only names of os, socket and fcntl are gone, and
## (as root) /proc is hidden in a mount namespace of its own (tests/emulate/sitecustomize.py).
## On pytest-xdist workers as well (the emulation is the servers', not the workers').
EMULATED_PYTEST_ARGS ?=
test-macos-emulated: $(STAMP)
	STEADYHAND_EMULATE=macos STEADYHAND_EMULATE_HIDE_PROC=1 \
	PYTHONPATH=$(CURDIR)/tests/emulate \
	$(PYTEST) -n $(TEST_WORKERS) tests/e2e --ignore=tests/e2e/real_clients --ignore=tests/e2e/vscode \
		-p no:cacheprovider $(EMULATED_PYTEST_ARGS) $(NO_TESTS_RAN)

## The path battery on a real case-insensitive file system (FAT through FUSE).
test-fat: $(STAMP)
	$(BIN)/python -m pytest tests/e2e/paths/test_case_insensitive_volume.py $(PYTEST_ARGS) $(NO_TESTS_RAN)

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
	$(BIN)/mypy --platform darwin
	$(BIN)/mypy --platform win32
	$(BIN)/lint-imports --no-cache

## The torture suite at full size, with a table of trials, faults and losses.
torture: $(STAMP)
	$(BIN)/python tests/torture/report.py

## The VS Code extension, one VSIX per platform: vscode-extension/steadyhand-<platform>-<version>.vsix
## for linux-x64, linux-arm64, darwin-x64, darwin-arm64 and win32-x64 (docs/vscode.md).
## `make vsix-host`: this machine's platform only; `make vsix VSIX_ARGS="--target win32-x64"`: one.
vsix: $(STAMP)
	PYTHON=$(abspath $(BIN)/python) bash vscode-extension/scripts/build-vsix.sh $(VSIX_ARGS)

vsix-host: $(STAMP)
	PYTHON=$(abspath $(BIN)/python) bash vscode-extension/scripts/build-vsix.sh --host

## The files made from the tool source (server/steadyhand/protocol/spec): the VS Code
## extension's language-model tools (package.json, src/tools/generated.ts) and the tool tables
## of docs/mcp.md and docs/vscode.md. tests/unit/protocol fails while they differ from it.
tool-schemas: $(STAMP)
	$(BIN)/python -m steadyhand.protocol.spec --emit

## The extension's type check, lint and unit tests.
vscode-check:
	bash vscode-extension/scripts/check.sh

format: $(STAMP)
	$(BIN)/ruff format server tests bench
	$(BIN)/ruff check --fix server tests bench

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .test-logs
	rm -rf vscode-extension/out vscode-extension/out-test vscode-extension/bundled vscode-extension/*.vsix
