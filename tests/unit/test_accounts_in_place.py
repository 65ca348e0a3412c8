"""pharos.hpc.user and pharos.hpc.group read an account or group already in place from the
host's own files with one shell command, and leave every other case to the builtin module: one to
make or to mend, an option beyond the plain ones. Each case runs a real playbook on localhost
against the accounts every Debian host has (nobody, nogroup); a case that would change one runs in
check mode, and the host's files are compared before and after. A result with in_place came from
the shell command, one without from the builtin module."""

import hashlib
from pathlib import Path

import pytest
from test_files_in_place import play

NOBODY = {"name": "nobody", "uid": 65534, "group": "nogroup", "shell": "/usr/sbin/nologin", "home": "/nonexistent",
          "create_home": False, "system": True}


def user(title, **args):
    return {"name": title, "pharos.hpc.user": args}


def group(title, **args):
    return {"name": title, "pharos.hpc.group": args}


def account_files():
    return {path: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in ("/etc/passwd", "/etc/group")}


@pytest.fixture(autouse=True)
def unchanged_accounts():
    before = account_files()
    yield
    assert account_files() == before


def test_an_account_and_a_group_in_place_are_read_without_a_module_run(project, tmp_path):
    results = play(project, tmp_path, [
        user("account", **NOBODY),
        user("account by the digits of its UID", **dict(NOBODY, uid="65534")),
        user("account with only its name", name="nobody"),
        group("group", name="nogroup", gid=65534),
        group("group with only its name", name="nogroup", system=True),
    ])
    for name, result in results.items():
        assert result["changed"] is False and result.get("in_place") is True, (name, result)
    assert results["account"]["uid"] == 65534 and results["account"]["group"] == 65534
    assert results["group"]["gid"] == 65534


@pytest.mark.parametrize(("drift", "args"), [
    ("another shell", dict(NOBODY, shell="/bin/sh")),
    ("another home", dict(NOBODY, home="/var/empty")),
    ("another UID", dict(NOBODY, uid=65000)),
    ("another primary group", dict(NOBODY, group="root")),
    ("a supplementary group it is not in", dict(NOBODY, groups=["root"], append=True)),
    ("an account the host lacks", dict(NOBODY, name="pharos-absent-account", uid=64999)),
])
def test_an_account_not_in_place_is_left_to_the_builtin_module(project, tmp_path, drift, args):
    result = play(project, tmp_path, [user(drift, **args)], "--check")[drift]
    assert result["changed"] is True and "in_place" not in result, result


@pytest.mark.parametrize(("drift", "args"), [
    ("another GID", {"name": "nogroup", "gid": 65000}),
    ("a group the host lacks", {"name": "pharos-absent-group", "gid": 64999}),
])
def test_a_group_not_in_place_is_left_to_the_builtin_module(project, tmp_path, drift, args):
    result = play(project, tmp_path, [group(drift, **args)], "--check")[drift]
    assert result["changed"] is True and "in_place" not in result, result


@pytest.mark.parametrize(("step", "args"), [
    ("an option beyond the plain ones", dict(NOBODY, comment="nobody")),
    ("groups that replace the account's", dict(NOBODY, groups=["nogroup"], append=False)),
])
def test_a_step_beyond_the_plain_ones_runs_the_builtin_module(project, tmp_path, step, args):
    result = play(project, tmp_path, [user(step, **args)], "--check")[step]
    assert "in_place" not in result, result
    assert result.get("failed") is not True, result
