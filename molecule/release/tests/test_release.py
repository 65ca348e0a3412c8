"""pharos_release on a real systemd host: the activated agent, a second release, a rollback, and
an activation that fails and restores the release before it. The tests run in file order."""

import json

testinfra_hosts = ["ansible://login"]

UNIT = "pharos-ssh-access-agent.service"
INCOMING = "/var/lib/pharos-hpc/incoming"


def release(host, **arguments):
    """pharos.hpc.pharos_release on the host for real (testinfra's default is check mode)."""
    arguments.setdefault("probes", ["units"])
    arguments.setdefault("health_timeout", 20)
    # testinfra hands the arguments to ansible's -a, which takes them as JSON.
    return host.ansible("pharos.hpc.pharos_release", json.dumps(arguments), check=False, become=True)


def current(host):
    return host.file("/opt/pharos-hpc/current").linked_to


def test_the_agent_unit_is_active_and_runs_as_its_own_user_not_root(host):
    assert host.service(UNIT).is_running and host.service(UNIT).is_enabled
    pid = host.check_output("systemctl show --property=MainPID --value %s", UNIT)
    assert host.check_output("ps -o user= -p %s", pid).strip() == "pharos-ssh-access"


def test_current_points_at_the_first_release_and_the_agent_runs_from_it(host):
    assert current(host) == "/opt/pharos-hpc/releases/release-a"
    assert host.file("/opt/pharos-hpc/ssh-access").linked_to == "/opt/pharos-hpc/releases/release-a/venvs/ssh-access"
    assert "release-a" in host.check_output("cat /var/lib/pharos-hpc/active-release")


def test_the_installed_release_cannot_be_written_by_the_agent(host):
    assert host.run("runuser -u pharos-ssh-access -- touch /opt/pharos-hpc/releases/release-a/release/x").rc != 0
    assert host.file("/opt/pharos-hpc/releases/release-a/release/manifest.yml").mode == 0o444


def test_a_second_release_activates_and_rolled_back_returns_to_the_first(host):
    second = release(host, archive="%s/release-b.tar.gz" % INCOMING)
    assert second["changed"] and current(host) == "/opt/pharos-hpc/releases/release-b"
    assert host.file("/opt/pharos-hpc/previous").linked_to == "/opt/pharos-hpc/releases/release-a"
    assert host.service(UNIT).is_running
    back = release(host, state="rolled_back")
    assert back["changed"] and back["release_id"] == "release-a"
    assert current(host) == "/opt/pharos-hpc/releases/release-a" and host.service(UNIT).is_running


def test_an_activation_whose_unit_exits_restores_the_earlier_release(host):
    failed = release(host, archive="%s/release-broken.tar.gz" % INCOMING, health_timeout=15)
    # testinfra passes a failed module's result on without its "failed" key; "restored" says it.
    assert failed.get("restored") is True, failed
    assert "The earlier release release-a is active again" in failed["msg"]
    assert current(host) == "/opt/pharos-hpc/releases/release-a"
    assert "--interval" not in host.file("/etc/systemd/system/%s" % UNIT).content_string
    assert host.service(UNIT).is_running
    assert '"release_id": "release-a"' in host.check_output("cat /var/lib/pharos-hpc/active-release")
