# The course's entry points. Each target bootstraps .venv from this project's own files.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test test-lint test-suites test-stubs test-notebooks test-checks demo lab wheelhouse notebooks bench times mutate mutate-runtime soak progress clean

# Every step's logic is in course.py (`python course.py setup|test|demo|lab|progress|serve|wheelhouse`, the same
# in PowerShell, cmd and a POSIX shell); these targets are its POSIX shortcuts. The first one creates .venv
# with $(PYTHON) (3.11 or newer; make PYTHON=python3.12 picks one) and installs the course into it.
$(STAMP): pyproject.toml
	@$(PYTHON) course.py setup

# make test: the lint, then one two-worker session of every suite, the stub check and every notebook;
# test-suites, test-stubs and test-notebooks run each part alone; `make times` times them.
test: $(STAMP)  ## lint; every suite on the solutions; every chapter suite fails on the stubs; every notebook
	@$(BIN)/python course.py test

test-lint test-checks test-suites test-stubs test-notebooks: $(STAMP)
	@$(BIN)/python course.py test $(@:test-%=%)

progress: $(STAMP)  ## how many tests of each chapter pass on your own exercises/
	@$(BIN)/python course.py progress

demo: $(STAMP)  ## the running example, offline unless ANTHROPIC_API_KEY is set
	@$(BIN)/python course.py demo

# make experiment CHAPTER=08 CAP=2 (chapters 04, 05, 07, 08, 09): the chapter's deciding experiment on a real model
# (ANTHROPIC_API_KEY): the simulated run's cost first, nothing sent over CAP dollars; without a key it only says what
# it would cost.
.PHONY: experiment
experiment: $(STAMP)  ## a chapter's deciding experiment on a real model, beside the simulated one (CHAPTER=08 CAP=dollars)
	$(BIN)/python -m minimal_runtime experiment $(or $(CHAPTER),08) --cap $(or $(CAP),1)

.PHONY: serve online
serve: $(STAMP)  ## the emulator on loopback for your own agent, one line per call (ARGS="--port 0 --log run.jsonl ...")
	@$(BIN)/python course.py serve $(ARGS)

online: $(STAMP)  ## the demo and every notebook on the online path (COURSE_BACKEND=api) against serve, offline (minutes)
	$(BIN)/python tests/serve/run_online.py

lab: $(STAMP)  ## JupyterLab on your copies of the chapters (workbook/), in reading mode (the first run installs JupyterLab; ARGS="--port 8890 ..." to JupyterLab)
	@$(BIN)/python course.py lab $(ARGS)

wheelhouse: $(STAMP)  ## every wheel the course needs for Linux, macOS and Windows on Python 3.11-3.14, in wheelhouse/, for a venue's offline install (ARGS="DIR --platforms ... --pythons ...")
	@$(BIN)/python course.py wheelhouse $(ARGS)

# make ui-test: the pages in a real browser, Debian's chromium driven by Playwright (tests/ui/; not part
# of make test). Playwright cannot fetch its own browser here, so the system's is used, installed with
# apt-get when missing: in CI a failed install fails the run, elsewhere the check is skipped in one line.
BROWSER := /usr/bin/chromium
.PHONY: ui-test
ui-test: $(STAMP)  ## in Chromium: chapters 01, 02 and 09 in JupyterLab in both themes, reading mode and the switch to your code (01, 09), and serve's page (screenshots in .ui-artifacts/)
	@$(BIN)/python -c 'import jupyterlab, playwright' 2>/dev/null || $(BIN)/uv pip install --python $(BIN)/python -e '.[course,lab,ui]'
	@[ -x $(BROWSER) ] || { echo "installing Debian's chromium (apt-get install chromium)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1; } || true
	@if [ ! -x $(BROWSER) ]; then \
	  if [ -n "$$CI" ]; then echo "ui-test: Debian's chromium could not be installed"; exit 1; fi; \
	  echo "ui-test: skipped: no $(BROWSER), and apt-get could not install chromium"; exit 0; fi; \
	  $(BROWSER) --version 2>/dev/null; UI_TEST=1 UI_BROWSER=$(BROWSER) $(BIN)/python -m pytest -q -p no:xdist tests/ui

# make otel: Arize Phoenix (arize-phoenix from PyPI, some 140 packages, in a venv of its own, .otel/venv,
# never the course's) on loopback as the tracing tool, fed the spans of a serve run and a runtime run, checked
# through its REST API and shown in Chromium (tests/ui/test_phoenix.py; .ui-artifacts/otel-phoenix.png). Not
# part of make test: Phoenix's first start takes minutes.
OTEL    := .otel
PHOENIX := arize-phoenix==20.26.1
.PHONY: otel
otel: $(STAMP)  ## Arize Phoenix on loopback showing a run's spans, in Chromium (screenshot in .ui-artifacts/)
	@$(BIN)/python -c 'import playwright' 2>/dev/null || $(BIN)/uv pip install --python $(BIN)/python -e '.[course,ui]'
	@[ -x $(OTEL)/venv/bin/phoenix ] || { $(BIN)/uv venv -q --python $(BIN)/python $(OTEL)/venv && \
	  $(BIN)/uv pip install --python $(OTEL)/venv/bin/python '$(PHOENIX)'; }
	@[ -x $(BROWSER) ] || { echo "installing Debian's chromium (apt-get install chromium)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1; } || true
	@[ -x $(BROWSER) ] || { echo "otel: no $(BROWSER), and apt-get could not install chromium"; exit 1; }
	UI_TEST=1 UI_BROWSER=$(BROWSER) PHOENIX=$(OTEL)/venv/bin/phoenix $(BIN)/python -m pytest -q -p no:xdist tests/ui/test_phoenix.py

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

# make fork-test: every bug of tests/runtime/test_fork_suite.py planted in a fresh fork, each caught by the fork's
# own suite (23 forks; not part of make test, whose test_fork.py runs the fork's suite once).
.PHONY: fork-test
fork-test: $(STAMP)  ## every planted bug in a fresh fork is caught by the fork's own suite (not part of make test)
	$(BIN)/python -m pytest -q -p no:xdist -m slow tests/runtime/test_fork_suite.py

# make features-test: each shipped feature a chapter's figures rest on is replaced by one that raises, and the
# chapter must then fail under nbval (tests/course/test_broken_features.py; a kernel per pair, minutes).
.PHONY: features-test
features-test: $(STAMP)  ## every chapter fails when a runtime feature it measures is broken (not part of make test; minutes)
	COURSE_IMPL=solutions $(BIN)/python -m pytest -q -p no:xdist -m slow tests/course/test_broken_features.py

soak: $(STAMP)  ## 300 calls with faults, 30 kills and random steers; prints its figures (not part of make test)
	$(BIN)/python -m pytest -q -s -m slow tests/runtime/test_soak.py

.PHONY: interop
interop: $(STAMP)  ## pinned real clients (Claude Code, TS SDK, pydantic-ai, LangChain, LiteLLM, both SDK tool runners, Vercel AI SDK; smolagents, cline, opencode, LangGraph, agno, OpenAI Agents, Google ADK, crewAI, mirascope against plain serve; mini-swe-agent, gptme, llm, AutoGen, Semantic Kernel, griptape, langroid, camel-ai, browser-use, open-interpreter, Continue CLI on their default paths, their own token records and replay of serve's log checked) against the emulator over HTTP
	INTEROP=1 $(BIN)/python -m pytest -q -rs -p no:xdist tests/interop tests/replay/test_claude_code_logs.py

clean:
	rm -rf $(VENV) .pytest_cache mutants .interop $(BOOK) _build
