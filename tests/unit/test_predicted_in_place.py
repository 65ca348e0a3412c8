"""pharos.hpc.predicted reads a plain package install or service start in place with one shell
command, and runs the step's module whenever that command does not find the step already made.

The host's dpkg-query and systemctl are stand-ins on PATH here, and so are the apt and systemd
modules (in the playbook's library/), so that each test knows whether the module ran: a stand-in
module reports changed with "the module ran"."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# A package named held-* is installed ("ii"), any other was removed with its files kept ("rc").
# A unit named running-* is active, any other inactive; every unit is enabled.
DPKG_QUERY = """\
#!/bin/sh
printf "%s\\n" "$*" >> "$PROBES"
while [ "$1" != "--" ]; do shift; done; shift
for name in "$@"; do
  case "$name" in held-*) echo "ii |$name" ;; *) echo "rc |$name" ;; esac
done
"""
SYSTEMCTL = """\
#!/bin/sh
printf "%s\\n" "$*" >> "$PROBES"
unit=$(eval echo \\${$#})
case "$1" in
  show) case "$unit" in running-*) echo active ;; *) echo inactive ;; esac ;;
  is-enabled) exit 0 ;;
esac
"""
# Package lists, until the playbook takes them away for its last step.
LS = """\
#!/bin/sh
printf "%s\\n" "ls $*" >> "$PROBES"
[ -e "$NO_LISTS" ] || echo deb.debian.org_debian_dists_trixie_main_binary-amd64_Packages
"""
MODULE = """\
#!/usr/bin/python
import json
print(json.dumps({"changed": True, "msg": "the module ran"}))
"""


def step(name, module, args):
    return {"name": name, "ignore_errors": True,
            "pharos.hpc.predicted": {"prediction": f"{name} would change", "module": module, "args": args}}


def then(name, package, unit):
    """An install, then the start of its service, as one step."""
    task = step(name, "apt", {"name": [package], "update_cache": True, "cache_valid_time": 3600})
    task["pharos.hpc.predicted"]["then"] = {"module": "systemd_service",
                                            "args": {"name": unit, "state": "started", "enabled": True}}
    return task


STEPS = [
    step("installed packages", "apt", {"name": ["held-munge", "held-slapd"], "update_cache": True, "cache_valid_time": 3600}),
    step("one package removed", "apt", {"name": ["held-munge", "gone-slapd"], "update_cache": True, "cache_valid_time": 3600}),
    step("an installed package at its newest", "apt", {"name": "held-munge", "state": "latest"}),
    step("a package pinned to a version", "apt", {"name": "held-munge=0.5.16-1"}),
    step("a running enabled service", "systemd_service", {"name": "running-munge", "state": "started", "enabled": True,
                                                          "daemon_reload": False}),
    step("a stopped service", "systemd_service", {"name": "munge", "state": "started", "enabled": True}),
    step("a running service to restart", "systemd_service", {"name": "running-munge", "state": "restarted", "enabled": True}),
    step("a running service after its units changed", "systemd_service",
         {"name": "running-munge", "state": "started", "enabled": True, "daemon_reload": True}),
    then("an installed package and its running service", "held-libnss", "running-slurmd"),
    then("an installed package and its stopped service", "held-libnss", "stopped-slurmd"),
    then("a package apt would install and its service", "gone-slurmd", "after-install-slurmd"),
    {"name": "take the package lists away", "ansible.builtin.file": {"path": "{{ lookup('env', 'NO_LISTS') }}",
                                                                     "state": "touch"},
     "check_mode": False},
    then("a package without package lists and its service", "gone-munge", "after-lists-munge"),
    step("installed packages, without package lists", "apt", {"name": ["held-munge"], "update_cache": True}),
    step("a package not installed, without package lists", "apt", {"name": ["gone-slapd"], "update_cache": True}),
    # The playbook's own file exists; its stand-in module, the command's, reports that it ran.
    step("a command whose file exists", "command", {"cmd": "ssh-keygen -A", "creates": "{{ playbook_dir }}/play.yml"}),
    step("a command whose file is missing", "command", {"cmd": "ssh-keygen -A", "creates": "{{ playbook_dir }}/none"}),
    step("a command whose file is a glob", "command", {"cmd": "ssh-keygen -A", "creates": "{{ playbook_dir }}/pl*.yml"}),
    step("a command in a working directory", "command",
         {"cmd": "ssh-keygen -A", "chdir": "/", "creates": "{{ playbook_dir }}/play.yml"}),
]


@pytest.fixture(scope="module")
def run(project, tmp_path_factory):
    directory = tmp_path_factory.mktemp("in_place")
    (directory / "bin").mkdir()
    (directory / "library").mkdir()
    for path, text in ((directory / "bin" / "dpkg-query", DPKG_QUERY), (directory / "bin" / "systemctl", SYSTEMCTL),
                       (directory / "bin" / "ls", LS),
                       (directory / "library" / "apt.py", MODULE), (directory / "library" / "systemd_service.py", MODULE),
                       (directory / "library" / "command.py", MODULE)):
        path.write_text(textwrap.dedent(text))
        path.chmod(0o755)
    playbook = directory / "play.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": STEPS}]))
    probes = directory / "probes"
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(project / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                       PATH=f"{directory / 'bin'}:{os.environ['PATH']}", PROBES=str(probes),
                       NO_LISTS=str(directory / "no-lists"))
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                "-e", f"ansible_python_interpreter={sys.executable}", "--check", str(playbook)],
                               cwd=directory, env=environment, capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(completed.stdout)
    results = {task["task"]["name"]: task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]}
    return results, probes.read_text().splitlines()


def test_installed_packages_are_found_in_place_by_dpkg_and_apt_does_not_run(run):
    results, probes = run
    assert results["installed packages"]["changed"] is False and results["installed packages"]["in_place"] is True
    assert results["installed packages"]["msg"] == "Already installed: held-munge, held-slapd."
    assert any("held-munge held-slapd" in probe for probe in probes), probes


def test_a_package_not_installed_runs_apt_where_the_host_has_package_lists(run):
    results, probes = run
    assert results["one package removed"]["msg"] == "the module ran"
    # Each install of a package not installed looks for the lists: here, then with the lists gone,
    # and in the two such steps that start a service too.
    assert probes.count("ls /var/lib/apt/lists/") == 4, probes


def test_without_package_lists_a_package_not_installed_is_predicted_and_an_installed_one_is_in_place(run):
    results, _probes = run
    missing = results["a package not installed, without package lists"]
    assert missing["changed"] is True and missing["predicted"] is True
    assert missing["msg"] == "a package not installed, without package lists would change"
    assert results["installed packages, without package lists"]["in_place"] is True


def test_a_running_enabled_service_is_found_in_place_and_systemd_does_not_run(run):
    results, _probes = run
    assert results["a running enabled service"]["changed"] is False
    assert results["a running enabled service"]["in_place"] is True
    assert results["a running enabled service"]["msg"] == "Already running and enabled at boot: running-munge."


def test_a_stopped_service_runs_systemd(run):
    results, _probes = run
    assert results["a stopped service"]["msg"] == "the module ran"


@pytest.mark.parametrize("name", ["an installed package at its newest", "a package pinned to a version",
                                  "a running service to restart", "a running service after its units changed"])
def test_any_step_but_a_plain_install_or_start_runs_its_module_without_a_probe(run, name):
    results, probes = run
    assert results[name]["msg"] == "the module ran"
    # Probed only by the plain installs and the plain start: show and is-enabled.
    assert [probe for probe in probes if "held-munge" in probe] == [
        "--show --showformat=${db:Status-Abbrev}|${Package}\\n -- held-munge held-slapd",
        "--show --showformat=${db:Status-Abbrev}|${Package}\\n -- held-munge gone-slapd",
        "--show --showformat=${db:Status-Abbrev}|${Package}\\n -- held-munge"]
    assert [probe for probe in probes if "running-munge" in probe] == [
        "show --property=ActiveState --value -- running-munge", "is-enabled --quiet -- running-munge"]


def test_an_install_and_its_start_in_place_are_one_step_with_each_result(run):
    results, _probes = run
    both = results["an installed package and its running service"]
    assert both["changed"] is False
    assert [step["msg"] for step in both["results"]] == [
        "Already installed: held-libnss.", "Already running and enabled at boot: running-slurmd."]


def test_an_installed_package_with_its_service_stopped_runs_systemd_as_the_second_step(run):
    results, _probes = run
    stopped = results["an installed package and its stopped service"]
    assert stopped["changed"] is True
    assert stopped["results"][0]["in_place"] is True and stopped["results"][1]["msg"] == "the module ran"


@pytest.mark.parametrize("name, unit", [("a package apt would install and its service", "after-install-slurmd"),
                                        ("a package without package lists and its service", "after-lists-munge")])
def test_in_check_mode_the_start_of_a_package_that_would_be_installed_is_predicted_not_asked(run, name, unit):
    results, probes = run
    installed_first = results[name]
    assert installed_first["changed"] is True and installed_first["results"][1]["predicted"] is True
    assert installed_first["results"][1]["msg"] == f"{name} would change"
    assert not [probe for probe in probes if unit in probe], probes



def test_a_command_whose_file_exists_is_in_place_and_does_not_run(run):
    results, _probes = run
    made = results["a command whose file exists"]
    assert made["changed"] is False and made["in_place"] is True
    assert made["msg"].startswith("Already made: /") and made["msg"].endswith("/play.yml."), made["msg"]


@pytest.mark.parametrize("name", ["a command whose file is missing", "a command whose file is a glob",
                                  "a command in a working directory"])
def test_a_command_runs_where_its_file_is_missing_or_the_module_would_look_otherwise(run, name):
    results, _probes = run
    assert results[name]["msg"] == "the module ran"
