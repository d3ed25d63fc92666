# The course's entry points. Each target bootstraps .venv from this project's own files.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test test-lint test-suites test-stubs test-notebooks test-checks demo lab notebooks bench times mutate mutate-runtime soak progress clean

# make test runs some twenty Python processes (two workers, a kernel per notebook, the pytest runs of
# the stub and notebook checks); where PYTHONDONTWRITEBYTECODE is set, every pytest start rewrites its
# plugins' modules (hypothesis, xdist, anyio) again, 2.5 s each time. The compiled files go to
# __pycache__/, which git ignores.
unexport PYTHONDONTWRITEBYTECODE

NEW_ENOUGH := -c 'import sys; sys.exit(sys.version_info < (3, 11))'

$(STAMP): pyproject.toml
	@$(PYTHON) $(NEW_ENOUGH) || { echo "$(PYTHON) is not Python 3.11 or newer; pick one with: make PYTHON=python3.12 $(MAKECMDGOALS)"; exit 1; }
	@# a venv left by an older or removed interpreter is rebuilt, not reused
	@if [ -d $(VENV) ] && ! $(BIN)/python $(NEW_ENOUGH) 2>/dev/null; then echo "$(VENV) was built by another Python: rebuilding it"; rm -rf $(VENV); fi
	$(PYTHON) -m venv $(VENV)
	@# uv resolves and installs in seconds where pip takes minutes; pip only fetches uv itself
	@echo "installing uv into $(VENV), then the course with it (anthropic, pydantic, matplotlib, ipykernel, nbconvert, pytest, nbval; about 440 MB)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv
	@# compiled at install: each of make test's many processes (workers, kernels, subprocess tests) would
	@# otherwise compile the SDK's ~1,000 modules itself, every time where PYTHONDONTWRITEBYTECODE is set
	$(BIN)/uv pip install --compile-bytecode --python $(BIN)/python -e '.[course]'
	touch $(STAMP)

# make test: the lint, then one two-worker session of every suite, the stub check (in the learner-path test)
# and every notebook (conftest.py: a notebook is one unit of work, each test another, so neither
# worker idles at the end). test-suites, test-stubs and test-notebooks run each part alone; `make times` times them.
# COURSE_IMPL is pinned: the suites and notebooks check the solutions whatever your shell says.
NBVAL := -p nbval --nbval --nbval-current-env --nbval-sanitize-with=chapters/nbval_sanitize.cfg
test: test-lint test-checks  ## lint; every suite on the solutions; every chapter suite fails on the stubs; every notebook
	@git status --porcelain -- exercises 2>/dev/null | grep -q . && echo "make test checked the exercise stubs as committed, not your exercises/: \`make progress\` checks your code" || true

test-lint: $(STAMP)  # exercises/ is yours: the stub check lints the stubs as committed instead
	$(BIN)/ruff check --quiet minimal_runtime tests benchmarks solutions conftest.py

test-suites: $(STAMP)
	COURSE_IMPL=solutions $(BIN)/python -m pytest -q -n auto

test-stubs: $(STAMP)
	$(BIN)/python tests/exercise_check.py stubs

test-notebooks: $(STAMP)
	COURSE_IMPL=solutions $(BIN)/python -m pytest -q -n auto --dist loadscope $(NBVAL) chapters/  # every output

test-checks: $(STAMP)
	COURSE_IMPL=solutions $(BIN)/python -m pytest -q -n auto --dist loadscope $(NBVAL) tests chapters/

progress: $(STAMP)  ## how many tests of each chapter pass on your own exercises/
	$(BIN)/python tests/exercise_check.py progress

demo: $(STAMP)  ## the running example, offline unless ANTHROPIC_API_KEY is set
	$(BIN)/python -m minimal_runtime demo

.PHONY: serve online
serve: $(STAMP)  ## the emulator on loopback for your own agent, one line per call (ARGS="--port 0 --log run.jsonl ...")
	$(BIN)/python -m minimal_runtime serve $(ARGS)

online: $(STAMP)  ## the demo and every notebook on the online path (COURSE_BACKEND=api) against serve, offline (minutes)
	$(BIN)/python tests/serve/run_online.py

