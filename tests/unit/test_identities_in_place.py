"""pharos.hpc.service_identities reads the host's accounts and groups through NSS with one shell
command, and judges them by the module's own rules: an identity absent or present with its ID
passes, another ID or an ID another name holds is a conflict with its fix. Each case runs a real
playbook on localhost against the accounts every Debian host has (nobody, nogroup, root)."""

from test_files_in_place import play


def identities(name, *planned):
    return {"name": name, "pharos.hpc.service_identities": {"identities": [
        {"kind": kind, "name": who, "id": number, "setting": "pharos_" + who.replace("-", "_") + "_id"}
        for kind, who, number in planned]}}


def test_the_host_s_accounts_are_judged_by_the_module_s_rules_from_one_command(project, tmp_path):
    results = play(project, tmp_path, [
        identities("fits", ("user", "nobody", 65534), ("group", "nogroup", 65534), ("user", "pharos-absent", 64999)),
        identities("another UID", ("user", "nobody", 64998)),
        identities("a GID another group holds", ("group", "pharos-absent", 0)),
    ], "--check")
    for result in results.values():
        assert result.get("in_place") is True and result["changed"] is False, result
    assert results["fits"]["conflicts"] == []
    assert len(results["another UID"]["conflicts"]) == 1
    assert "the account nobody exists with UID 65534, but the Site plans UID 64998" in results["another UID"]["conflicts"][0]
    assert results["a GID another group holds"]["conflicts"] == [
        "GID 0, which the Site plans for the group pharos-absent (pharos_pharos_absent_id), belongs to root already; "
        "two names would share it. Choose a free GID for pharos_pharos_absent_id, or move root to another GID."]


def test_an_identity_without_its_id_is_refused_before_anything_is_read(project, tmp_path):
    results = play(project, tmp_path, [
        {"name": "no id", "pharos.hpc.service_identities": {"identities": [
            {"kind": "user", "name": "nobody", "setting": "pharos_nobody_uid"}]}, "ignore_errors": True}])
    assert results["no id"]["failed"] is True and "id" in results["no id"]["msg"]
