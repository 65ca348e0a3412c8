"""status.yml on the converged login node, after the other tests (file order): what runs, read
only and without an archive, as a table and as data, with each agent's last good cycle and
last error from its journal and the release's preconditions; and, with one agent stopped and
site.env missing, a non-zero end that names both. No run changes anything.

This scenario's login node has no directory, so the SSH access agent runs and fails every
cycle: status must say so, though its unit is active. The journey scenario shows a Site where
every cycle succeeds and status ends zero."""

from datetime import datetime, timedelta, timezone

from scenario import ALL_UNITS, SITE_AGENT_UNITS, SSH_ACCESS_UNIT, configuration_digest, current, run_playbook

testinfra_hosts = ["ansible://login"]


def recent(moment, minutes=10):
    return datetime.now(timezone.utc) - datetime.fromisoformat(moment) < timedelta(minutes=minutes)


def test_status_reports_the_release_each_unit_its_cycles_and_health_and_changes_nothing(host, monkeypatch):
    before = configuration_digest(host)
    monkeypatch.setenv("ANSIBLE_SHOW_CUSTOM_STATS", "true")
    rc, report = run_playbook("status.yml", as_json=True, succeed=False)
    (status,) = report["global_custom_stats"]["pharos_status"].values()
    assert status["current"] == current(host).rsplit("/", 1)[-1]
    units = status["units"]
    assert {name: unit["active"] for name, unit in units.items()} == dict.fromkeys(ALL_UNITS, "active")
    assert all(unit["since"] and unit["last_log"] for unit in units.values()), units
    for name in SITE_AGENT_UNITS:
        assert recent(units[name]["last_good_cycle"]) and not units[name]["last_cycle_failed"], units[name]
    access = units[SSH_ACCESS_UNIT]
    assert access["last_cycle_failed"] and recent(access["last_error"]["time"]), access
    assert "LDAPSocketOpenError" in access["last_error"]["message"]
    assert [(probe["probe"], probe["ok"]) for probe in status["health"]] == [
        ("units", True), ("offering", True), ("site_api", True)], status["health"]
    assert status["preconditions"] == []
    assert status["problems"] == ["%s's last cycle failed at %s: %s. Fix: read journalctl -u %s." % (
        SSH_ACCESS_UNIT, access["last_error"]["time"], access["last_error"]["message"], SSH_ACCESS_UNIT)]
    assert rc != 0
    assert sum(stats["changed"] for stats in report["stats"].values()) == 0
    assert configuration_digest(host) == before


def test_status_names_a_stopped_agent_and_a_missing_site_env_and_ends_non_zero_after_answering(host, tmp_path):
    before = configuration_digest(host)
    missing = tmp_path / "site.env"
    host.check_output("systemctl stop %s" % SSH_ACCESS_UNIT)
    try:
        rc, output = run_playbook("status.yml", succeed=False, extra_vars={"pharos_site_env_file": str(missing)})
    finally:
        host.check_output("systemctl start %s" % SSH_ACCESS_UNIT)
    text = " ".join(output.split())
    assert rc != 0
    assert "%s: inactive (dead)" % SSH_ACCESS_UNIT in text, output[-3000:]
    assert "PROBLEM: %s is inactive" % SSH_ACCESS_UNIT in text
    assert "preconditions: 1 do not hold (below)" in text
    assert "PROBLEM: pharos.hpc.site_env: cannot read %s: No such file or directory" % missing in text
    # The other units are still reported, with their last good cycle, and the health of the rest.
    assert "%s: active (running)" % ALL_UNITS[0] in text
    assert "last good cycle 20" in text
    assert "health offering: holds" in text
    assert configuration_digest(host) == before
