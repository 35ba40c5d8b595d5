# drsched — two commands on a fresh machine: `make demo` and `make test`.
# Caches (venv, pip, Go build cache, built control plane) live outside the clone so CI reuses them.

SHELL := /bin/bash
PYTHON ?= python3
CACHE ?= $(HOME)/.cache/drsched
VENV ?= $(CACHE)/venv
BIN := $(VENV)/bin
PY := $(BIN)/python
EXTRAS ?= serve,train,traces,dev
# Re-install when pyproject changes or the checkout moves (CI runs in a fresh clone elsewhere).
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)-$(shell echo $(CURDIR) | sha1sum | cut -c1-8)
PYTEST := $(PY) -m pytest
export PYTHONDONTWRITEBYTECODE := 1
# The venv is shared by every clone on the machine (it lives in CACHE) and its editable install points at the
# clone that installed last; this checkout's own code comes first for everything make runs (a script run as a
# file, scripts/*.py, would otherwise import another clone's packages).
export PYTHONPATH := $(CURDIR)$(if $(PYTHONPATH),:$(PYTHONPATH))

.PHONY: help venv venv-demo deps test test-unit test-integration test-e2e lint demo evaluate model bench controlplane clean-venv

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)  ## create the venv (outside the clone) and install drsched with all extras

# make demo needs no torch, gymnasium or SB3 (the serving path never imports them): a first demo skips that
# download (~2.5 GB); the full install, whenever something needs it, is a superset and satisfies this one.
DEMO_EXTRAS ?= serve,lab
DEMO_STAMP := $(subst .installed-,.installed-demo-,$(STAMP))
$(DEMO_STAMP): pyproject.toml
	@if [ -e $(STAMP) ]; then touch $@; exit 0; fi; \
	 test -x $(PY) || $(PYTHON) -m venv $(VENV); \
	 $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '.[$(DEMO_EXTRAS)]' && touch $@

venv-demo: $(DEMO_STAMP)  ## the venv with what make demo needs (serve + plots; the full venv also does)

lint: venv  ## ruff + the import-linter layer contracts
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test-unit: venv  ## pure-logic tests
	$(PYTEST) tests/unit -q

test-integration: venv  ## real processes and servers on loopback
	$(PYTEST) tests/integration -q

test-e2e: venv controlplane  ## the stock control plane (etcd, kube-apiserver, kube-scheduler, KWOK) + our services
	$(PYTEST) tests/e2e -q -m e2e

.PHONY: images
# Needs only the standard library (no venv): root, buildah and mmdebstrap (see .ci/run).
images:  ## build (or reuse) the drsched images from their Dockerfiles, no registry (first run ~5 min); prints sizes
	$(PYTHON) -m harness.images

controlplane:  ## build (or reuse) etcd, kube-apiserver, kube-scheduler and KWOK from Go modules
	@if [ -x harness/controlplane/build.sh ]; then bash harness/controlplane/build.sh; fi

deps:  ## install the Debian packages the tests use (as root), or name the missing ones and how to install them
	@bash scripts/install-deps.sh

test: venv deps  ## the whole suite: lint, unit, integration, e2e (each timed), then every skipped test and why
	@bash scripts/run-tests.sh

demo: venv-demo deps  ## default-scheduler vs drsched on real nodes, measured (cold: builds first; KWOK demo: DEMO_ARGS=--kwok)
	$(PY) -m lab demo $(DEMO_ARGS)

.PHONY: lab
LAB_ARGS ?= --seeds 1,2,3,4,5 --out out/lab
lab: venv  ## the real-node experiment: every arm on the same seeded schedules (python -m lab run --help)
	DRSCHED_REALNODES_WAIT_S=$${DRSCHED_REALNODES_WAIT_S:-2400} nice -n 5 $(PY) -m lab run $(LAB_ARGS)

EVAL_POLICIES := default-k8s,tlp,lvrb,koord,demand-aware,lookahead,random,round-robin,dqn:policy/models/default.npz
EVAL := nice -n 5 $(PY) -m policy.evaluate --workers 2 --no-plots -q

evaluate: venv  ## the README's result tables: run the evaluations into results/policy/ (~17 min on 2 busy cores), regenerate the README blocks
	$(EVAL) --policies $(EVAL_POLICIES) --split test --seeds 5 --served --out results/policy/test-served
	$(EVAL) --policies $(EVAL_POLICIES) --split test --seeds 5 --served --hot-filter strict --out results/policy/test-served-strict
	$(EVAL) --policies $(EVAL_POLICIES) --split test --seeds 5 --served --hot-filter off --out results/policy/test-served-nohot
	$(EVAL) --policies $(EVAL_POLICIES) --split test --seeds 5 --out results/policy/test
	$(EVAL) --policies $(EVAL_POLICIES) --split validation --seeds 5 --out results/policy/validation
	$(EVAL) --policies $(EVAL_POLICIES) --split validation --seeds 5 --served --out results/policy/validation-served
	$(EVAL) --policies $(EVAL_POLICIES) --split validation --seeds 5 --served --hot-filter strict --out results/policy/validation-served-strict
	$(EVAL) --policies $(EVAL_POLICIES) --split validation --seeds 5 --served --hot-filter off --out results/policy/validation-served-nohot
	$(EVAL) --policies $(EVAL_POLICIES) --split validation --seeds 5 --served --hot-filter prefer-fit --out results/policy/validation-served-fit
	$(EVAL) --policies $(EVAL_POLICIES) --trace alibaba --scenarios base,hetero --loads 0.9,1.5 --seeds 3 --jobs 1000 --out results/policy/alibaba
	nice -n 5 $(PY) -m policy.evaluate migration --workers 2 --no-plots --out results/policy/migration
	$(PY) scripts/readme_tables.py

TEACHER := results/policy/distill/models/ens-all7.npz
model: venv  ## the shipped model: distil it from the committed teacher, same weights byte for byte (~1 min); the whole chain: policy/README.md
	$(PY) -m policy.distill --teacher $(TEACHER) --out policy/models/default

bench: venv  ## print the benchmark figures (simulator, policy inference/training, extender, monitor)
	$(PY) bench/bench_sim.py
	$(PY) bench/bench_policy.py
	$(PY) bench/bench_extender.py
	$(PY) bench/bench_scheduler.py
	$(PY) bench/bench_monitor.py

clean-venv:  ## drop the cached venv
	rm -rf $(VENV)
