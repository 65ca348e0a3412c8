"""Changing the active release with the playbooks: a check that predicts the change exactly, a
second activation that changes nothing, rollbacks, and an activation that fails its health and
restores the release before it (docs/release.md, "States" and "Rollback on failure")."""

from scenario import ALL_UNITS, OFFERING_UUID, RELEASES, activation, changed_count, current, release, run_playbook, waldur

testinfra_hosts = ["ansible://login"]

RELEASE_A = "/opt/pharos-hpc/releases/release-a"
RELEASE_B = "/opt/pharos-hpc/releases/release-b"
WITH_RELEASE_B = {"pharos_release_archive": str(RELEASES / "release-b.tar.gz")}


def test_check_diff_predicts_the_change_of_release_exactly_and_changes_nothing(host):
    predicted = activation(run_playbook("release.yml", "--check", "--diff", extra_vars=WITH_RELEASE_B, as_json=True))
    assert predicted["changed"] is True
    assert predicted["diff"]["before"]["current"] == "release-a"
    assert predicted["diff"]["after"]["current"] == "release-b"
    assert current(host) == RELEASE_A and not host.file(RELEASE_B).exists

    applied = activation(run_playbook("release.yml", "--diff", extra_vars=WITH_RELEASE_B, as_json=True))
    assert applied["diff"] == predicted["diff"]
    assert [step["step"] for step in applied["steps"]] == [step["step"] for step in predicted["steps"]]
    assert current(host) == RELEASE_B
    assert host.file("/opt/pharos-hpc/previous").linked_to == RELEASE_A
    assert all(host.service(unit).is_running for unit in ALL_UNITS)


def test_a_second_activation_of_the_same_release_reports_zero_changed(host):
    assert changed_count(run_playbook("release.yml", extra_vars=WITH_RELEASE_B)) == 0
    assert current(host) == RELEASE_B


def test_the_older_release_is_refused_on_the_host_as_a_downgrade_unless_the_run_allows_it(host):
    # The inventory's archive is release-a, validly signed before release-b: the controller's
    # check passes, and the module on the host refuses it.
    rc, output = run_playbook("release.yml", succeed=False)
    assert rc != 0
    assert "Release release-a was signed at" in output and "before the active release release-b" in output
    assert "activating it is a downgrade" in output
    assert current(host) == RELEASE_B
    allowed = activation(run_playbook("release.yml", "--check", "--diff",
                                      extra_vars={"pharos_release_allow_downgrade": True}, as_json=True))
    assert allowed["diff"]["after"]["current"] == "release-a"
    assert current(host) == RELEASE_B


def test_rollback_returns_to_the_previous_release_then_to_a_named_one(host):
    run_playbook("rollback.yml")
    assert current(host) == RELEASE_A
    assert host.file("/opt/pharos-hpc/previous").linked_to == RELEASE_B
    assert all(host.service(unit).is_running for unit in ALL_UNITS)

    run_playbook("rollback.yml", extra_vars={"release_id": "release-b"})
    assert current(host) == RELEASE_B
    run_playbook("rollback.yml", extra_vars={"release_id": "release-a"})
    assert current(host) == RELEASE_A
    assert '"release_id": "release-a"' in host.file("/var/lib/pharos-hpc/active-release").content_string


def test_an_activation_whose_offering_probe_fails_restores_the_earlier_release_and_its_units(host):
    units_before = {unit: host.file("/etc/systemd/system/" + unit.replace("@report", "@")).sha256sum
                    for unit in ("waldur-site-agent@report.service", "pharos-ssh-access-agent.service")}
    waldur(host, "POST", "marketplace-provider-offerings/%s/pause/" % OFFERING_UUID,
           {"paused_reason": "scenario: a failing health probe"}, as_user="waldur-staff")
    try:
        failed = release(host, release_id="release-b", state="active", health_timeout=20)
    finally:
        waldur(host, "POST", "marketplace-provider-offerings/%s/unpause/" % OFFERING_UUID, as_user="waldur-staff")
    # testinfra passes a failed module's result on without its "failed" key; "restored" says it.
    assert failed.get("restored") is True, failed
    assert "is Paused, not Active" in failed["msg"]
    assert "The earlier release release-a is active again" in failed["msg"]
    assert current(host) == RELEASE_A
    assert '"release_id": "release-a"' in host.file("/var/lib/pharos-hpc/active-release").content_string
    assert all(host.service(unit).is_running for unit in ALL_UNITS)
    assert units_before == {unit: host.file("/etc/systemd/system/" + unit.replace("@report", "@")).sha256sum
                            for unit in units_before}
