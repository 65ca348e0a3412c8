"""The release preflight's judgement of the agents' secrets and of every directory on the way to
them (filter secret_path_problems): a credential anyone but root may read, a file or directory
anyone but root may change, and a link are refused, each named with the owner and mode found,
the rule and the fix. The cases are data; the last test runs the preflight's own tasks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.pharos.hpc.plugins.filter.secret_paths import directories_up_to_root, secret_path_problems

PROJECT = Path(__file__).resolve().parents[2]
TOKENS = "/root/pharos-tokens"
SECRETS = "/etc/pharos-hpc/secrets"
PUBLIC = ["site-agent-ca.crt", "site-api-ca.crt"]


def directory(mode="0700", uid=0, **extra):
    return dict({"exists": True, "isdir": True, "isreg": False, "islnk": False, "uid": uid, "mode": mode}, **extra)


def regular(mode="0600", uid=0):
    return {"exists": True, "isdir": False, "isreg": True, "islnk": False, "uid": uid, "mode": mode}


LINK = {"exists": True, "isdir": False, "isreg": False, "islnk": True, "uid": 0, "mode": "0777",
        "lnk_target": "/home/alice/tokens"}
SAFE_CHAIN = {TOKENS: directory(), "/root": directory(), "/": directory("0755"),
              SECRETS: directory(), "/etc/pharos-hpc": directory("0755"), "/etc": directory("0755")}


def judged(chain=None, files=None, token_directory=TOKENS):
    """secret_path_problems over results shaped as the preflight's stat loops register them."""
    chain = dict(SAFE_CHAIN, **(chain or {}))
    directories = [{"item": path, "stat": stat} for path, stat in chain.items()]
    secrets = [{"item": list(os.path.split(path)), "stat": stat} for path, stat in (files or {}).items()]
    return secret_path_problems(directories, secrets, token_directory, public=PUBLIC)


def test_root_only_credentials_and_readable_certificates_below_root_only_directories_pass():
    assert judged(files={TOKENS + "/site-agent-token": regular("0600"), TOKENS + "/ssh-access-site-token": regular("0400"),
                         TOKENS + "/site-agent-ca.crt": regular("0644"), SECRETS + "/site-agent-token": regular("0400"),
                         SECRETS + "/site-api-ca.crt": regular("0644")}) == []


