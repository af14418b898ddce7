# corral-yarn: the two quick-start commands are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: setup demo test unit bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	touch $@

demo: setup
	$(VENV)/bin/corral demo

test: setup
	$(PY) -m pytest

unit: setup
	$(PY) -m pytest -m "not integration"

bench: setup
	for b in benchmarks/bench_*.py; do $(PY) $$b; done

clean:
	rm -rf $(VENV) .corral build *.egg-info
