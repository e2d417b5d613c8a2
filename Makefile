# failcodes: the two commands a new user runs are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LS_VENV := .venv-labelstudio
LS_VERSION := 1.23.2

.PHONY: demo test lint typecheck unit labelstudio-venv bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# The Label Studio server pins openai<2, which conflicts with ours: it gets its own venv.
$(LS_VENV)/.installed:
	$(PYTHON) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install --quiet --upgrade pip
	$(LS_VENV)/bin/pip install --quiet label-studio==$(LS_VERSION)
	touch $@

labelstudio-venv: $(LS_VENV)/.installed

demo: $(BIN)/.installed
	$(BIN)/failcodes demo

lint: $(BIN)/.installed
	$(BIN)/ruff check src tests bench notebooks
	$(BIN)/ruff format --check src tests bench notebooks

typecheck: $(BIN)/.installed
	$(BIN)/mypy

unit: $(BIN)/.installed
	$(BIN)/pytest -q

test: $(BIN)/.installed $(LS_VENV)/.installed lint typecheck
	FAILCODES_LABEL_STUDIO_BIN=$(abspath $(LS_VENV))/bin/label-studio $(BIN)/pytest -q

bench: $(BIN)/.installed
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) $(LS_VENV) .pytest_cache .mypy_cache .ruff_cache
