# PVN Lab. On a fresh machine: `make run` starts the app, `make test` runs every test, `make test-fast` the quick ones.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8501

.PHONY: install run dev test test-fast lint browser bench screenshot clean layout

# the pinned requirements, then the project itself, editable (the `pvnviz` command: .venv/bin/pvnviz)
$(STAMP): requirements.txt requirements-dev.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt -r requirements-dev.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# ui/serve.py: `streamlit run asgi.py` (app.py with the app's routes) after importing torch and the figure
# builders, so no visitor waits for them (`pvnviz app` starts the same server from any folder)
run: install
	$(BIN)/python -m ui.serve --server.port $(PORT)

# the same server, for editing the app: reruns a page when its source changes (`make run` watches nothing)
dev: install
	$(BIN)/python -m ui.serve --server.port $(PORT) --server.fileWatcherType poll --server.runOnSave true

browser:
	bash scripts/ensure-chromium.sh

lint: install
	$(BIN)/ruff check .

test: install browser lint
	$(BIN)/python -m pytest

test-fast: install lint
	$(BIN)/python -m pytest -m "not slow and not browser"

# docs/screenshot.png (the README's picture) is rewritten only here, never by a test run.
screenshot: install browser
	PVN_SCREENSHOT=1 $(BIN)/python -m pytest -q "tests/test_browser.py::test_page_in_a_real_browser[polytope]"

bench: install
	$(BIN)/python -m pvnviz.bench all

clean:
	rm -rf $(VENV) .pytest_cache

layout:
	$(PYTHON) scripts/layout.py --write
