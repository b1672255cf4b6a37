# Self-Attention from the Ground Up: build, test and release.
#   make book     create .venv if missing, install, execute and build the book (warnings are errors)
#   make book-font  cut the book's Chinese glyphs again (book/_static/fonts/) after a page gains a character
#   make test     install the test tools and run the whole suite
#   make test-timeline  the suite as make test, then where its time went (idle workers, idle cores)
#   make release  regenerate exercises/ from solutions/ with nbgrader
#   make workspace  your own copies of the exercises in work/ (git-ignored)
#   make check NB=work/<id>/<id>.ipynb  check one notebook with the hidden tests (UNSAFE=1: no sandbox)
#   make course-edition DEST=dir  the student edition for a graded class (no solutions, no hidden tests)
#   make clean    remove builds and nbgrader's working state (keeps .venv)
#   make serve    serve the built book on localhost with a local Jupyter kernel for live code
#   make bench-book  clean build vs bare notebook execution vs cached rebuild, in seconds
#   make bench-grading  12 honest submissions: plain nbgrader vs ours at --jobs 1 and 2, in seconds
#   make bench-service  the grading service: upload-to-result vs check, 50 uploads at once vs grade --jobs 2
#   make service  the grading service on http://127.0.0.1:8765/ (README, "The grading service")
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime-installed
TESTTOOLS := $(VENV)/.test-installed
CHROMIUM := /usr/bin/chromium
CHROMEDRIVER := /usr/bin/chromedriver
CJKFONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
BOOK_FLAGS := --warningiserror --keep-going

.PHONY: book book-font test test-timeline release workspace check course-edition clean gpu-check timings seed-sweep venv serve bench-book bench-grading vendor-thebe vendor-vega service bench-service

venv: $(RUNTIME)

