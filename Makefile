# corral-yarn: the two quick-start commands are `make demo` and `make test` (see README.md).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
JAVA_SOURCES := $(shell find java_patch/src -type f 2>/dev/null) java_patch/pom.xml

.PHONY: setup demo test unit lint java-verify bench clean setup-containers image cluster-up cluster-down deploy-check

setup: $(VENV)/.installed java_patch/target/.built

$(VENV)/.installed: pyproject.toml
	scripts/bootstrap.sh
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	touch $@

java_patch/target/.built: $(JAVA_SOURCES)
	scripts/bootstrap.sh
	java_patch/build.sh package
	touch $@

demo: setup
	$(VENV)/bin/corral demo

# Everything: the layering (import-linter, .importlinter), the JUnit suite (mvn verify), then pytest
# (unit and integration on the embedded cluster). No `setup` for java_patch: mvn verify runs package's phases
# too, so it builds what the embedded cluster needs (one Maven run instead of package then verify).
test: $(VENV)/.installed lint java-verify
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache

java-verify:
	scripts/bootstrap.sh
	java_patch/build.sh verify
	touch java_patch/target/.built

unit: $(VENV)/.installed
	$(PY) -m pytest -m "not integration"

bench: setup
	for b in benchmarks/bench_*.py; do echo "== $$b" >&2; $(PY) $$b; done

# The container deployment (docs/deploy.md "In containers"): image, 7-container cluster, end-to-end check.
setup-containers:
	scripts/bootstrap.sh containers

image: setup-containers
	scripts/containers.sh image

cluster-up: setup-containers
	scripts/containers.sh up

deploy-check: setup
	scripts/containers.sh check

cluster-down:
	scripts/containers.sh down

clean:
	rm -rf $(VENV) .corral build *.egg-info java_patch/target
