# The course's entry points. Each target bootstraps .venv from this project's own files.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test demo lab notebooks bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[course]'
	touch $(STAMP)

test: $(STAMP)  ## every suite against the solutions; each chapter suite must fail on the stubs; notebooks
	$(BIN)/python -m pytest -q -n auto
	@for suite in tests/ch*/; do \
	  if $(BIN)/python -m pytest -q -x --impl exercises $$suite >/dev/null 2>&1; then \
	    echo "$$suite passes against the untouched exercise stubs: its tests are vacuous"; exit 1; \
	  else echo "$$suite fails against the exercise stubs, as it should"; fi; \
	done
	$(BIN)/python -m pytest -q --nbval-lax --nbval-current-env chapters/

demo: $(STAMP)  ## the running example, offline unless ANTHROPIC_API_KEY is set
	$(BIN)/python -m minimal_runtime demo

lab: $(STAMP)  ## open the notebooks
	$(BIN)/jupyter lab chapters/

notebooks: $(STAMP)  ## re-execute every notebook in place (outputs are committed)
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace chapters/*.ipynb
	$(BIN)/nbstripout --keep-output --keep-count chapters/*.ipynb

bench: $(STAMP)
	for b in benchmarks/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
