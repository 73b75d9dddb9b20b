# make demo: set up and run tcccd on its embedded default. make test: set up and run the tests.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
EXTRAS ?= asr,tts,systemd,capture,wyoming,card,tak,bench,dev
# On CPU machines torch is pinned to the local 2.13.0 CPU wheel; the Jetson brings NVIDIA's own torch.
CONSTRAINTS := $(if $(wildcard /etc/nv_tegra_release),,-c constraints-cpu.txt)

.PHONY: setup test test-explore test-gpu demo bench lint clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints-cpu.txt scripts/system-deps.sh
	scripts/system-deps.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(CONSTRAINTS) -e ".[$(EXTRAS)]"
	touch $@

# The TAK server the TAK tests relay through (FreeTAKServer, in a venv of its own: its pins clash with tcccd's).
# Should it not install, the tests that need it skip and say how to install it; everything else runs.
TAKSERVER_VENV := .venv-takserver
$(TAKSERVER_VENV)/.installed:
	@(test -x $(TAKSERVER_VENV)/bin/python || python3 -m venv $(TAKSERVER_VENV)) && \
	$(TAKSERVER_VENV)/bin/pip install -q freetakserver==2.2.1 opentelemetry-sdk==1.27.0 opentelemetry-api==1.27.0 \
	&& touch $@ || echo "make: FreeTAKServer did not install: tests/tak/test_takserver.py will skip" >&2

# Hypothesis runs its `ci` profile (the same examples every run: tests/conftest.py); `make test-explore` draws anew.
test: setup $(TAKSERVER_VENV)/.installed
	$(PY) -m pytest -q -m "not gpu and not tensorrt"

test-explore: setup $(TAKSERVER_VENV)/.installed
	HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q -m "not gpu and not tensorrt"

# The GPU paths (torch CUDA FP16, TensorRT where it imports). No `setup` dependency: GPU test machines have no
# network; there, `make test-gpu PY=python3` with tcccd installed (pip install --no-deps -e .) into that python.
test-gpu:
	@$(PY) -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else "make test-gpu: FAILED, torch " + \
	torch.__version__ + " sees no CUDA device; run it on a machine with an NVIDIA GPU and a CUDA build of torch")'
	$(PY) -m pytest -q -m "gpu or tensorrt"

demo: setup
	scripts/demo.sh

bench: setup
	$(PY) bench/bus.py
	$(PY) bench/asr.py
	$(PY) bench/tts.py

lint: setup
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build dist *.egg-info bench/out
