# The two quick-start commands. Each prepares .venv itself (idempotent).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

PORT ?= 8080

.PHONY: run demo test test-fast bytecode docs docs-serve screenshots clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,postgresql,docs]'
	@touch $(STAMP)

# the server with its web UI, the demo submitted: open http://127.0.0.1:$(PORT)/ (Ctrl-C stops)
run: $(STAMP)
	@$(BIN)/steepy validate workflows services --services services --macros workflows/macros
	@echo "steepy: open http://127.0.0.1:$(PORT)/ in a browser; Ctrl-C stops the server"
	@$(BIN)/steepy serve --port $(PORT) --submit workflows/demo.yaml --services services \
		--macros workflows/macros

# the demo in the terminal, to its end (no server)
demo: $(STAMP)
	@$(BIN)/steepy run workflows/demo.yaml --services services --macros workflows/macros

# four workers on two cores: many tests wait on real processes and timers, not the CPU
# (2,505 tests: 7:43 with three, 8:47 with two, 2026-11-27; 3,000 tests: 9:35 with three,
# 8:09 with four, 2026-11-28; 3,143 tests: 7:27 to 8:51 with four, 2026-11-29, one commit on
# one machine; 3,179 tests: 7:23 to 8:58, 2026-11-29, later: both cores are busy 97 % of the
# run, so it takes as long as the machine is slow); each test file runs whole on one worker,
# so its servers and browser are started once
WORKERS ?= 4
test: $(STAMP) bytecode
	@$(BIN)/python -m pytest -n $(WORKERS) --dist loadfile

# the inner loop, in seconds: every test but those that start processes (the CLI, servers,
# tools, executors) or need PostgreSQL, SLURM, dockerd, Lmod or a browser, or are slow; a test of
# this selection that starts a process fails (mark it `process`: tests/floor.py)
FAST := not (process or postgres or slurm or docker or lmod or browser or slow)
test-fast: $(STAMP) bytecode
	@$(BIN)/python -m pytest -n $(WORKERS) -m "$(FAST)"

# steepy's modules compiled once, as an installed package's are: with PYTHONDONTWRITEBYTECODE
# set (as on CI machines), every steepy process the tests start compiled them again (0.1-0.2 s
# each, over a thousand processes)
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q -j 0 steepy tests bench > /dev/null

# the documentation site into site/ (strict: a broken link, a missing page or an unknown
# anchor fails); docs-serve serves it on http://127.0.0.1:8000/ and rebuilds on every change
docs: $(STAMP)
	@NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	@NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict

# docs/screenshots/ui-*.png, made again from a fresh server in Debian's Chromium (.ci/chromium)
screenshots: $(STAMP)
	@$(BIN)/python bench/ui_screens.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site
