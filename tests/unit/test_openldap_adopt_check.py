"""The openldap role's adopt check (roles/openldap/tasks/adopt_check.yml) asks slapd which entry
each of Pharos's SASL identities maps to, and names a Site olcAuthzRegexp rule that maps one
elsewhere first. slapd's rules are POSIX extended regular expressions ([[:digit:]] is a class of
digits, \\d no digit at all), so only slapd can say which of them matches.

The tasks run as ansible-playbook runs them, on this machine, with ldapsearch, getent and slapauth
answering as slapd 2.5.13 (Debian 12's) answered for the rules below: RULES is what ldapsearch read
from cn=config, and MAPPED what slapauth -F <slapd.d> -M EXTERNAL <identity>... printed for each
identity while that slapd ran (`ldapwhoami -Y EXTERNAL` as each UID gave the same entries).
slapd 2.6's slapauth prints the same two lines for an identity (servers/slapd/slapauth.c)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SUFFIX = "dc=pharos,dc=lab"
AGENT_DN = f"cn=pharos-ssh-access,ou=services,ou=pharos,{SUFFIX}"
KEYS_DN = f"cn=pharos-keys,ou=services,ou=pharos,{SUFFIX}"

RULES = textwrap.dedent(r"""
    dn: cn=config
    olcAuthzRegexp: {0}"^gidNumber=[[:digit:]]+\+uidNumber=(41000[0-9][0-9]),cn=peercred,cn=external,cn=auth$" "uid=$1,ou=people,dc=example"
    olcAuthzRegexp: {1}"^gidNumber=\d+\+uidNumber=4200002,cn=peercred,cn=external,cn=auth$" "uid=python-only,ou=people,dc=example"
    olcAuthzRegexp: {2}"^gidNumber=[[:digit:]]+\+uidNumber=4400002,cn=peercred,cn=external,cn=auth$" "ldap:///dc=example??sub?(uid=nobody-here)"
    olcAuthzRegexp: {3}"^gidNumber=[[:digit:]]+\+uidNumber=45[[:digit:]]{5},cn=peercred,cn=external,cn=auth$" "cn=site-reader,dc=example"
    olcAuthzRegexp: {4}"^gidNumber=4300002\+uidNumber=4300002,cn=peercred,cn=external,cn=auth$" "cn=pharos-ssh-access,ou=services,ou=pharos,dc=pharos,dc=lab"
    olcAuthzRegexp: {5}"^gidNumber=4400002\+uidNumber=4400002,cn=peercred,cn=external,cn=auth$" "cn=pharos-ssh-access,ou=services,ou=pharos,dc=pharos,dc=lab"
    """).lstrip()
SITE_RULES = "; ".join(line.split(": ", 1)[1] for line in RULES.splitlines()[1:5])


def identity(uid):
    return f"gidNumber={uid}+uidNumber={uid},cn=peercred,cn=external,cn=auth"


MAPPED = {
    identity(4100002): "uid=4100002,ou=people,dc=example",
    identity(4200002): identity(4200002),
    identity(4300002): AGENT_DN,
    identity(4400002): identity(4400002),
    identity(4500001): "cn=site-reader,dc=example",
    identity(4600002): identity(4600002),
}
NO_CONFIG = "invalid config directory /etc/ldap/slapd.d, error 2\nslapauth: bad configuration directory!\n"

# Each tool answers from the files the test writes beside it, and notes how it was called.
TOOL = """\
#!{python}
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
name, args = os.path.basename(sys.argv[0]), sys.argv[1:]
with open(os.path.join(here, "calls"), "a") as calls:
    calls.write(json.dumps([name] + args) + "\\n")
answers = json.load(open(os.path.join(here, "answers.json")))
if name == "getent":
    line = answers.get("getent")
    print(line) if line else sys.exit(2)
elif name == "ldapsearch":
    if "olcAuthzRegexp" in args:
        sys.stdout.write(answers["rules"])
    elif "(objectClass=olcDatabaseConfig)" in args:
        sys.stdout.write("dn: olcDatabase={{1}}mdb,cn=config\\nolcSuffix: dc=example\\nolcDbDirectory: /var/lib/ldap\\n")
    else:
        sys.stdout.write("dn:\\n")
elif name == "slapauth":
    if answers.get("slapauth_fails"):
        sys.stderr.write(answers["slapauth_fails"])
        sys.exit(1)
    for identity in args[args.index("EXTERNAL") + 1:]:
        sys.stderr.write("ID: <%s> check succeeded\\nauthcID:     <%s>\\n" % (identity, answers["mapped"][identity]))
