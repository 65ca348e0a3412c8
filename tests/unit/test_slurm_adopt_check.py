"""The slurm role's adopt check (roles/slurm/tasks/adopt_check.yml) as ansible-playbook runs it,
on hosts of this machine: a job_submit.lua of the Site's is named without its text reaching any
result, and a run in which no host holds slurmdbd.conf stops, naming the hosts it looked at.

Each host stands for one of the Site's: slurm.conf is one file for all, and each host's
slurmdbd.conf is <host>-slurmdbd.conf beside it (the host the step runs on, delegated or not).
The task file runs as it is, but for the path of the controller's job_submit.lua."""

import base64
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
ADOPT_CHECK = PROJECT / "roles" / "slurm" / "tasks" / "adopt_check.yml"
SITE_SECRET = "site-only-token-7f3a9c"
PHAROS_MARKER = "-- Kept by pharos.hpc (roles/slurm): adopt mode writes this file only where it holds this line.\n"

SLURM_CONF = """\
ClusterName=Icarus
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits,qos
PriorityDecayHalfLife=0
PriorityCalcPeriod=1
PrivateData=accounts,jobs,reservations,usage,users
AccountingStoreFlags=job_comment
NodeName=dtn01 CPUs=8
Include {include}
"""
READY_DBD = "DbdHost=login\nStoragePass=site-db-password\nPrivateData=accounts,jobs,reservations,usage,users\n"


@pytest.fixture
def site(tmp_path):
    include = tmp_path / "pharos.conf"
    include.write_text("")
    (tmp_path / "slurm.conf").write_text(SLURM_CONF.format(include=include))
    # The controller's job_submit.lua, wherever the check reads it; the message keeps its own path.
    checks = re.sub(r"/etc/slurm/job_submit\.lua(?! on )", str(tmp_path / "job_submit.lua"),
                    ADOPT_CHECK.read_text(encoding="utf-8"))
    (tmp_path / "adopt_check.yml").write_text(checks, encoding="utf-8")
    return tmp_path


def run_check(site, hosts=("login", "node"), inventory=("login", "node"), **values):
    """Each host's slurm_adopt_findings, and the run's whole output."""
    (site / "inventory.yml").write_text(json.dumps({"all": {"hosts": {
        name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable} for name in inventory}}}))
    play = [{
        "hosts": ",".join(hosts), "gather_facts": False,
        "module_defaults": {"pharos.hpc.slurm_site_conf": {
            "path": str(site / "slurm.conf"), "dbd_path": f"{site}/{{{{ ansible_host }}}}-slurmdbd.conf"}},
        "vars": {"slurm_include_path": str(site / "pharos.conf"), "slurm_staging_partition": "staging",
                 "slurm_staging_hosts": ["dtn01"], "slurm_prologs": [],
                 "slurm_private_data": ["accounts", "jobs", "reservations", "usage", "users"],
                 "slurm_controller_host": "login", "slurm_jwt_key_path": "/etc/slurm/jwt_hs256.key",
                 "slurm_site_dbd_host": "", **values},
        "tasks": [{"name": "The slurm role's adopt check", "ansible.builtin.include_tasks": str(site / "adopt_check.yml")},
                  {"name": "Show the findings", "ansible.builtin.debug": {"var": "slurm_adopt_findings"}}],
    }]
    (site / "check.yml").write_text(json.dumps(play))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(site / "inventory.yml"),
                                str(site / "check.yml")], cwd=PROJECT, env=environment, capture_output=True, text=True,
                               timeout=180, check=False)
    output = completed.stdout + completed.stderr
    report = json.loads(completed.stdout)
    shown = [task for task in report["plays"][0]["tasks"] if task["task"]["name"] == "Show the findings"]
    assert shown, output[-3000:]
    return {host: result["slurm_adopt_findings"] for host, result in shown[0]["hosts"].items()}, output


