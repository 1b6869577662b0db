# The whole Transformer — every command a student, instructor or lecturer needs.
# Each target creates or reuses .venv by itself.

PYTHON ?= python3
# Python keeps its compiled modules (and pytest its rewritten tests) in __pycache__/ (git ignores them), even where
# the shell says not to: every kernel, grading and fresh Python the commands and tests start reads them
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JOBS ?= 1
WORKERS ?= 2
SCHEDULER ?=
PORT ?= 8888
ASSIGNMENT := whole-transformer
# JupyterHub's proxy for make classroom, from npm, into .classroom/ (no global install)
PROXY_VERSION := 5.3.0
PROXY := .classroom/node_modules/.bin/configurable-http-proxy
# axe-core, the accessibility rules the browser tests run (tests/e2e/axe.py), from npm, into .a11y/
AXE_VERSION := 4.14.1
AXE := .a11y/axe-core-$(AXE_VERSION).installed

.PHONY: help lab test quick e2e lint typecheck release lecture handout autograde workers feedback grades insights bench checkpoints \
        roster collect-zip term serve lti-key lti-config lti-post lti-hub \
        venv a11y-tools clean classroom classroom-stop classroom-test classroom-proxy

# An instructor command's lines (make release ... make term: its help line, then the variables it takes) are
# what its declaration in whole_transformer/course/commands/ says; tests/test_commands.py checks them.
help:
	@echo "make lab         open the course in JupyterLab"
	@echo "make test        run every test (lint, unit, notebooks, simulated class, browser, the JupyterHub term as root)"
	@echo "                 TIERS=\"browser hub\": only those tiers (tests/tiers.py), e.g. for a CI job of their own"
	@echo "make quick       lint and the unit tier (tests that need nothing but Python), for the edit-test loop"
	@echo "make e2e         only the browser tests"
	@echo "make typecheck   mypy on whole_transformer/ (its settings: [tool.mypy] in pyproject.toml; part of lint)"
	@echo "make release     build release/ (what students get) from source/"
	@echo "make lecture     build notebooks/ (lecture edition, run, widgets saved, HTML export)"
	@echo "make handout     build handout/, the students' repository (no answers, no hidden tests)"
	@echo "make autograde   grade every hand-in in submitted/, each student's kernel in the sandbox"
	@echo "                 JOBS=N at once, or SCHEDULER=tcp://HOST:8786 on a Dask cluster; FORCE=1 grades everyone"
	@echo "                 again; STUDENT=id (or STUDENT='a b') only them; NO_SANDBOX=1 without the sandbox;"
	@echo "                 DB_URL=postgresql://... a PostgreSQL gradebook"
	@echo "make workers     a local Dask scheduler and N worker processes (Ctrl-C stops them)"
	@echo "                 WORKERS=N (default 2)"
	@echo "make serve       grade each submission to nbgrader's exchange at once and release its feedback"
	@echo "                 (course.toml [service]) EXCHANGE=DIR, SERVE_PORT=N its status page, JOBS, SCHEDULER and"
	@echo "                 NO_SANDBOX as for autograde; Ctrl-C stops it"
	@echo "make feedback    write feedback HTML for every graded student, and one page each in feedback-pages/"
	@echo "make grades      write grades.csv, grades-detail.csv, canvas-grades.csv and moodle-grades.csv"
	@echo "make insights    write insights.html and insights.csv: what the class got wrong"
	@echo "make roster      import the class list (id, names, email, LMS id); with no file, list who has handed in"
	@echo "                 FILE=students.csv"
	@echo "make collect-zip merge a Canvas or Moodle submissions zip into submitted/"
	@echo "                 FILE=subs.zip; a newer file replaces an older one, the rest is kept (REPLACE=1: whole hand-ins);"
	@echo "                 WORKSHEET=moodle.csv the Moodle grading worksheet; TIMES=times.csv hand-in times for a download"
	@echo "                 without"
	@echo "make term        the due date, late policy and each student's hand-in (course.toml)"
	@echo "make lti-key     make the tool's own key pair for the LMS (private key kept out of git, public key set written)"
	@echo "                 REPLACE=1 makes a new one (then paste its public key into the LMS again)"
	@echo "make lti-config  print the tool configuration an LMS admin pastes (Canvas developer key, Moodle tool)"
	@echo "make lti-post    send each student's score (late penalty included) to the LMS's gradebook; retry what did not arrive"
	@echo "                 DRY_RUN=1 shows who gets which score and sends nothing; AGAIN=1 sends the whole class again"
	@echo "make lti-hub     print the jupyterhub_config.py lines that sign students in from the LMS (LTI 1.3)"
	@echo "make bench       measure speed, write benchmarks/results.md"
	@echo "make checkpoints retrain the shipped checkpoints (asks before replacing them)"
	@echo "make classroom   as root: JupyterHub, an instructor and STUDENTS=3 accounts, the course released"
	@echo "                 LTI=1 signs users in from the LMS of course.toml's [lti] instead (docs/lms.md)"
	@echo "make classroom-stop    stop it; remove the accounts and folders it made"
	@echo "make classroom-test    only the term on JupyterHub in Chromium (root; 3-5 minutes; make test runs it too)"

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[instructor,dev]'
	$(VENV)/bin/jupyter labextension list 2>&1 | grep -q nbgrader || echo "warning: nbgrader's JupyterLab extension is not listed"
	touch $(STAMP)

