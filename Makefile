# GPU Mathematics for Machine Learning: every command a learner, instructor or CI needs.
# `make book` and `make test` each do the whole set-up themselves (idempotent, fast when done).
# Nothing here downloads from anywhere but the package registries (PyPI, npm, Debian).

PYTHON   ?= $(shell command -v python3.11 || command -v python3)
VENV     := .venv
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.installed
LAB_STAMP := $(VENV)/.lab-installed
HOST     ?= 127.0.0.1
PORT     ?= 8000
# Browser tests drive this Chromium through Playwright (its own browser download cannot work
# offline). On Debian/Ubuntu `make test` installs it; elsewhere point CHROMIUM at a Chrome.
CHROMIUM ?= /usr/bin/chromium
SUDO     := $(if $(filter 0,$(shell id -u)),,sudo)
# Every notebook is a test (nbval); $(wildcard) keeps a fresh clone without any working.
NOTEBOOKS = $(wildcard notebooks/*.ipynb exercises/*.ipynb)
NBVAL     = --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg
TEST_WORKERS ?= 2
XDIST     = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS))
JB_FLAGS  = -W -n --keep-going

.PHONY: help install bytecode site-assets chromium book test unit fuzz lab serve clean gpu-check \
	student lesson

help:
	@echo "make book    install, execute every notebook, build the site into _build/html"
	@echo "make test    install, then run every test (unit, notebooks, hygiene, book, browser)"
	@echo "make unit    the tests that need no book build and no browser"
	@echo "make fuzz    the unit tests with DEPTH (10) times the fuzzing, fresh examples each run"
	@echo "make lab     open the lessons in JupyterLab"
	@echo "make serve   serve the built site on http://$(HOST):$(PORT)"
	@echo "make clean   remove the built site, caches and vendored JavaScript"
	@echo "make gpu-check  on a CUDA GPU with .[gpu] installed: tests + notebooks on the GPU,"
	@echo "                measured figures into benchmarks/results/"
	@echo "make student  instructors: student notebooks without solutions + answer keys"
	@echo "              into export/ (VARIANT=N for a class variant of the numbers)"
	@echo "make lesson SLUG=kv_offload TITLE=\"Offloading the KV Cache\""
	@echo "             a new lesson from the skeleton (QUESTION=\"...?\" for the intro page)"

# The virtual environment, re-made only when the pins or the package metadata change.
# uv (pinned in constraints.txt, from PyPI) installs the same pinned versions pip would, in
# under half the time: 10 s + 19 s against pip's 9 s + 57 s on a 2-core machine with an
# empty cache. --compile-bytecode writes the .pyc files pip would (where the environment
# sets PYTHONDONTWRITEBYTECODE, no process would ever write them, and every one of a
# test run's processes would compile what it imports from source). The environment keeps
# its own pip for a learner's later installs.
UV_INSTALL = $(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python \
	-c constraints.txt
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt uv
	$(UV_INSTALL) -e '.[dev,dist]'
	touch $(STAMP)

install: $(STAMP)

# JupyterLab (the `lab` extra) on top, for `make lab` only: the tests and the book need none
# of it.
$(LAB_STAMP): $(STAMP)
	$(UV_INSTALL) -e '.[dev,dist,lab]'
	touch $(LAB_STAMP)

# The course's own modules compiled once, before the many Python processes of a build or a
# test run (notebook kernels, test workers, subprocesses) import them. Where the
# environment sets PYTHONDONTWRITEBYTECODE, Python never writes this cache itself, and each
# process compiled every module it imported from source. Up to date, this takes a tenth of
# a second; a stale file is simply recompiled in memory by whoever imports it.
bytecode: install
	$(BIN)/python -m compileall -q gpulesson scripts tests

# The site's JavaScript, pinned in package-lock.json, copied into _vendor/ (published at the
# site root) so that no page loads anything from a CDN.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

_vendor/_lib/VERSIONS.json: node_modules/.package-lock.json scripts/vendor_js.py scripts/site_js/*.js
	$(PYTHON) scripts/vendor_js.py

# Pyodide (the site's calculators run the course's Python in the browser), into a versioned
# folder published at /_pyodide/<version>/, with its start-up snapshot (made under Node).
_vendor/_pyodide/manifest.json: node_modules/.package-lock.json scripts/vendor_pyodide.py \
		scripts/pyodide_snapshot.mjs
	$(PYTHON) scripts/vendor_pyodide.py

site-assets: _vendor/_lib/VERSIONS.json _vendor/_pyodide/manifest.json

# Headless Chromium needs none of the package's recommends (the sandbox helper, desktop
# services): without them the install takes 12 s instead of 24 s here.
chromium:
	@if [ -x "$(CHROMIUM)" ]; then :; \
	elif command -v apt-get >/dev/null; then \
		echo "Installing Debian's chromium for the browser tests"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
			chromium >/dev/null; \
	else \
		echo "No $(CHROMIUM) and no apt-get: the browser tests will be skipped" \
		     "(set CHROMIUM=/path/to/chrome to run them)."; \
	fi

book: install bytecode site-assets
	@$(BIN)/python scripts/book_cache.py
	$(BIN)/jupyter-book build . $(JB_FLAGS)
	@echo
	@echo "The site is in _build/html. Serve it and open it in a browser with:"
	@echo "    make serve        (then visit http://$(HOST):$(PORT)/)"
	@echo "Opened straight from disk (file://) the pages work, but the calculators stay"
	@echo "at their worked examples: browsers let only a served site start them."

# One pytest run, one closing summary: unit tests, every notebook (nbval), notebook hygiene,
# the book build (warnings are errors) and the checks of the built site, from disk and in
# Chromium (tests/site). The book is built once, by whichever needs it first: a site test,
# or a notebook cell tagged nbval-check-output, whose reference is the build's run of it.
# GL_SITE_DIR=_build/html reuses a built site instead. The book build runs every notebook on
# the CPU; nbval then runs each once more on a numpy-backed CuPy stand-in
# (tests/gpu_standin), so every GPU branch of the lessons runs on every test run.
# Two worker processes share the run (pytest-xdist; tests/scheduling.py orders it): one
# builds the book while the other runs the tests that need none. TEST_WORKERS=0: one process.
test: install bytecode site-assets chromium
	GL_CHROMIUM=$(CHROMIUM) GL_REQUIRE_BROWSER=$(if $(shell command -v apt-get),1,0) \
	GL_SCREENSHOT_DIR=$${GL_SCREENSHOT_DIR:-_build/screenshots} \
	MPLBACKEND=Agg $(BIN)/python -m pytest -q --durations=10 $(NBVAL) $(XDIST) \
		-p tests.gpu_standin.plugin --gpu-standin tests $(NOTEBOOKS)

# Everything but the site: no book build, no browser, no notebook runs.
unit: install
	$(BIN)/python -m pytest -q tests -m "not book and not browser"

# Deeper fuzzing, by hand: the unit tests with DEPTH times the examples of every property
# test, drawn afresh on each run (make test draws the same ones every time). A failure
# prints its example and the @reproduce_failure line that replays it. At DEPTH=10 the
# first runs found three escapes the suite's own examples never met (session of
# 2026-12-07): an IndexError, a MemoryError and an overflow that named no key.
DEPTH ?= 10
fuzz: install
	GL_FUZZ_DEPTH=$(DEPTH) $(BIN)/python -m pytest -q $(XDIST) --hypothesis-profile=deep \
		tests/unit -m "not book and not browser"

# On a machine with a CUDA GPU and the gpu extra (pip install -c constraints.txt -e '.[gpu]',
# or cupy-cuda13x for CUDA 13): run the unit tests and notebooks with GPULESSON_DEVICE=gpu and
# write GEMM FLOP/s, copy bandwidth and CPU-vs-GPU speed-ups to benchmarks/results/.
# Without a usable GPU it stops with exit code 2 and says why (the correct outcome).
gpu-check: install
	GPULESSON_DEVICE=gpu MPLBACKEND=Agg $(BIN)/python scripts/gpu_check.py

# Instructors: every lesson's exercise notebook without solutions (export/students/) and its
# answer key (export/answer_key/). VARIANT=N draws the class's own numbers from seed N.
student: install
	$(BIN)/python -m gpulesson.exercises export --all --out export $(if $(VARIANT),--variant $(VARIANT))

# A new lesson from the skeleton lesson (scripts/lesson_skeleton/): its two notebooks, exercise
# bank, calculator module and content test, its entry in gpulesson/course.py, its lines in
# _toc.yml, book/intro.md and book/how_to_use.md (docs/recipes.md).
lesson: install
	@test -n "$(SLUG)" -a -n "$(TITLE)" || { echo 'usage: make lesson SLUG=<slug> TITLE="<title>"'; exit 2; }
	$(BIN)/python scripts/new_lesson.py "$(SLUG)" "$(TITLE)" $(if $(QUESTION),--question "$(QUESTION)")

# From the repository root, so that notebooks/ and exercises/ are both in reach; on localhost.
# (--allow-root only where we are root, as in containers.)
lab: $(LAB_STAMP)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --LabApp.default_url=/lab/tree/notebooks \
		$(if $(filter 0,$(shell id -u)),--allow-root)

# http.server with the types Pyodide needs (.mjs as JavaScript, .wasm as application/wasm).
serve:
	@test -f _build/html/index.html || { echo "No site yet: run 'make book' first."; exit 1; }
	$(PYTHON) scripts/serve_site.py --host $(HOST) --port $(PORT) --directory _build/html

clean:
	rm -rf _build _vendor .pytest_cache
