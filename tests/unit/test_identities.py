"""The service identities check, against this machine's own accounts and groups through NSS:
root (0) and daemon (1) exist on every Debian host, as a Site's own accounts would."""

from module_runner import run_module

from ansible_collections.pharos.hpc.plugins.module_utils.identities import Planned, conflicts
from ansible_collections.pharos.hpc.plugins.modules import service_identities


def test_an_absent_name_with_a_free_id_and_a_present_name_with_its_own_id_are_no_conflict():
    assert conflicts([Planned("user", "pharos-test-absent", 4099999, "pharos_agent_uid"),
                      Planned("user", "root", 0, "pharos_agent_uid"),
                      Planned("group", "daemon", 1, "pharos_agent_gid")]) == []


def test_an_account_that_exists_with_another_uid_is_named_with_both_ids_and_the_fix():
    found = conflicts([Planned("user", "daemon", 4100001, "pharos_agent_uid")])
    assert found == [
        "the account daemon exists with UID 1, but the Site plans UID 4100001 for it (pharos_agent_uid); "
        "the run would renumber it, and the files it owns would keep 1. Set pharos_agent_uid: 1, or "
        "renumber it yourself (usermod -u 4100001 daemon) and give its files the new number."]


def test_an_id_that_another_name_holds_is_named_with_its_holder():
    found = conflicts([Planned("user", "pharos-runtime-test", 1, "pharos_scratch_runtime_uid")])
    assert found == [
        "UID 1, which the Site plans for the account pharos-runtime-test (pharos_scratch_runtime_uid), "
        "belongs to daemon already; two names would share it. Choose a free UID for "
        "pharos_scratch_runtime_uid, or move daemon to another UID."]


def test_a_group_is_checked_by_gid_in_both_directions():
    found = conflicts([Planned("group", "daemon", 0, "pharos_scratch_group_gid")])
    assert len(found) == 2
    assert found[0].startswith("the group daemon exists with GID 1, but the Site plans GID 0")
    assert found[1].startswith("GID 0, which the Site plans for the group daemon (pharos_scratch_group_gid), "
                               "belongs to root already")


def test_the_module_reports_and_changes_nothing_in_check_mode():
    result = run_module(service_identities, {"identities": [
        {"kind": "user", "name": "root", "id": 0, "setting": "x_uid"},
        {"kind": "group", "name": "pharos-test-absent", "id": 0, "setting": "x_gid"}]}, True)
    assert result["changed"] is False
    assert result["conflicts"] == [
        "GID 0, which the Site plans for the group pharos-test-absent (x_gid), belongs to root already; "
        "two names would share it. Choose a free GID for x_gid, or move root to another GID."]
