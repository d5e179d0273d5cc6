# Steadyhand — every target sets up what it needs (a local .venv) by itself.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: venv demo test test-macos-emulated test-fat lint format bench nearmiss torture vsix vsix-host vscode-check tool-schemas clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

## The main job: drive the real server through a real LSP client on a sample workspace.
demo: $(STAMP)
	$(BIN)/steadyhand demo

## The whole test suite (end-to-end over stdio, unit and property tests, lint and types),
## then the end-to-end tests again with the server under an emulated macOS.
test: $(STAMP) lint vscode-check
	$(BIN)/python -m pytest $(PYTEST_ARGS)
	$(MAKE) test-macos-emulated

## The end-to-end suite (not the real editors) with every server process on an emulated
## macOS: sys.platform is "darwin", Linux-only names of os, socket and fcntl are gone, and
## (as root) /proc is hidden in a mount namespace of its own (tests/emulate/sitecustomize.py).
EMULATED_PYTEST_ARGS ?=
test-macos-emulated: $(STAMP)
	STEADYHAND_EMULATE=macos STEADYHAND_EMULATE_HIDE_PROC=1 \
	PYTHONPATH=$(CURDIR)/tests/emulate \
	$(BIN)/python -m pytest tests/e2e --ignore=tests/e2e/real_clients --ignore=tests/e2e/vscode \
		-p no:cacheprovider $(EMULATED_PYTEST_ARGS)

## The path battery on a real case-insensitive file system (FAT through FUSE).
test-fat: $(STAMP)
	$(BIN)/python -m pytest tests/e2e/test_case_insensitive_volume.py $(PYTEST_ARGS)

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
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
	rm -rf vscode-extension/out vscode-extension/out-test vscode-extension/bundled vscode-extension/*.vsix
