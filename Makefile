# The two commands of the README: `make lab` and `make test`. Each sets up what it needs on a
# fresh machine: a Docker engine, the lab images, the controller's virtualenv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# The oldest and the newest ansible-core the collection supports (meta/runtime.yml): .venv holds
# a 2.19 with every development tool, .venv-oldest the first 2.19 alone, .venv-newest the newest
# with what the unit tests and sanity need, on a Python that ansible-core supports (3.12 or newer).
VENV_OLDEST := .venv-oldest
VENV_NEWEST := .venv-newest
PYTHON_NEWEST ?= $(lastword $(sort $(wildcard /usr/bin/python3.1[2-9] $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3)))
export PATH := $(BIN):$(PATH)
export ANSIBLE_FORCE_COLOR ?= false
export PY_COLORS ?= 0

# Debian packages the controller's tests use: shellcheck for the shell that ships, iproute2 for
# the address of the Docker bridge that the release scenario's stand-ins listen on, and
# openssh-client for the adopt scenario, which reaches its hosts over ssh as production does.
TOOLS := shellcheck iproute2 openssh-client
comma := ,
AS_ROOT := $(if $(filter 0,$(shell id -u)),,sudo)

# Molecule scenarios, in the order `make test` runs them, in two lanes of about equal length
# (6 December 2026 on 2 cores: journey 960 s, directory 351, cluster 1300, default 156; beside
# them the checks 904, adopt 779, release 1079). The foreground lane starts at once with the
# journey, which spends most of its time waiting (the agents' cycles, SSSD's cache), then the
# directory, the cluster (the longest scenario; the scratch tree is tested on its hosts) and the
# default scenario. The other lane runs the checks first (make test), then adopt and release;
# release waits until the journey has ended, so that the two Waldur stand-ins and release
# builds never overlap.
SCENARIOS := journey directory cluster default
BESIDE := adopt release

.PHONY: help lab lab-down test setup venv venv-oldest venv-newest tools engine unit static lint sanity \
	docs-lint changelog-lint artifact precommit oldest newest checks molecule clean

help:
	@echo "make lab       set up, bring up the laboratory Site in local containers, print how to use it"
	@echo "make test      set up and run the whole suite: unit, lint, sanity, molecule scenarios"
	@echo "make lab-down  remove the laboratory's containers"

lab: setup
	ansible-playbook playbooks/lab.yml

lab-down: venv
	ansible-playbook playbooks/lab_down.yml

# pytest, the static checks and the newest ansible-core's run need no container and share
# nothing, so they run side by side (each one's output printed whole when it ends), in the lane
# beside the scenarios, which start at once.
test: setup venv-oldest venv-newest
	@$(MAKE) --no-print-directory molecule CHECKS_FIRST=yes

checks: venv venv-oldest venv-newest
	@$(MAKE) --no-print-directory --jobs=2 --output-sync=target unit static oldest newest

# What `make lab` needs too; the newest ansible-core's virtualenv is the tests' alone.
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

$(VENV)/.installed: requirements-dev.txt constraints-dev.txt
	@echo "== controller virtualenv"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt -c constraints-dev.txt
	@touch $@

venv-oldest: $(VENV_OLDEST)/.installed

$(VENV_OLDEST)/.installed: requirements-oldest.txt constraints-oldest.txt
	@echo "== virtualenv of the oldest ansible-core"
	$(PYTHON) -m venv $(VENV_OLDEST)
	$(VENV_OLDEST)/bin/pip install --quiet --upgrade pip
	$(VENV_OLDEST)/bin/pip install --quiet -r requirements-oldest.txt -c constraints-oldest.txt
	@touch $@

venv-newest: $(VENV_NEWEST)/.installed

