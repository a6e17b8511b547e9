# PVN Lab. On a fresh machine: `make run` starts the app, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8501

.PHONY: install run test lint browser bench clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/streamlit run app.py --server.port $(PORT)

browser:
	bash scripts/ensure-chromium.sh

lint: install
	$(BIN)/ruff check .

test: install browser lint
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python -m pvnviz.bench all

clean:
	rm -rf $(VENV) .pytest_cache
