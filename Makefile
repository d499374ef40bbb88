# The two quick-start commands. Each prepares .venv itself (idempotent).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,postgresql]'
	@touch $(STAMP)

run: $(STAMP)
	@$(BIN)/steepy validate workflows services --services services --macros workflows/macros
	@$(BIN)/steepy run workflows/demo.yaml --services services --macros workflows/macros

test: $(STAMP)
	@$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
