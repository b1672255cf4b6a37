# Self-Attention from the Ground Up: build, test and release.
#   make book     create .venv if missing, install, execute and build the book (warnings are errors)
#   make test     install the test tools and run the whole suite
#   make release  regenerate exercises/ from solutions/ with nbgrader
#   make clean    remove builds and nbgrader's working state (keeps .venv)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime-installed
TESTTOOLS := $(VENV)/.test-installed
BOOK_FLAGS := --warningiserror --keep-going

.PHONY: book test release clean gpu-check timings venv

venv: $(RUNTIME)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip

# Reinstalls only when requirements.txt changes.
$(RUNTIME): requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(TESTTOOLS): requirements-test.txt $(RUNTIME)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	touch $@

book: $(RUNTIME)
	$(BIN)/jupyter-book build . $(BOOK_FLAGS)
	@echo "Book: file://$(CURDIR)/_build/html/index.html"

test: $(TESTTOOLS)
	$(BIN)/python -m pytest tests

release: $(RUNTIME)
	$(BIN)/python -m autograder release

# Executes every book page and solution notebook on CUDA; fails without a GPU.
gpu-check: $(RUNTIME)
	COURSE_DEVICE=cuda $(BIN)/python -m autograder gpu-check

# Per-notebook execution time on this machine (a benchmark, not a test).
timings: $(RUNTIME)
	$(BIN)/python -m autograder timings

clean:
	rm -rf _build gradebook.db submitted autograded feedback .pytest_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