def test_a_site_job_submit_lua_is_named_and_none_of_its_text_reaches_a_result(site):
    text = f"-- the Site's own checks\nlocal token = \"{SITE_SECRET}\"\n"
    (site / "job_submit.lua").write_text(text)
    (site / "login-slurmdbd.conf").write_text(READY_DBD)
    findings, output = run_check(site)
    assert any(finding.startswith("/etc/slurm/job_submit.lua on login is the Site's: Pharos writes its own "
                                  "job_submit.lua there") for finding in findings["login"]), findings
    assert not any("job_submit.lua" in finding for finding in findings["node"])
    for leaked in (SITE_SECRET, base64.b64encode(text.encode()).decode(), "the Site's own checks"):
        assert leaked not in output


@pytest.mark.parametrize("text", [PHAROS_MARKER + "return slurm.SUCCESS\n", None], ids=["Pharos's own", "none"])
def test_pharos_own_job_submit_lua_or_none_is_no_finding(site, text):
    if text is not None:
        (site / "job_submit.lua").write_text(text)
    (site / "login-slurmdbd.conf").write_text(READY_DBD)
    findings, _output = run_check(site)
    assert not any("job_submit.lua" in finding for finding in findings["login"] + findings["node"]), findings


def test_a_run_where_no_host_holds_slurmdbd_conf_stops_naming_the_hosts_it_looked_at(site):
    findings, _output = run_check(site)
    for host in ("login", "node"):
        refusal = [finding for finding in findings[host] if finding.startswith("No host of this run holds")]
        assert refusal == [textwrap.dedent("""\
            No host of this run holds /etc/slurm/slurmdbd.conf (looked at: login, node), so the Site's
            slurmdbd.conf could not be checked: slurmdbd serves accounting, and its PrivateData and
            token settings keep members from reading each other's jobs and usage. Name the host where
            slurmdbd runs in slurm_site_dbd_host, adding it to the inventory if it is none of the Slurm
            cluster's nodes: the run then reads its slurmdbd.conf there, within --limit or not
            (docs/site-values.md).""").replace("\n", " ")], findings[host]


def test_the_host_that_holds_slurmdbd_conf_has_it_checked_and_the_run_goes_on(site):
    (site / "login-slurmdbd.conf").write_text(READY_DBD.replace("PrivateData=accounts,jobs,reservations,usage,users",
                                                                "PrivateData=jobs"))
    findings, output = run_check(site)
    assert not any("slurmdbd.conf (looked at" in finding for finding in findings["login"] + findings["node"])
    assert any(finding.startswith(f"{site}/login-slurmdbd.conf line 3: PrivateData=jobs lacks")
               for finding in findings["login"]), findings
    assert "site-db-password" not in output


def test_a_dbd_host_outside_the_run_is_read_where_the_inventory_names_it(site):
    """A run limited to a node, or a Site whose slurmdbd runs on a host of its own: the host the
    inventory names is read, and its slurmdbd.conf is checked as the cluster's hosts' would be."""
    (site / "dbd-slurmdbd.conf").write_text(READY_DBD + "AuthAltParameters=jwks=/etc/slurm/jwks.json\n")
    findings, output = run_check(site, hosts=("node",), inventory=("login", "node", "dbd"), slurm_site_dbd_host="dbd")
    assert not any("slurmdbd.conf (looked at" in finding for finding in findings["node"]), findings
    assert any(finding.startswith(f"{site}/dbd-slurmdbd.conf line 4: AuthAltParameters=jwks=")
               for finding in findings["node"]), findings
    assert "site-db-password" not in output


@pytest.mark.parametrize(("inventory", "named"), [
    (("login", "node", "dbd"), "slurm_site_dbd_host names dbd, which holds no /etc/slurm/slurmdbd.conf"),
    (("login", "node"), "slurm_site_dbd_host names dbd, which is no host of the inventory"),
], ids=["a host without it", "no host of the inventory"])
def test_a_named_dbd_host_that_does_not_hold_it_is_named(site, inventory, named):
    (site / "login-slurmdbd.conf").write_text(READY_DBD)
    findings, _output = run_check(site, inventory=inventory, slurm_site_dbd_host="dbd")
    for host in ("login", "node"):
        assert any(finding.startswith(named) for finding in findings[host]), findings[host]