"""


@pytest.fixture
def tools(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("getent", "ldapsearch", "slapauth"):
        (bin_dir / name).write_text(TOOL.format(python=sys.executable))
        (bin_dir / name).chmod(0o755)
    return bin_dir


def run_check(tmp_path, tools, agent_uid, keys_reader=None, slapauth_fails=None):
    """The findings of the openldap role's adopt check, and each call of the tools."""
    (tools / "answers.json").write_text(json.dumps({
        "rules": RULES, "mapped": MAPPED, "slapauth_fails": slapauth_fails,
        "getent": f"pharos-keys:x:{keys_reader}:{keys_reader}::/nonexistent:/usr/sbin/nologin" if keys_reader else None}))
    play = [{"hosts": "localhost", "gather_facts": False,
             "vars": {"openldap_suffix": SUFFIX, "openldap_site_mode": "adopt", "openldap_ssh_access_uid": agent_uid,
                      "openldap_ssh_access_gid": agent_uid, "ansible_python_interpreter": sys.executable},
             "tasks": [{"name": "The openldap role's adopt check",
                        "ansible.builtin.include_role": {"name": "pharos.hpc.openldap", "tasks_from": "adopt_check"}},
                       {"name": "Show the findings", "ansible.builtin.debug": {"var": "openldap_adopt_findings"}}]}]
    (tmp_path / "check.yml").write_text(json.dumps(play))
    environment = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}", ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"),
                       ANSIBLE_NOCOLOR="true", ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                str(tmp_path / "check.yml")], cwd=PROJECT, env=environment, capture_output=True,
                               text=True, timeout=180, check=False)
    report = json.loads(completed.stdout)
    shown = [task for task in report["plays"][0]["tasks"] if task["task"]["name"] == "Show the findings"]
    assert shown, completed.stdout[-3000:] + completed.stderr[-3000:]
    calls = [json.loads(line) for line in (tools / "calls").read_text().splitlines()]
    return [" ".join(finding.split()) for finding in shown[0]["hosts"]["localhost"]["openldap_adopt_findings"]], calls


def test_a_site_rule_in_posix_classes_that_maps_the_agent_first_is_named_with_the_entry_slapd_gives(tmp_path, tools):
    findings, calls = run_check(tmp_path, tools, agent_uid=4100002)
    assert findings == [
        f"cn=config on localhost: one of the Site's olcAuthzRegexp rules ({SITE_RULES}) matches the SSH access "
        f"agent's identity ({identity(4100002)}), and slapd maps it to uid=4100002,ou=people,dc=example, not to "
        f"{AGENT_DN}: slapd takes the first rule that matches. Narrow that rule so that it does not match "
        "uidNumber=4100002, or choose another pharos_ssh_access_uid."]
    assert ["slapauth", "-F", "/etc/ldap/slapd.d", "-M", "EXTERNAL", identity(4100002)] in calls


def test_a_site_rule_that_slapd_does_not_match_is_no_conflict(tmp_path, tools):
    """\\d is a digit to Python's regular expressions and none to slapd's: slapd leaves the agent
    unmapped, so Pharos's rule, written after the Site's, will be the first that matches."""
    findings, _calls = run_check(tmp_path, tools, agent_uid=4200002)
    assert findings == []


def test_the_agent_that_pharos_rule_maps_already_is_no_finding(tmp_path, tools):
    findings, _calls = run_check(tmp_path, tools, agent_uid=4300002)
    assert findings == []


def test_a_site_rule_that_matches_first_and_names_no_entry_is_named_once_pharos_rule_is_written(tmp_path, tools):
    findings, _calls = run_check(tmp_path, tools, agent_uid=4400002)
    assert len(findings) == 1
    assert (f"matches the SSH access agent's identity ({identity(4400002)}), and slapd maps it to no entry, although "
            f"Pharos's rule maps it to {AGENT_DN}") in findings[0]


def test_the_key_command_that_a_site_rule_maps_to_a_site_entry_is_named(tmp_path, tools):
    findings, calls = run_check(tmp_path, tools, agent_uid=4600002, keys_reader=4500001)
    assert len(findings) == 1
    assert (f"matches the identity of sshd's key command (pharos-keys) ({identity(4500001)}), and slapd maps it to "
            f"cn=site-reader,dc=example, not to {KEYS_DN}") in findings[0]
    assert findings[0].endswith("Narrow that rule so that it does not match uidNumber=4500001.")
    assert ["slapauth", "-F", "/etc/ldap/slapd.d", "-M", "EXTERNAL", identity(4600002), identity(4500001)] in calls


def test_a_slapd_whose_mapping_cannot_be_read_stops_the_run_naming_the_fix(tmp_path, tools):
    findings, _calls = run_check(tmp_path, tools, agent_uid=4100002, slapauth_fails=NO_CONFIG)
    assert findings == [
        "On localhost, slapauth -F /etc/ldap/slapd.d could not say which entry slapd maps Pharos's identities to "
        "(invalid config directory /etc/ldap/slapd.d, error 2 slapauth: bad configuration directory!): adopt mode "
        "asks slapd's own tool before any change. Set openldap_config_directory to the configuration directory "
        "slapd runs with (its -F; Debian's is /etc/ldap/slapd.d)."]
