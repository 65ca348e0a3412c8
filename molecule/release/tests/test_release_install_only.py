"""release.yml with pharos_release_activate=false installs a release and does nothing else: the
running release, its units and the host's configuration stay as they were. A later release.yml
with the same archive activates it without installing it again. Runs after
test_release_changes.py (file order), with release-a active, and leaves release-a active."""

from scenario import ALL_UNITS, activation, changed_count, current, rebuilt_release_b, run_playbook

testinfra_hosts = ["ansible://login"]

RELEASE_C = "/opt/pharos-hpc/releases/release-c"


def etc_digest(host):
    return host.check_output("sha256sum /etc/pharos-hpc/*.* /etc/pharos-hpc/secrets/* | sha256sum")


def started(host):
    return {unit: host.check_output("systemctl show -p ActiveEnterTimestamp --value %s" % unit) for unit in ALL_UNITS}


def test_a_release_is_installed_without_activation_and_activated_later_without_a_second_install(host, tmp_path):
    archive = rebuilt_release_b(tmp_path / "release-c.tar.gz", release_id="release-c")
    before = current(host)
    install_only = {"pharos_release_archive": str(archive), "pharos_release_activate": False}
    etc, units = etc_digest(host), started(host)

    predicted = activation(run_playbook("release.yml", "--check", "--diff", extra_vars=install_only, as_json=True))
    assert [step["step"] for step in predicted["steps"]] == ["stage"], predicted["steps"]
    assert not host.file(RELEASE_C).exists

    installed = activation(run_playbook("release.yml", extra_vars=install_only, as_json=True))
    assert [step["step"] for step in installed["steps"]] == ["stage"]
    assert host.file(RELEASE_C + "/fingerprint").exists
    assert (current(host), etc_digest(host), started(host)) == (before, etc, units)
    assert changed_count(run_playbook("release.yml", extra_vars=install_only)) == 0

    try:
        activated = activation(run_playbook("release.yml", extra_vars={"pharos_release_archive": str(archive)},
                                            as_json=True))
        assert "stage" not in [step["step"] for step in activated["steps"]], activated["steps"]
        assert current(host) == RELEASE_C
        assert all(host.service(unit).is_running for unit in ALL_UNITS)
    finally:
        run_playbook("rollback.yml", extra_vars={"release_id": before.rsplit("/", 1)[-1]})
    assert current(host) == before