$(VENV_NEWEST)/.installed: requirements-newest.txt constraints-newest.txt
	@echo "== virtualenv of the newest ansible-core"
	@test -n "$(PYTHON_NEWEST)" || { echo "make: the newest ansible-core needs Python 3.12 or newer;" \
	  "install Debian's python3 (trixie has 3.13) or set PYTHON_NEWEST=/path/to/python3.12"; exit 1; }
	$(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	$(VENV_NEWEST)/bin/pip install --quiet --upgrade pip
	$(VENV_NEWEST)/bin/pip install --quiet -r requirements-newest.txt -c constraints-newest.txt
	@touch $@

engine:
	@echo "== lab engine and images"
	time scripts/lab-engine up

unit: venv
	@echo "== pytest: unit tests, and integration tests against local stand-ins"
	time pytest tests/unit tests/integration

static: venv
	@$(MAKE) --no-print-directory precommit lint sanity docs-lint changelog-lint artifact

lint: venv
	@echo "== ansible-lint (production profile)"
	time ansible-lint --profile production

sanity: venv
	@echo "== ansible-test sanity"
	time scripts/sanity

docs-lint: venv
	@echo "== antsibull-docs: the collection's documentation as ansible-doc shows it"
	time scripts/docs-lint

changelog-lint: venv
	@echo "== antsibull-changelog lint"
	antsibull-changelog lint

artifact: venv
	@echo "== the built artifact, the execution environment that installs it, and the installed collection"
	time scripts/artifact-check
	time scripts/installed-check --lint

# The checks of .pre-commit-config.yaml (ruff, yamllint, shellcheck, detect-secrets) over every file.
precommit: venv
	@echo "== pre-commit checks"
	pre-commit run --all-files --show-diff-on-failure

oldest: venv-oldest
	@echo "== the oldest ansible-core ($(VENV_OLDEST)): the installed collection"
	time env PATH="$(CURDIR)/$(VENV_OLDEST)/bin:$$PATH" scripts/installed-check

newest: venv-newest
	@echo "== the newest ansible-core ($(VENV_NEWEST)): unit tests, sanity and the installed collection"
	time env PATH="$(CURDIR)/$(VENV_NEWEST)/bin:$$PATH" pytest tests/unit
	time env PATH="$(CURDIR)/$(VENV_NEWEST)/bin:$$PATH" scripts/sanity
	time env PATH="$(CURDIR)/$(VENV_NEWEST)/bin:$$PATH" scripts/installed-check

# The lane beside the foreground runs `make checks` first with CHECKS_FIRST (make test), then its
# scenarios one after another, each writing to tests/output/<name>.log, printed whole when the
# lanes end. A failure in either lane stops the other before its next scenario and removes the
# containers. The foreground scenarios' output goes to tests/output/<scenario>.log as well, and
# once every scenario passed, scripts/evidence-check reads those logs for the laboratory's secrets,
# private keys and JWTs, for the adopt Site's planted SSSD bind password (molecule/adopt/site_secrets.yml),
# and for the secrets that the scenarios of EVIDENCE_SECRETS made while they ran, which each keeps in tests/output/secrets/<scenario>/ before its hosts go
# (molecule/adopt/evidence_secrets.yml; those two log every task's result, --verbose).
EVIDENCE_SECRETS := adopt journey
molecule: setup
	@mkdir -p tests/output; rm -f tests/output/beside.failed tests/output/failed tests/output/*.ended \
	  $(foreach name,checks $(SCENARIOS) $(BESIDE),tests/output/$(name).log); rm -rf tests/output/secrets; start=$$SECONDS; \
	setsid bash -c 'if [ -n "$(CHECKS_FIRST)" ]; then \
	  started=$$SECONDS; $(MAKE) --no-print-directory checks > tests/output/checks.log 2>&1 \
	    || { echo "the unit tests and static checks" > tests/output/beside.failed; exit 1; }; \
	  echo "== unit tests and static checks passed in $$((SECONDS - started)) s" >> tests/output/checks.log; \
	fi; \
	for scenario in $(BESIDE); do \
	  [ ! -f tests/output/failed ] || exit 1; \
	  if [ $$scenario = release ]; then $(if $(filter journey,$(SCENARIOS)), \
	    while [ ! -e tests/output/journey.ended ]; do sleep 5; done;,) :; fi; \
	  started=$$SECONDS; molecule test -s $$scenario > tests/output/$$scenario.log 2>&1 \
	    || { echo "molecule scenario $$scenario" > tests/output/beside.failed; exit 1; }; \
	  echo "== molecule scenario $$scenario passed in $$((SECONDS - started)) s" >> tests/output/$$scenario.log; \
	done' & beside=$$!; \
	echo "== $(if $(CHECKS_FIRST),the checks$(comma) then )molecule scenarios $(BESIDE), beside the others (tests/output/<name>.log)"; \
	failed=; \
	for scenario in $(SCENARIOS); do \
	  [ ! -f tests/output/beside.failed ] || break; \
	  echo "== molecule scenario $$scenario"; started=$$SECONDS; \
	  molecule test -s $$scenario 2>&1 | tee tests/output/$$scenario.log || failed="molecule scenario '$$scenario'"; \
	  touch tests/output/$$scenario.ended; \
	  [ -z "$$failed" ] || break; \
	  echo "== molecule scenario $$scenario passed in $$((SECONDS - started)) s"; \
	done; \
	if [ -n "$$failed" ]; then \
	  touch tests/output/failed; kill -- -$$beside 2>/dev/null || true; wait $$beside || true; \
	  for scenario in $(BESIDE); do molecule destroy -s $$scenario >/dev/null 2>&1 || true; done; \
	  echo "make test: $$failed failed"; exit 1; \
	fi; \
	beside_status=0; wait $$beside || beside_status=$$?; \
	for name in checks $(BESIDE); do \
	  [ -f tests/output/$$name.log ] || continue; \
	  echo "== $$name (its output)"; cat tests/output/$$name.log; \
	done; \
	[ $$beside_status -eq 0 ] || { echo "make test: $$(cat tests/output/beside.failed) failed"; exit 1; }; \
	echo "== molecule scenarios $(BESIDE) passed; all scenarios in $$((SECONDS - start)) s"; \
	echo "== the scenarios' logs hold none of the laboratory's secrets, none that a scenario made, no private key and no JWT"; \
	scripts/evidence-check --secrets-from molecule/adopt/site_secrets.yml \
	  $(foreach name,$(filter $(EVIDENCE_SECRETS),$(SCENARIOS) $(BESIDE)),--key-file tests/output/secrets/$(name)) \
	  $(foreach name,$(SCENARIOS) $(BESIDE),tests/output/$(name).log) || { echo "make test: the evidence check of the scenarios' logs failed (above)"; exit 1; }

clean:
	rm -rf $(VENV) $(VENV_OLDEST) $(VENV_NEWEST) .cache tests/output