# NO_SANDBOX=1 grades without the sandbox: make passes it on as the commands' --no-sandbox
NO_SANDBOX_FLAG := $(if $(filter 1 yes true,$(NO_SANDBOX)),--no-sandbox)
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
FIRST_NOTEBOOK := release/$(ASSIGNMENT)/01-whole-machine.ipynb

# The lecture notebooks are built by this course (make lecture), so they are trusted here: JupyterLab
# draws their saved labs only in trusted notebooks. .venv/bin goes first on PATH for the formgrader.
lab: $(STAMP)
	-$(VENV)/bin/jupyter trust notebooks/*.ipynb >/dev/null 2>&1
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/jupyter lab --port=$(PORT) $(ROOT_FLAG) --ServerApp.root_dir=. $(wildcard $(FIRST_NOTEBOOK))

# ruff (the rules in pyproject.toml), then mypy on whole_transformer/ ([tool.mypy]), then ruff format's check
# (line-length 120: ruff format whole_transformer examples tests benchmarks formats them); make test and make quick run all
lint: $(STAMP) typecheck
	$(PY) -m ruff check whole_transformer examples tests benchmarks
	$(PY) -m ruff format --check whole_transformer examples tests benchmarks

typecheck: $(STAMP)
	$(PY) -m mypy

# Every test, the term on JupyterHub (tests/classroom) included: it runs as root (it makes Linux accounts),
# with the proxy installed here where npm is, on one xdist worker beside the rest; elsewhere it skips and
# says why (with WT_REQUIRE_CLASSROOM=1, as .ci/run sets, it fails instead). The tiers that need the most start
# first, in tests/tiers.py's order (--no-loadscope-reorder keeps it); a module's tests that share its fixtures
# stay on one worker (loadgroup). TIERS="browser hub" runs only those tiers (tests/tiers.py's names), for a CI job
# of their own beside one of the others; unset, every tier runs.
test: $(STAMP) lint $(if $(shell command -v npm),$(AXE)) $(if $(and $(filter 0,$(shell id -u)),$(shell command -v npm)),$(PROXY))
	$(PY) -m pytest -n 2 --dist loadgroup --no-loadscope-reorder $(TIERS:%=--tier %)

# The edit-test loop: the unit tier (tests/tiers.py derives each test's tier from what it needs) with lint run beside
# it, its output shown after the tests'; either failing fails make quick.
quick: $(STAMP)
	@log=$$(mktemp); $(MAKE) --no-print-directory lint > $$log 2>&1 & linting=$$!; \
	$(PY) -m pytest -n 2 --dist loadgroup -q --tier unit; tests=$$?; \
	wait $$linting; linted=$$?; cat $$log; rm -f $$log; \
	test $$tests -eq 0 -a $$linted -eq 0

e2e: $(STAMP) $(if $(shell command -v npm),$(AXE))
	$(PY) -m pytest -m e2e tests/e2e

release: $(STAMP)
	$(PY) -m whole_transformer.course release

lecture: $(STAMP)
	$(PY) -m whole_transformer.course lecture

handout: $(STAMP)
	$(PY) -m whole_transformer.course handout

autograde: $(STAMP)
	$(PY) -m whole_transformer.course autograde --jobs $(JOBS) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	    $(if $(filter 1 yes true,$(FORCE)),--force) $(foreach s,$(STUDENT),--student $(s)) $(NO_SANDBOX_FLAG)

workers: $(STAMP)
	$(PY) -m whole_transformer.course workers --workers $(WORKERS)

feedback: $(STAMP)
	$(PY) -m whole_transformer.course feedback

serve: $(STAMP)
	$(PY) -m whole_transformer.course serve --jobs $(JOBS) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(NO_SANDBOX_FLAG) \
	    $(if $(EXCHANGE),--exchange "$(EXCHANGE)") $(if $(SERVE_PORT),--port $(SERVE_PORT))

grades: $(STAMP)
	$(PY) -m whole_transformer.course grades

roster: $(STAMP)
	$(PY) -m whole_transformer.course roster $(if $(FILE),"$(FILE)")

collect-zip: $(STAMP)
	@test -n "$(FILE)" || { echo "make collect-zip needs the download: make collect-zip FILE=submissions.zip"; exit 2; }
	$(PY) -m whole_transformer.course collect-zip "$(FILE)" $(if $(filter 1 yes true,$(REPLACE)),--replace) \
		$(if $(WORKSHEET),--worksheet "$(WORKSHEET)") $(if $(TIMES),--times "$(TIMES)")

term: $(STAMP)
	$(PY) -m whole_transformer.course term

insights: $(STAMP)
	$(PY) -m whole_transformer.course insights

# the course inside an LMS (LTI 1.3; course.toml [lti], docs/lms.md)
lti-key: $(STAMP)
	$(PY) -m whole_transformer.course lti-key $(if $(filter 1 yes true,$(REPLACE)),--replace)

lti-config: $(STAMP)
	$(PY) -m whole_transformer.course lti-config

lti-post: $(STAMP)
	$(PY) -m whole_transformer.course lti-post $(if $(filter 1 yes true,$(DRY_RUN)),--dry-run) \
	    $(if $(filter 1 yes true,$(AGAIN)),--again)

lti-hub: $(STAMP)
	$(PY) -m whole_transformer.course lti-hub

bench: $(STAMP)
	$(PY) benchmarks/bench.py $(if $(BENCH_NOTE),--note "$(BENCH_NOTE)")

checkpoints: $(STAMP)
	$(PY) -m whole_transformer.train --write-checkpoints

clean:
	rm -rf autograde feedback feedback-pages .pytest_cache artifacts  # downloaded/ holds every LMS download: kept

# the pinned axe-core for the accessibility tests (make test and make e2e install it when npm is there)
a11y-tools: $(AXE)

$(AXE):
	mkdir -p .a11y
	npm install --prefix .a11y --no-audit --no-fund --loglevel=error axe-core@$(AXE_VERSION)
	grep -q '"version": "$(AXE_VERSION)"' .a11y/node_modules/axe-core/package.json
	test -s .a11y/node_modules/axe-core/axe.min.js
	touch $(AXE)

# ---------------------------------------------------------------- a classroom on JupyterHub (root)
# examples/classroom/up.py does the work (an example beside the package, not in it); README "Running the course on JupyterHub".
STUDENTS ?= 3
CLASSROOM_DIR ?= /srv/wt-classroom
CLASSROOM_PORT ?= 8000
# the package folder the students' environment is installed from (non-editable)
CLASSROOM_PACKAGE ?= handout
classroom-proxy: $(PROXY)

$(PROXY):
	mkdir -p .classroom
	npm install --prefix .classroom --no-audit --no-fund --loglevel=error configurable-http-proxy@$(PROXY_VERSION)
	test -x $(PROXY)

# LTI=1: users sign in from the LMS of course.toml's [lti] (LTI=FILE: FILE's [lti]); docs/lms.md
LTI_FLAG := $(if $(filter 1 yes true,$(LTI)),--lti course.toml,$(if $(LTI),--lti $(LTI)))
classroom: $(STAMP) $(PROXY) handout
	$(PY) -m examples.classroom up --dir $(CLASSROOM_DIR) --students $(STUDENTS) \
	    --port $(CLASSROOM_PORT) --package $(CLASSROOM_PACKAGE) $(LTI_FLAG)

classroom-stop: $(STAMP)
	$(PY) -m examples.classroom down --dir $(CLASSROOM_DIR)

classroom-test: $(STAMP) $(PROXY)
	$(PY) -m pytest -m classroom tests/classroom
