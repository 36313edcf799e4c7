# The two commands a new machine needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck bench install clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/arena demo

lint: $(STAMP)
	$(BIN)/ruff check arena sdk tests example_bots
	$(BIN)/ruff format --check arena sdk tests example_bots

typecheck: $(STAMP)
	$(BIN)/mypy arena sdk

test: lint typecheck
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/arena bench engine

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
