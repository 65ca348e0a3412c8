# The two commands of the README: `make lab` and `make test`. Each sets up what it needs on a
# fresh machine: a Docker engine, the lab images, the controller's virtualenv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)
export ANSIBLE_FORCE_COLOR ?= false
export PY_COLORS ?= 0

# Debian packages the controller's tests use: shellcheck for the shell that ships, iproute2 for
# the address of the Docker bridge that the release scenario's stand-ins listen on, and
# openssh-client for the adopt scenario, which reaches its hosts over ssh as production does.
TOOLS := shellcheck iproute2 openssh-client
AS_ROOT := $(if $(filter 0,$(shell id -u)),,sudo)

# Molecule scenarios, in the order `make test` runs them, one at a time. The journey and the
# directory spend most of their time waiting (the agents' cycles, SSSD's cache, sshd's penalty
# for failed logins), so they run beside them, one after the other, and the scratch and adopt
# scenarios after those two: the four together take about as long as the others.
SCENARIOS := default cluster release
BESIDE := journey directory scratch adopt

.PHONY: help lab lab-down test setup venv tools engine unit static lint sanity molecule clean

help:
	@echo "make lab       set up, bring up the laboratory Site in local containers, print how to use it"
	@echo "make test      set up and run the whole suite: unit, lint, sanity, molecule scenarios"
	@echo "make lab-down  remove the laboratory's containers"

lab: setup
	ansible-playbook playbooks/lab.yml

lab-down: venv
	ansible-playbook playbooks/lab_down.yml

# pytest and the static checks need no container and share nothing, so they run side by side
# (each one's output printed whole when it ends); the scenarios follow, one at a time.
test: setup
	@$(MAKE) --no-print-directory --jobs=2 --output-sync=target unit static
	@$(MAKE) --no-print-directory molecule

setup: venv tools engine

tools:
	@missing=$$(for package in $(TOOLS); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -qx 'install ok installed' || echo $$package; done); \
	if [ -n "$$missing" ]; then \
	  echo "== installing" $$missing "from Debian"; \
	  $(AS_ROOT) apt-get update -qq; \
	  $(AS_ROOT) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt constraints.txt
	@echo "== controller virtualenv"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt -c constraints.txt
	@touch $@

engine:
	@echo "== lab engine and images"
	time scripts/lab-engine up

unit: venv
	@echo "== pytest: unit tests, and integration tests against local stand-ins"
	time pytest tests/unit tests/integration

static: venv
	@$(MAKE) --no-print-directory lint sanity

lint: venv
	@echo "== ansible-lint (production profile)"
	time ansible-lint --profile production

sanity: venv
	@echo "== ansible-test sanity"
	time scripts/sanity

# The scenarios beside the others run one after another in the background, each writing to
# tests/output/<scenario>.log, printed whole when they end; a failure of any stops them all
# and removes their containers.
molecule: setup
	@mkdir -p tests/output; rm -f tests/output/beside.failed; start=$$SECONDS; \
	setsid bash -c 'for scenario in $(BESIDE); do \
	  started=$$SECONDS; molecule test -s $$scenario > tests/output/$$scenario.log 2>&1 \
	    || { echo $$scenario > tests/output/beside.failed; exit 1; }; \
	  echo "== molecule scenario $$scenario passed in $$((SECONDS - started)) s" >> tests/output/$$scenario.log; \
	done' & beside=$$!; \
	echo "== molecule scenarios $(BESIDE), beside the others (tests/output/<scenario>.log)"; \
	failed=; for scenario in $(SCENARIOS); do \
	  echo "== molecule scenario $$scenario"; started=$$SECONDS; \
	  molecule test -s $$scenario || { failed=$$scenario; break; }; \
	  echo "== molecule scenario $$scenario passed in $$((SECONDS - started)) s"; \
	done; \
	if [ -n "$$failed" ]; then \
	  kill -- -$$beside 2>/dev/null || true; wait $$beside || true; \
	  for scenario in $(BESIDE); do molecule destroy -s $$scenario >/dev/null 2>&1 || true; done; \
	  echo "make test: molecule scenario '$$failed' failed"; exit 1; \
	fi; \
	beside_status=0; wait $$beside || beside_status=$$?; \
	for scenario in $(BESIDE); do \
	  [ -f tests/output/$$scenario.log ] || continue; \
	  echo "== molecule scenario $$scenario (its output)"; cat tests/output/$$scenario.log; \
	done; \
	[ $$beside_status -eq 0 ] || { echo "make test: molecule scenario '$$(cat tests/output/beside.failed)' failed"; exit 1; }; \
	echo "== molecule scenarios $(BESIDE) passed; all scenarios in $$((SECONDS - start)) s"

clean:
	rm -rf $(VENV) .cache tests/output