# make lab opens copies: JupyterLab autosaves what a run leaves (a Run All stopped at a stub clears the
# outputs after it), and chapters/ are the course's own notebooks, checked by make test. workbook/ is at
# the same depth as chapters/, so a notebook finds ../shared/ from either. As root (a container),
# JupyterLab refuses to start without --allow-root.
WORKBOOK := workbook
lab: $(STAMP)  ## open your copies of the notebooks (workbook/; the first run installs JupyterLab; ARGS="--port 8890 ..." to JupyterLab)
	@$(BIN)/python -c 'import jupyterlab' 2>/dev/null || $(BIN)/uv pip install --python $(BIN)/python -e '.[course,lab]'
	@mkdir -p $(WORKBOOK)
	@for notebook in chapters/*.ipynb; do [ -e $(WORKBOOK)/$${notebook#chapters/} ] || cp $$notebook $(WORKBOOK)/; done
	@echo "$(WORKBOOK)/ holds your copies of the chapters: your runs and saves change them, never chapters/ (delete a copy to get it fresh)"
	@# your own Claude Code sessions in the real-log cells (COURSE_OWN_LOGS=0 make lab keeps them out);
	@# make test, nbval and CI never set it
	COURSE_OWN_LOGS=$${COURSE_OWN_LOGS:-1} $(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(ARGS) $(WORKBOOK)/

# make ui-test: the pages in a real browser, Debian's chromium driven by Playwright (tests/ui/; not part
# of make test). Playwright cannot fetch its own browser here, so the system's is used, installed with
# apt-get when missing: in CI a failed install fails the run, elsewhere the check is skipped in one line.
BROWSER := /usr/bin/chromium
.PHONY: ui-test
ui-test: $(STAMP)  ## in Chromium: chapters 01, 02 and 09 in JupyterLab in both themes, and serve's page (screenshots in .ui-artifacts/)
	@$(BIN)/python -c 'import jupyterlab, playwright' 2>/dev/null || $(BIN)/uv pip install --python $(BIN)/python -e '.[course,lab,ui]'
	@[ -x $(BROWSER) ] || { echo "installing Debian's chromium (apt-get install chromium)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1; } || true
	@if [ ! -x $(BROWSER) ]; then \
	  if [ -n "$$CI" ]; then echo "ui-test: Debian's chromium could not be installed"; exit 1; fi; \
	  echo "ui-test: skipped: no $(BROWSER), and apt-get could not install chromium"; exit 0; fi; \
	  $(BROWSER) --version 2>/dev/null; UI_TEST=1 UI_BROWSER=$(BROWSER) $(BIN)/python -m pytest -q -p no:xdist tests/ui

# make book: the course as a static site in _build/html/ (Sphinx with MyST-NB and the book theme, from the
# committed notebooks and docs/, never re-executed; settings in docs/book/conf.py). Its builder is installed
# once into .book/venv from the pins in docs/book/requirements.txt, as make interop installs its clients;
# a failed install fails. Jupyter Book 2's mystmd is not used: it downloads its theme from outside the
# registries at build time. -W: a broken link or reference fails the build.
BOOK      := .book
BOOK_SITE := _build/html
.PHONY: book book-test
$(BOOK)/venv/.pins: docs/book/requirements.txt | $(STAMP)
	@echo "installing make book's site builder into $(BOOK)/venv (pinned in docs/book/requirements.txt)"
	rm -rf $(BOOK)/venv
	$(BIN)/uv venv -q $(BOOK)/venv --python $(BIN)/python
	$(BIN)/uv pip install -q --python $(BOOK)/venv/bin/python -r docs/book/requirements.txt
	cp docs/book/requirements.txt $@

book: $(BOOK)/venv/.pins  ## the course as a website in _build/html/: the notebooks as committed and docs/ (no re-execution)
	rm -rf $(BOOK_SITE)
	$(BOOK)/venv/bin/sphinx-build -q -W --keep-going -c docs/book . $(BOOK_SITE)
	@echo "the site: $(BOOK_SITE)/README.html (or serve it: python3 -m http.server -d $(BOOK_SITE))"

# make book-test: every page of the site in Chromium (as make ui-test: Debian's, installed when missing; in
# CI a failed install fails), in both themes at 1,366 px; screenshots in .ui-artifacts/book/.
book-test: book  ## the site's pages in Chromium: no maths or raw LaTeX, every plot loaded, no sideways scroll, every link resolves
	@$(BIN)/python -c 'import playwright' 2>/dev/null || $(BIN)/uv pip install --python $(BIN)/python -e '.[course,ui]'
	@[ -x $(BROWSER) ] || { echo "installing Debian's chromium (apt-get install chromium)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1; } || true
	@if [ ! -x $(BROWSER) ]; then \
	  if [ -n "$$CI" ]; then echo "book-test: Debian's chromium could not be installed"; exit 1; fi; \
	  echo "book-test: skipped: no $(BROWSER), and apt-get could not install chromium"; exit 0; fi; \
	  UI_TEST=1 UI_BROWSER=$(BROWSER) BOOK_SITE=$(BOOK_SITE) $(BIN)/python -m pytest -q -p no:xdist tests/ui/test_book.py

notebooks: $(STAMP)  ## re-execute every notebook in place (outputs are committed)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace chapters/*.ipynb
	$(BIN)/nbstripout --keep-output --keep-count chapters/*.ipynb

bench: $(STAMP)  ## speed and cost ratios measured in one run; chapter 09's 500-page table (benchmarks/compaction_long.json, minutes)
	for b in benchmarks/emulator_overhead.py benchmarks/runtime_overhead.py benchmarks/replay_real.py benchmarks/thread_300.py \
	  benchmarks/compaction_long.py; do \
	  $(BIN)/python $$b || exit 1; done

times: $(STAMP)  ## make test's steps on a fresh clone (and its suites, stub check and notebooks each alone), then the README's chapter table (about twenty minutes)
	$(BIN)/python benchmarks/make_test_time.py --apart
	$(BIN)/python benchmarks/chapter_times.py

mutate: $(STAMP)  ## mutation testing of the emulator's accounting (not part of make test; about 15 minutes)
	$(BIN)/uv pip install --python $(BIN)/python -e '.[course,mutate]'
	$(BIN)/python benchmarks/mutation.py emulator

mutate-runtime: $(STAMP)  ## mutation testing of core/ and features/ (not part of make test; hours on 2 cores)
	$(BIN)/uv pip install --python $(BIN)/python -e '.[course,mutate]'
	$(BIN)/python benchmarks/mutation.py core
	$(BIN)/python benchmarks/mutation.py features

soak: $(STAMP)  ## 300 calls with faults, 30 kills and random steers; prints its figures (not part of make test)
	$(BIN)/python -m pytest -q -s -m slow tests/runtime/test_soak.py

.PHONY: interop
interop: $(STAMP)  ## pinned real clients (Claude Code, TS SDK, pydantic-ai, LangChain, LiteLLM, both SDK tool runners, Vercel AI SDK; smolagents and the cline CLI against plain serve) against the emulator over HTTP
	INTEROP=1 $(BIN)/python -m pytest -q -rs -p no:xdist tests/interop tests/replay/test_claude_code_logs.py

clean:
	rm -rf $(VENV) .pytest_cache mutants .interop $(BOOK) _build
