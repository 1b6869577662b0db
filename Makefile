# The whole Transformer — every command a student, instructor or lecturer needs.
# Each target creates or reuses .venv by itself.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JOBS ?= 1
WORKERS ?= 2
SCHEDULER ?=
PORT ?= 8888
ASSIGNMENT := whole-transformer

.PHONY: help lab test e2e lint release lecture autograde workers feedback grades bench checkpoints venv clean

help:
	@echo "make lab         open the course in JupyterLab"
	@echo "make test        run every test (lint, unit, notebooks, simulated class, browser)"
	@echo "make e2e         only the browser tests"
	@echo "make release     build release/ (what students get) from source/"
	@echo "make lecture     build notebooks/ (lecture edition, run, widgets saved, HTML export)"
	@echo "make autograde   grade submitted/<student>/$(ASSIGNMENT)/ (JOBS=N in parallel, or"
	@echo "                 SCHEDULER=tcp://HOST:8786 on a Dask cluster; DB_URL=postgresql://... gradebook)"
	@echo "make workers     a local Dask scheduler and WORKERS=N worker processes (Ctrl-C stops them)"
	@echo "make feedback    write feedback HTML for every graded student"
	@echo "make grades      write grades.csv and grades-detail.csv"
	@echo "make bench       measure speed, write benchmarks/results.md"
	@echo "make checkpoints retrain the shipped checkpoints (asks before replacing them)"

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(VENV)/bin/jupyter labextension list 2>&1 | grep -q nbgrader || echo "warning: nbgrader's JupyterLab extension is not listed"
	touch $(STAMP)

ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
FIRST_NOTEBOOK := release/$(ASSIGNMENT)/01-whole-machine.ipynb

# The lecture notebooks are built by this course (make lecture), so they are trusted here: JupyterLab
# draws their saved labs only in trusted notebooks. .venv/bin goes first on PATH for the formgrader.
lab: $(STAMP)
	-$(VENV)/bin/jupyter trust notebooks/*.ipynb >/dev/null 2>&1
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter lab --port=$(PORT) $(ROOT_FLAG) --ServerApp.root_dir=. $(wildcard $(FIRST_NOTEBOOK))

lint: $(STAMP)
	$(PY) -m ruff check whole_transformer tests benchmarks

test: $(STAMP) lint
	$(PY) -m pytest -n 2 --dist loadgroup

e2e: $(STAMP)
	$(PY) -m pytest -m e2e tests/e2e

release: $(STAMP)
	$(PY) -m whole_transformer.course release

lecture: $(STAMP)
	$(PY) -m whole_transformer.course lecture

autograde: $(STAMP)
	$(PY) -m whole_transformer.course autograde --jobs $(JOBS) $(if $(SCHEDULER),--scheduler $(SCHEDULER))

workers: $(STAMP)
	$(PY) -m whole_transformer.course workers --workers $(WORKERS)

feedback: $(STAMP)
	$(PY) -m whole_transformer.course feedback

grades: $(STAMP)
	$(PY) -m whole_transformer.course grades

bench: $(STAMP)
	$(PY) benchmarks/bench.py

checkpoints: $(STAMP)
	$(PY) -m whole_transformer.train --write-checkpoints

clean:
	rm -rf autograde feedback .pytest_cache artifacts
