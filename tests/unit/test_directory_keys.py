"""The members' key command (roles/sshd/files/directory_keys.py): the keys the directory holds at
this login; while the directory does not answer, the keys last read, for the cache lifetime and no
longer; never a key for a name or UID a local account holds, nor for an entry whose UID is not the
one SSSD serves. The directory and NSS are given as functions here; the directory scenario runs
the command against slapd, SSSD and sshd."""

import importlib.util
import os
import time

import pytest

from conftest import PROJECT

SPEC = importlib.util.spec_from_file_location("directory_keys", PROJECT / "roles" / "sshd" / "files" / "directory_keys.py")
directory_keys = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(directory_keys)

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ4z0Dk1Hmq3o9p0Vd8u2kq7Q0ZrGmKq2VJ0kZcSxY0R alice"
OLD_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBf0mN3z3l7Kx1m1dGJ8a6pXg4bSx0cYt1uQ7vL2WcQb alice-old"
ALICE = ["pharosalice", "*", "5000001", "5500001", "", "/home/pharosalice", "/bin/bash\n"]


def nss(files=(), sss=None):
    """getent as the command calls it: files holds local names and UIDs, sss the directory's."""
    sss = sss or {"pharosalice": ALICE}

    def lookup(source, key):
        if source == "files":
            return ["local"] if key in files else None
        return sss.get(key)
    return lookup


def directory(answer):
    def read(people_dn, user):
        assert people_dn == "ou=people,ou=pharos,dc=pharos,dc=lab"
        if isinstance(answer, Exception):
            raise answer
        return answer
    return read


@pytest.fixture
def config(tmp_path):
    return {"people_dn": "ou=people,ou=pharos,dc=pharos,dc=lab", "cache_seconds": 90,
            "record_directory": str(tmp_path)}


def keys_of(config, answer, lookup=None):
    return directory_keys.member_keys("pharosalice", config, directory=directory(answer), lookup=lookup or nss())


def age_record(config, seconds):
    path = os.path.join(config["record_directory"], "5000001.json")
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_the_keys_the_directory_holds_now_are_given(config):
    assert keys_of(config, ("5000001", [KEY])) == ([KEY], None)


def test_a_key_removed_from_the_directory_is_refused_at_the_next_login(config):
    keys_of(config, ("5000001", [KEY, OLD_KEY]))
    assert keys_of(config, ("5000001", [KEY])) == ([KEY], None)


def test_while_the_directory_is_down_the_keys_last_read_count_inside_the_cache_lifetime(config):
    keys_of(config, ("5000001", [KEY]))
    age_record(config, 89)
    assert keys_of(config, directory_keys.DirectoryUnavailable("socket closed")) == ([KEY], None)


def test_while_the_directory_is_down_the_keys_last_read_are_refused_past_the_cache_lifetime(config):
    keys_of(config, ("5000001", [KEY]))
    age_record(config, 91)
    keys, refusal = keys_of(config, directory_keys.DirectoryUnavailable("socket closed"))
    assert keys == []
    assert "the directory does not answer (socket closed)" in refusal and "past the cache lifetime of 90 s" in refusal


def test_while_the_directory_is_down_a_key_revoked_before_is_not_given_back(config):
    keys_of(config, ("5000001", [KEY, OLD_KEY]))
    keys_of(config, ("5000001", [KEY]))
    assert keys_of(config, directory_keys.DirectoryUnavailable("down")) == ([KEY], None)


def test_while_the_directory_is_down_a_member_never_read_gets_no_key(config):
    keys, refusal = keys_of(config, directory_keys.DirectoryUnavailable("down"))
    assert keys == [] and "none kept" in refusal


def test_a_record_kept_for_another_name_with_the_same_uid_is_not_given(config):
    keys_of(config, ("5000001", [KEY]))
    renamed = {"pharosmallory": ["pharosmallory"] + ALICE[1:]}
    keys, _ = directory_keys.member_keys("pharosmallory", config, directory=directory(directory_keys.DirectoryUnavailable("down")),
                                          lookup=nss(sss=renamed))
    assert keys == []


def test_a_name_a_local_account_holds_gets_no_directory_key(config):
    keys, refusal = keys_of(config, ("5000001", [KEY]), lookup=nss(files={"pharosalice"}))
    assert keys == [] and refusal == "a local account has this name"


def test_a_uid_a_local_account_holds_gets_no_directory_key(config):
    keys, refusal = keys_of(config, ("5000001", [KEY]), lookup=nss(files={"5000001"}))
    assert keys == [] and refusal == "a local account has its UID 5000001"


def test_a_directory_uid_a_local_account_holds_gets_no_key_while_sssd_still_serves_the_old_one(config):
    keys, refusal = keys_of(config, ("1001", [KEY]), lookup=nss(files={"1001"}))
    assert keys == [] and refusal == "a local account has its directory UID 1001"


def test_a_name_sssd_does_not_serve_gets_no_key_and_the_directory_is_not_asked(config):
    def never(*_):
        raise AssertionError("the directory was asked")
    assert directory_keys.member_keys("stranger", config, directory=never, lookup=nss()) == ([], None)


def test_an_entry_the_directory_no_longer_holds_gets_no_key(config):
    keys, refusal = keys_of(config, None)
    assert keys == [] and "no entry" in refusal


def test_a_record_that_cannot_be_written_costs_the_fallback_not_the_login(config, tmp_path):
    config["record_directory"] = str(tmp_path / "missing")
    assert keys_of(config, ("5000001", [KEY])) == ([KEY], None)


def test_an_entry_whose_directory_uid_is_not_the_uid_sssd_serves_gets_no_key(config):
    keys, refusal = keys_of(config, ("5000002", [KEY]))
    assert keys == []
    assert "the directory's entry has UID 5000002 but SSSD serves UID 5000001" in refusal


def test_a_stale_sssd_uid_gets_no_key_whichever_uid_is_the_higher(config):
    keys, refusal = keys_of(config, ("4999999", [KEY]))
    assert keys == [] and "UID 4999999 but SSSD serves UID 5000001" in refusal


def test_after_a_uid_change_the_keys_read_before_are_not_given_while_the_directory_is_down(config):
    keys_of(config, ("5000001", [KEY]))
    keys_of(config, ("5000002", [KEY]))
    keys, refusal = keys_of(config, directory_keys.DirectoryUnavailable("down"))
    assert keys == [] and "the directory does not answer (down)" in refusal
