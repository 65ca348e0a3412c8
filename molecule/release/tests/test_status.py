"""status.yml on the converged login node, after the other tests (file order): what runs, read
only and without an archive, as a table and as data; and, with one agent stopped, a non-zero
end that names the unit. Neither run changes anything."""

from scenario import ALL_UNITS, SSH_ACCESS_UNIT, configuration_digest, current, run_playbook

testinfra_hosts = ["ansible://login"]


def test_status_reports_the_active_release_each_unit_and_its_health_and_changes_nothing(host, monkeypatch):
    before = configuration_digest(host)
    monkeypatch.setenv("ANSIBLE_SHOW_CUSTOM_STATS", "true")
    report = run_playbook("status.yml", as_json=True)
    (status,) = report["global_custom_stats"]["pharos_status"].values()
    assert status["current"] == current(host).rsplit("/", 1)[-1]
    assert {name: unit["active"] for name, unit in status["units"].items()} == dict.fromkeys(ALL_UNITS, "active")
    assert all(unit["since"] and unit["last_log"] for unit in status["units"].values()), status["units"]
    assert [(probe["probe"], probe["ok"]) for probe in status["health"]] == [
        ("units", True), ("offering", True), ("site_api", True)], status["health"]
    assert status["problems"] == []
    assert sum(stats["changed"] for stats in report["stats"].values()) == 0
    assert configuration_digest(host) == before


def test_status_names_a_stopped_agent_and_ends_non_zero_after_answering(host):
    before = configuration_digest(host)
    host.check_output("systemctl stop %s" % SSH_ACCESS_UNIT)
    try:
        rc, output = run_playbook("status.yml", succeed=False)
    finally:
        host.check_output("systemctl start %s" % SSH_ACCESS_UNIT)
    text = " ".join(output.split())
    assert rc != 0
    assert "%s: inactive (dead)" % SSH_ACCESS_UNIT in text, output[-3000:]
    assert "PROBLEM: %s is inactive" % SSH_ACCESS_UNIT in text
    # The other units are still reported, and the health of the rest.
    assert "%s: active (running)" % ALL_UNITS[0] in text
    assert "health offering: holds" in text
    assert configuration_digest(host) == before