$(BIN)/python:
	@$(call require_python,$(PYTHON),Use a newer one: make book PYTHON=python3.11)
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# Python 3.11 or newer (torch 2.13.0 and the pinned packages need it). $(PYTHON) is checked
# before .venv is created (above), so a failed first run leaves no .venv behind; and an
# existing .venv made by an older Python is refused before anything uses it (below).
# $(call require_python,EXE,FIX): fail, printing FIX, unless `EXE --version` says 3.11+.
MIN_PYTHON := 3.11
define require_python
v=$$($(1) --version 2>&1 | sed -n 's/^Python \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1); m=$(MIN_PYTHON); \
if [ -z "$$v" ] || [ $$(( $${v%%.*} * 1000 + $${v#*.} )) -lt $$(( $${m%%.*} * 1000 + $${m#*.} )) ]; then \
  echo "$(1) is $${v:+Python }$${v:-not a working Python}; this course needs Python $(MIN_PYTHON) or newer." >&2; \
  echo "$(2)" >&2; exit 1; fi
endef

.PHONY: venv-python
$(RUNTIME): | venv-python
venv-python: | $(BIN)/python
	@$(call require_python,$(BIN)/python,Recreate $(VENV) with a newer Python: rm -rf $(VENV) && make book PYTHON=python3.11)

# Reinstalls only when requirements.txt or pyproject.toml changes. The course's own packages
# (autograder/, course/) are installed in editable mode: pages, notebooks, checks and tests
# import them by name, and edits to them take effect without reinstalling.
# setuptools warns, for every editable install, that folders named like the package may take
# precedence during imports: harmless here, the folders it means (autograder/, course/) ARE the
# package being installed, so both ways of importing find the same files.
$(RUNTIME): requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(TESTTOOLS): requirements-test.txt $(RUNTIME) | $(CHROMIUM) $(CHROMEDRIVER) $(CJKFONT)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $@

# Grading runs student code inside bubblewrap (autograder/isolation/) and refuses to
# run without it: `make sandbox` installs it when missing (root or sudo, and apt).
.PHONY: sandbox
$(TESTTOOLS): | sandbox
sandbox:
	@command -v bwrap >/dev/null || { $(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
	  $(if $(filter 0,$(shell id -u)),,sudo) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; }

# Tests about PostgreSQL run a real server: a throwaway cluster made with Debian's `postgresql`
# (initdb, pg_ctl) in a temporary folder (tests/support/postgres.py). Installed once, when missing.
PG_INITDB := $(firstword $(wildcard /usr/lib/postgresql/*/bin/initdb))
.PHONY: postgres
$(TESTTOOLS): | postgres
postgres:
	@test -n "$(PG_INITDB)" || command -v initdb >/dev/null || { $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }

# The JupyterHub test (tests/service/test_jupyterhub.py) runs the hub's own proxy,
# configurable-http-proxy, from the npm registry: installed once, when missing, into
# .venv/node (never globally; needs node and npm). The test finds it there.
CHP_VERSION := 5.3.0
CHP := $(VENV)/node/node_modules/.bin/configurable-http-proxy
.PHONY: chp
$(TESTTOOLS): | chp
chp:
	@test -x $(CHP) || { command -v npm >/dev/null || { $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; }; \
	  npm install --silent --prefix $(VENV)/node configurable-http-proxy@$(CHP_VERSION); }

# The browser tests drive Debian's Chromium through its chromedriver (selenium never
# downloads a browser here). Installed once, when missing; needs root (or sudo) and apt.
# WenQuanYi Micro Hei, the font the book's Chinese glyphs are cut from: `make book` never needs
# it (the book carries its own subset, book/_static/fonts/), `make book-font` cuts from it, and
# `make test` installs it too, so that the browser test sees the book's copy win over the machine's.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
$(CHROMIUM) $(CHROMEDRIVER):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
$(CJKFONT):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei

# ipykernel 7 says, each time the build starts a page's kernel, "Kernel is running over TCP
# without encryption": harmless here, so that line is dropped from the output. The kernels
# are the build's own, listen on 127.0.0.1 only, and take only messages signed with the key
# of their connection file (readable by you alone); what is unencrypted is the traffic of
# the book's own public code on this machine. Everything else the build prints is kept.
KERNEL_NOTICE := Kernel is running over TCP without encryption
book: $(RUNTIME)
	set -o pipefail; $(BIN)/jupyter-book build . $(BOOK_FLAGS) 2>&1 | { grep -v --line-buffered "$(KERNEL_NOTICE)" || true; }
	@echo "Book: file://$(CURDIR)/_build/html/index.html"

# The Chinese glyphs the book uses are a font kept in the repository (book/_static/fonts/course-cjk.woff),
# so `make book` needs no CJK font installed. When a page gains a character the font lacks, `make book`
# fails naming it; this cuts the font again, from WenQuanYi Micro Hei (installed when missing), for the
# characters of that build's pages (_build/html). Commit the new font.
book-font: $(RUNTIME) | $(CJKFONT)
	@test -d _build/html || { echo "build the book first (make book), then make book-font" >&2; exit 2; }
	$(BIN)/python book/_ext/cjkfont.py --source $(CJKFONT) _build/html

# Two test processes (pytest-xdist): most tests wait on one single-threaded kernel or subprocess.
# (Three were tried: not faster on two cores, CONTRIBUTING, "What a test may cost".)
TEST_WORKERS ?= 2
# It ends by printing its own wall time (CONTRIBUTING, "What a test may cost").
test: $(TESTTOOLS)
	@start=$$(date +%s); $(BIN)/python -m pytest tests -n $(TEST_WORKERS); status=$$?; \
	  echo "make test: pytest took $$(( $$(date +%s) - start )) s (the budget: 900 s on two quiet cores)"; exit $$status

# Where the suite's time goes (CONTRIBUTING, "What a test may cost"): the same run as `make test`,
# with each test's start and end (tests/conftest.py) and the CPU use every five seconds recorded
# under $(TIMELINE), then tools/test_timeline.py's tables: idle workers, the longest groups, idle cores
# (its --save writes tests/group_seconds.json, the order the groups start in: CONTRIBUTING).
TIMELINE ?= _build/timeline
test-timeline: $(TESTTOOLS)
	@mkdir -p $(TIMELINE); rm -f $(TIMELINE)/tests.tsv $(TIMELINE)/cpu.tsv; \
	  { while sleep 5; do echo "$$(date +%s) $$(awk '/^cpu /{print $$2+$$3+$$4+$$7+$$8+$$9, $$2+$$3+$$4+$$5+$$6+$$7+$$8+$$9}' /proc/stat)"; done >> $(TIMELINE)/cpu.tsv & }; sampler=$$!; \
	  TEST_TIMELINE=$(CURDIR)/$(TIMELINE)/tests.tsv $(BIN)/python -m pytest tests -n $(TEST_WORKERS); status=$$?; \
	  kill $$sampler; $(BIN)/python -m tools.test_timeline $(TIMELINE)/tests.tsv $(TIMELINE)/cpu.tsv; exit $$status

release: $(RUNTIME)
	$(BIN)/python -m autograder release

# The course edition for a graded class: the book and the exercises without solutions, model
# answers or hidden tests, as a repository of its own (README, "Two editions").
#   make course-edition DEST=../self-attention-class [REPOSITORY_URL=https://github.com/you/class]
#   (from a root whose _config.yml names the edition's repository: README, "Two editions")
course-edition: $(RUNTIME)
	@test -n "$(DEST)" || { echo "usage: make course-edition DEST=<folder> [REPOSITORY_URL=<its repository>]" >&2; exit 2; }
	$(BIN)/python -m tools.course_edition "$(DEST)" $(if $(REPOSITORY_URL),--repository-url "$(REPOSITORY_URL)")

# Your own copies of the exercises in work/ (git-ignored; never overwritten by a second run).
workspace: $(RUNTIME)
	$(BIN)/python -m tools.workspace

# One notebook against the hidden tests, with the course's own Python (no activated venv needed):
#   make check NB=work/03-softmax/03-softmax.ipynb
# in the grading sandbox (bubblewrap); UNSAFE=1 runs it without one (your own code: fine).
check: $(RUNTIME)
	@test -n "$(NB)" || { echo "usage: make check NB=work/<id>/<id>.ipynb   (UNSAFE=1: without the sandbox)" >&2; exit 2; }
	@$(BIN)/python -m autograder check $(if $(UNSAFE),--unsafe) "$(NB)"; status=$$?; \
	  if [ $$status -eq 2 ] && [ -z "$(UNSAFE)" ]; then echo "(to check your own notebook without the sandbox: make check NB=$(NB) UNSAFE=1)" >&2; fi; \
	  exit $$status

# Executes every book page and solution notebook on CUDA; fails without a GPU.
gpu-check: $(RUNTIME)
	COURSE_DEVICE=cuda $(BIN)/python -m tools.notebook_runs gpu-check

# Per-notebook execution time on this machine (a benchmark, not a test).
timings: $(RUNTIME)
	$(BIN)/python -m tools.notebook_runs timings

# Every hidden check on the reference and alternative answers for SEEDS seeds: a correct answer's
# verdict must not depend on the seed (a tool for check authors, not a test; NN=06 for one chapter).
SEEDS ?= 100
seed-sweep: $(RUNTIME)
	$(BIN)/python -m tools.seed_sweep --seeds $(SEEDS) $(NN)

clean:
	rm -rf _build gradebook.db submitted autograded feedback reports downloaded exchange .pytest_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +

# The built book on http://127.0.0.1:8000 and a local Jupyter server for its live code
# (the "Run the code here" button on each page). Ctrl-C stops both.
SERVE_PORT ?= 8000
KERNEL_PORT ?= 8888
serve: $(RUNTIME)
	@test -f _build/html/index.html || $(MAKE) book
	$(BIN)/python -m tools.serve --html _build/html --root . --port $(SERVE_PORT) --kernel-port $(KERNEL_PORT)

# Clean build time, the sum of bare notebook execution times and the cached rebuild time,
# side by side (a benchmark on a fresh copy of the book sources, not a test).
bench-book: $(RUNTIME)
	$(BIN)/python -m tools.bench_book

# The same 12 honest submissions graded by plain `nbgrader autograde` and by ours at
# --jobs 1 and --jobs 2, in one run: times, speed-ups, per-notebook overhead against bare
# execution, identical scores, and where one notebook's grading goes by stage (`grade --stages`)
# (a benchmark, not a test). BENCH_GRADING_ARGS="--scheduler local" adds Dask.
bench-grading: $(RUNTIME) | sandbox
	$(BIN)/python -m tools.bench_grading $(BENCH_GRADING_ARGS)

# The grading service (autograder/service/): students submit over HTTP, the hidden checks grade
# at once. SERVICE_ARGS="--jobs 2" or "--scheduler tcp://host:8786"; tokens: python -m autograder token.
SERVICE_HOST ?= 127.0.0.1
SERVICE_PORT ?= 8765
service: $(RUNTIME) | sandbox
	$(BIN)/python -m autograder service --host $(SERVICE_HOST) --port $(SERVICE_PORT) $(SERVICE_ARGS)

# The grading service on this machine: one honest submission of 03, five rounds of bare
# `jupyter nbconvert --execute`, `autograder check` and upload to result on an idle service side
# by side (medians, ratios to bare), 50 uploads at once against `grade --jobs 2`, the service's
# peak memory (a benchmark, not a test). BENCH_SERVICE_ARGS="--repeat 7 --students 4".
bench-service: $(RUNTIME) | sandbox
	$(BIN)/python -m tools.bench_service $(BENCH_SERVICE_ARGS)

# Refresh the vendored thebe bundle (book/_static/thebe/) from the npm registry.
THEBE_VERSION := 0.9.3
vendor-thebe:
	rm -rf book/_static/thebe && mkdir -p book/_static/thebe
	tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent thebe@$(THEBE_VERSION) >/dev/null && tar xzf thebe-$(THEBE_VERSION).tgz \
	  && cp package/lib/*.js package/lib/thebe.css package/lib/*.LICENSE.txt $(CURDIR)/book/_static/thebe/ && rm -rf $$tmp
	sed -i '/^\/\/# sourceMappingURL=/d' book/_static/thebe/*.js
	printf 'thebe %s (BSD-3-Clause), from the npm registry by `make vendor-thebe`:\nthe files of its lib/ folder without source maps. Third-party licences: *.LICENSE.txt.\n' $(THEBE_VERSION) > book/_static/thebe/VENDORED.txt

# Refresh the vendored Vega-Lite stack (book/_static/vega/) from the npm registry: the
# interactive figures (course/figures.py) are Vega-Lite specs drawn by vega-embed in the page.
# VEGALITE_VERSION matches the schema of the pinned altair (altair.SCHEMA_VERSION).
VEGA_VERSION := 6.4.0
VEGALITE_VERSION := 6.4.1
VEGAEMBED_VERSION := 7.3.0
vendor-vega:
	rm -rf book/_static/vega && mkdir -p book/_static/vega
	tmp=$$(mktemp -d) && cd $$tmp \
	  && for p in vega@$(VEGA_VERSION) vega-lite@$(VEGALITE_VERSION) vega-embed@$(VEGAEMBED_VERSION); do \
	       name=$${p%@*}; mkdir $$name && npm pack --silent $$p >/dev/null && tar xzf $$name-$${p#*@}.tgz -C $$name \
	       && cp $$name/package/build/$$name.min.js $(CURDIR)/book/_static/vega/ \
	       && cp $$name/package/LICENSE $(CURDIR)/book/_static/vega/$$name.LICENSE.txt || exit 1; done \
	  && rm -rf $$tmp
	sed -i '/^\/\/# sourceMappingURL=/d' book/_static/vega/*.js
	printf 'vega %s, vega-lite %s and vega-embed %s (BSD-3-Clause each: *.LICENSE.txt), from the npm\nregistry by `make vendor-vega`: the minified browser build of each, without source maps.\n' \
	  $(VEGA_VERSION) $(VEGALITE_VERSION) $(VEGAEMBED_VERSION) > book/_static/vega/VENDORED.txt