REFUSED = {
    "a token any user may read": (
        {}, {TOKENS + "/site-agent-token": regular("0644")},
        "Secret site-agent-token in the token directory /root/pharos-tokens is readable by others than root (owner UID 0, "
        "mode 0644): a credential is a regular file that only root may read or change (mode 0600 or 0400). "
        "Fix: chmod 0600 /root/pharos-tokens/site-agent-token;"),
    "a password its group may read": (
        {}, {TOKENS + "/site-agent-ldap-password": regular("0640")},
        "Secret site-agent-ldap-password in the token directory /root/pharos-tokens is readable by others than root "
        "(owner UID 0, mode 0640)"),
    "an adopted token any user may read": (
        {}, {SECRETS + "/ssh-access-site-token": regular("0644")},
        "Secret ssh-access-site-token adopted in /etc/pharos-hpc/secrets is readable by others than root (owner UID 0, "
        "mode 0644)"),
    "a token another user owns": (
        {}, {TOKENS + "/site-agent-token": regular("0600", uid=1000)},
        "Secret site-agent-token in the token directory /root/pharos-tokens is not root's alone (owner UID 1000, mode "
        "0600): a credential is a regular file that only root may read or change (mode 0600 or 0400). Fix: chown "
        "root:root /root/pharos-tokens/site-agent-token && chmod 0600 /root/pharos-tokens/site-agent-token."),
    "a token any user may change": (
        {}, {TOKENS + "/ssh-access-site-token": regular("0666")},
        "Secret ssh-access-site-token in the token directory /root/pharos-tokens is not root's alone (owner UID 0, mode "
        "0666)"),
    "a certificate any user may change": (
        {}, {TOKENS + "/site-api-ca.crt": regular("0666")},
        "Secret site-api-ca.crt in the token directory /root/pharos-tokens is not root's alone (owner UID 0, mode 0666): "
        "a CA certificate is public, but only root may change it. Fix: chown root:root "
        "/root/pharos-tokens/site-api-ca.crt && chmod go-w /root/pharos-tokens/site-api-ca.crt."),
    "a token that is a link": (
        {}, {TOKENS + "/site-agent-token": LINK},
        "Secret site-agent-token in the token directory /root/pharos-tokens is a link: nothing is adopted through a "
        "link. Fix: write the file itself there, owned by root with mode 0600."),
    "a token that is a directory": (
        {}, {TOKENS + "/site-agent-token": directory()},
        "Secret site-agent-token in the token directory /root/pharos-tokens is not a regular file"),
    "a token directory any user may change": (
        {TOKENS: directory("0777")}, {},
        "The token directory /root/pharos-tokens is not root's alone (owner UID 0, mode 0777): the secrets below it are "
        "adopted as root, so it and every directory above it must be a real directory that only root may change "
        "(owned by root, writable by no group and no other user). Fix: chown root:root /root/pharos-tokens && chmod "
        "go-w /root/pharos-tokens."),
    "a token directory another user owns": (
        {TOKENS: directory("0700", uid=1000)}, {},
        "The token directory /root/pharos-tokens is not root's alone (owner UID 1000, mode 0700)"),
    "a token directory that is a link": (
        {TOKENS: LINK}, {},
        "The token directory /root/pharos-tokens is a link (to /home/alice/tokens): the secrets below it are adopted "
        "as root, so it and every directory above it must be a real directory that only root may change (owned by "
        "root, writable by no group and no other user). Fix: give the token directory by its path without links "
        "(readlink -f /root/pharos-tokens)."),
    "a directory above the token directory its group may change": (
        {"/root": directory("0770")}, {},
        "The directory /root above the token directory /root/pharos-tokens is not root's alone (owner UID 0, mode "
        "0770): the secrets below it are adopted as root, so it and every directory above it must be a real "
        "directory that only root may change (owned by root, writable by no group and no other user). Fix: give a "
        "token directory all of whose directories only root may change (below /root, for example)."),
    "the secrets directory its group may change": (
        {SECRETS: directory("0770")}, {},
        "The secrets directory /etc/pharos-hpc/secrets is not root's alone (owner UID 0, mode 0770)"),
    "a directory above the secrets directory another user owns": (
        {"/etc/pharos-hpc": directory("0755", uid=1000)}, {},
        "The directory /etc/pharos-hpc above the secrets directory /etc/pharos-hpc/secrets is not root's alone (owner "
        "UID 1000, mode 0755): the secrets below it are adopted as root, so it and every directory above it must be a "
        "real directory that only root may change (owned by root, writable by no group and no other user). Fix: "
        "chown root:root /etc/pharos-hpc && chmod go-w /etc/pharos-hpc."),
    "a root any user may change": (
        {"/": directory("0777")}, {},
        "The directory / above the token directory /root/pharos-tokens and the secrets directory /etc/pharos-hpc/secrets "
        "is not root's alone (owner UID 0, mode 0777)"),
}


@pytest.mark.parametrize("chain, files, refusal", REFUSED.values(), ids=list(REFUSED))
def test_an_unsafe_secret_or_directory_is_refused_with_what_was_found_and_the_fix(chain, files, refusal):
    problems = judged(chain, files)
    assert len(problems) == 1, problems
    assert problems[0].startswith(refusal), problems[0]


def test_a_token_directory_below_tmp_is_refused_though_tmp_is_sticky():
    """A sticky /tmp keeps others from renaming root's entries, but the rule is one: root's alone."""
    problems = judged({"/tmp/tokens": directory(), "/tmp": directory("1777")}, {}, token_directory="/tmp/tokens")
    assert problems == [
        "The directory /tmp above the token directory /tmp/tokens is not root's alone (owner UID 0, mode 1777): the "
        "secrets below it are adopted as root, so it and every directory above it must be a real directory that only "
        "root may change (owned by root, writable by no group and no other user). Fix: give a token directory all of "
        "whose directories only root may change (below /root, for example)."]


