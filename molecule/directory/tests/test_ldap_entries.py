"""pharos.hpc.ldap_entries against the real slapd: entries kept in order in one step, check mode
predicting a child of an entry the same step adds, a refusal that names its entry and keeps what
came before, and bad input refused before anything is written."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

testinfra_hosts = ["ansible://pharos-directory-login"]

HOST = "pharos-directory-login"


@pytest.fixture(scope="module")
def tree(host):
    """A branch of the suffix of this module's own, removed afterwards."""
    suffix = host.ansible.get_variables()["pharos_ldap_suffix"]
    branch = "ou=ldap-entries-test," + suffix
    yield dict(branch=branch, child="ou=child," + branch, orphan="ou=orphan,ou=missing," + branch)
    host.run("ldapdelete -Q -Y EXTERNAL -H ldapi:/// -r '%s'" % branch)


def organizational_unit(dn, **options):
    return dict(dn=dn, attributes=dict(objectClass="organizationalUnit", ou=dn.split(",")[0].split("=")[1]),
                **options)


def keep(tmp_path, entries, *options):
    """The one task's result on the login node, from a playbook that runs ldap_entries once."""
    playbook = tmp_path / "ldap_entries.yml"
    playbook.write_text(json.dumps([dict(hosts=HOST, gather_facts=False, tasks=[
        dict(name="Keep the entries", **{"pharos.hpc.ldap_entries": dict(entries=entries)})])]))
    project = Path(os.environ["MOLECULE_PROJECT_DIRECTORY"])
    inventory = Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory), str(playbook), *options],
        cwd=project, env=dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json"),
        capture_output=True, text=True, timeout=300, check=False)
    return json.loads(completed.stdout)["plays"][0]["tasks"][0]["hosts"][HOST]


def exists(host, dn):
    found = host.run("ldapsearch -LLL -Q -Y EXTERNAL -H ldapi:/// -s base -b '%s' 1.1" % dn)
    assert found.rc in (0, 32), found.stderr
    return found.rc == 0


def test_check_mode_predicts_a_child_of_an_entry_the_same_step_adds_and_writes_nothing(host, tree, tmp_path):
    result = keep(tmp_path, [organizational_unit(tree["branch"]), organizational_unit(tree["child"])],
                  "--check", "--diff")
    assert result["changed"] and not result.get("failed"), result
    assert [(entry["dn"], entry["action"]) for entry in result["results"]] == \
        [(tree["branch"], "add"), (tree["child"], "add")]
    assert "ou: child" in result["diff"][1]["after"], result["diff"]
    assert not exists(host, tree["branch"])


def test_bad_input_is_refused_before_any_entry_is_written(host, tree, tmp_path):
    result = keep(tmp_path, [organizational_unit(tree["branch"]),
                             organizational_unit(tree["child"], password="")])
    assert result.get("failed"), result
    assert result["msg"].startswith("Nothing was written: %s: the password is empty" % tree["child"]), result["msg"]
    assert not exists(host, tree["branch"])


def test_a_refused_entry_is_named_and_the_entries_before_it_stay_written_for_the_next_run(host, tree, tmp_path):
    entries = [organizational_unit(tree["branch"]), organizational_unit(tree["child"])]
    refused = keep(tmp_path, entries + [organizational_unit(tree["orphan"])])
    assert refused.get("failed"), refused
    assert refused["msg"].startswith("slapd refused to add %s" % tree["orphan"]), refused["msg"]
    assert "The parent entry does not exist" in refused["msg"], refused["msg"]
    assert "Written before it: %s; %s;" % (tree["branch"], tree["child"]) in refused["msg"], refused["msg"]
    assert exists(host, tree["branch"]) and exists(host, tree["child"]) and not exists(host, tree["orphan"])

    again = keep(tmp_path, entries)
    assert not again.get("failed") and not again["changed"], again
    assert [entry["action"] for entry in again["results"]] == ["none", "none"]