def test_a_relative_token_directory_is_refused():
    assert judged(token_directory="tokens") == [
        "The token directory tokens is not an absolute path: the secrets are adopted from a directory named from /. "
        "Fix: give pharos_token_directory as an absolute path."]


def test_every_problem_is_reported_at_once_and_paths_that_do_not_exist_are_not_judged():
    problems = judged({SECRETS: {"exists": False}, TOKENS: directory("0777")},
                      {TOKENS + "/site-agent-token": regular("0644"), TOKENS + "/site-agent-ca.crt": LINK,
                       SECRETS + "/site-agent-token": {"exists": False}})
    assert [problem.split(":")[0] for problem in problems] == [
        "The token directory /root/pharos-tokens is not root's alone (owner UID 0, mode 0777)",
        "Secret site-agent-token in the token directory /root/pharos-tokens is readable by others than root (owner UID 0, "
        "mode 0644)",
        "Secret site-agent-ca.crt in the token directory /root/pharos-tokens is a link"]


@pytest.mark.parametrize("path, chain", [
    ("/root/pharos-tokens", ["/root/pharos-tokens", "/root", "/"]),
    ("/root//pharos-tokens/", ["/root/pharos-tokens", "/root", "/"]),
    ("/srv/central/../tokens", ["/srv/tokens", "/srv", "/"]),
    ("/", ["/"]),
    ("", []),
])
def test_the_directories_to_look_at_run_from_the_path_up_to_root(path, chain):
    assert directories_up_to_root(path) == chain


def preflight_tasks(*names):
    tasks = {task["name"]: task for task in yaml.safe_load((PROJECT / "roles/release/tasks/preflight.yml").read_text())}
    return [tasks[name] for name in names]


@pytest.mark.skipif(os.geteuid() != 0, reason="the preflight runs as root, and judges ownership by root")
def test_the_preflights_own_tasks_refuse_a_readable_token_a_linked_certificate_and_a_token_directory_below_tmp(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.mkdir(mode=0o700)
    for name, mode in (("site-agent-token", 0o644), ("site-agent-ldap-password", 0o600),
                       ("ssh-access-site-token", 0o400), ("site-agent-ca.crt", 0o644)):
        (tokens / name).write_text("secret-value\n")
        (tokens / name).chmod(mode)
    (tokens / "site-api-ca.crt").symlink_to("/etc/hostname")
    tasks = preflight_tasks("Look at the token directory, the secrets directory and every directory above them",
                            "Look for each secret in the token directory and among the adopted ones",
                            "Judge the secrets and every directory on the way to them")
    tasks.append({"name": "Show", "ansible.builtin.debug": {"var": "release_secret_path_problems"}})
    playbook = tmp_path / "preflight.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks, "vars": {
        "release_token_directory": str(tokens),
        "release_secrets": ["site-agent-token", "site-agent-ldap-password", "ssh-access-site-token", "site-agent-ca.crt",
                            "site-api-ca.crt"]}}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                "-e", f"ansible_python_interpreter={sys.executable}", str(playbook)],
                               cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = {task["task"]["name"]: task["hosts"]["localhost"] for task in json.loads(completed.stdout)["plays"][0]["tasks"]}

    looked_at = [result["item"] for result in results[tasks[0]["name"]]["results"]]
    assert looked_at[:len(directories_up_to_root(str(tokens)))] == directories_up_to_root(str(tokens))
    assert {"/tmp", "/", SECRETS, "/etc"} <= set(looked_at)
    problems = [problem for problem in results["Show"]["release_secret_path_problems"] if SECRETS not in problem]
    assert [problem.split(":")[0] for problem in problems] == [
        "The directory /tmp above the token directory %s is not root's alone (owner UID 0, mode 1777)" % tokens,
        "Secret site-agent-token in the token directory %s is readable by others than root (owner UID 0, mode 0644)"
        % tokens,
        "Secret site-api-ca.crt in the token directory %s is a link" % tokens]
    assert "secret-value" not in completed.stdout
