"""The real release, activated by playbooks/release.yml: the upstream Site agent's three modes and
the SSH access agent run as their own users from a read-only release, poll once a minute, and
hold their secrets as docs/release.md lays them out ("Secrets and trust")."""

import json
import re
import time
from datetime import datetime

import pytest
from scenario import ALL_UNITS, OFFERING_UUID, SITE_AGENT_UNITS, SSH_ACCESS_UNIT, current

testinfra_hosts = ["ansible://login"]

UNIT_USERS = [(unit, "pharos-agent") for unit in SITE_AGENT_UNITS] + [(SSH_ACCESS_UNIT, "pharos-ssh-access")]
SITE_AGENT_MODES = ("order_process", "membership_sync", "report")
# Each Site agent mode logs this once a cycle, after it has read the offering from Waldur and
# registered itself there, and before it asks for the mode's work (orders, members, usage).
SITE_AGENT_POLL = re.compile(r"Processing offering .* \(%s\)" % OFFERING_UUID)
# A mode wakes every minute and runs a cycle once its period has passed since the last one
# ended: with a period of one minute two polls lie 60 s plus one cycle's time apart, with two
# minutes about 120 s.
ONE_MINUTE_APART = (55, 90)


def current_run_records(host, unit):
    """The JSON records logged by the unit's running process (its current systemd invocation), so
    that an earlier run's polls do not stand in for the running agent's."""
    invocation = host.check_output("systemctl show --property=InvocationID --value %s", unit)
    assert invocation, "%s has no running invocation" % unit
    lines = host.check_output("journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID=%s", invocation)
    return [json.loads(line) for line in lines.splitlines() if line.startswith("{")]


def poll_times(host, unit):
    """When the unit's running agent polled, in epoch seconds: for a Site agent mode, each cycle
    that read the scenario's offering from Waldur; for the SSH access agent, each cycle that got
    the Site API's answer (here it then stops at the directory stage: the scenario has no directory)."""
    records = current_run_records(host, unit)
    if unit == SSH_ACCESS_UNIT:
        return [record["time"] for record in records if record.get("event") == "cycle"
                or (record.get("event") == "error" and record.get("stage") != "site_api")]
    return [datetime.fromisoformat(record["timestamp"]).timestamp() for record in records
            if SITE_AGENT_POLL.fullmatch(record.get("event", ""))]


def wait_for_polls(host, unit, count, timeout):
    """The unit's poll times once it has polled count times, or whatever it has after the timeout:
    a freshly started agent polls first some seconds after systemd reports it active."""
    deadline = time.monotonic() + timeout
    polls = poll_times(host, unit)
    while len(polls) < count and time.monotonic() < deadline:
        time.sleep(5)
        polls = poll_times(host, unit)
    return polls


@pytest.mark.parametrize("unit, user", UNIT_USERS)
def test_each_agent_unit_is_active_and_runs_as_its_own_user_never_root(host, unit, user):
    assert host.service(unit).is_running and host.service(unit).is_enabled
    pid = host.check_output("systemctl show --property=MainPID --value %s", unit)
    assert host.check_output("ps -o user= -p %s", pid).strip() == user


def test_the_site_agent_runs_the_upstream_release_from_the_current_release(host):
    assert current(host) == "/opt/pharos-hpc/releases/release-a"
    version = host.check_output("/opt/pharos-hpc/site-agent/bin/python -c "
                                "'import importlib.metadata as m; print(m.version(\"waldur-site-agent\"))'")
    assert version == "1.0.8rc9"
    command = host.check_output("systemctl show --property=ExecStart --value waldur-site-agent@report.service")
    assert "/opt/pharos-hpc/site-agent/bin/waldur_site_agent" in command and "--mode report" in command


@pytest.mark.parametrize("mode", SITE_AGENT_MODES)
def test_each_site_agent_mode_polls_waldur_once_a_minute(host, mode):
    environment = host.file("/etc/pharos-hpc/site-agent.env").content_string
    assert "WALDUR_SITE_AGENT_%s_PERIOD_MINUTES=1\n" % mode.upper() in environment
    unit = "waldur-site-agent@%s.service" % mode
    polls = wait_for_polls(host, unit, 2, timeout=200)
    assert len(polls) >= 2, "%s polled %d time(s) in 200 s since it started, not once a minute" % (unit, len(polls))
    gaps = [round(later - earlier) for earlier, later in zip(polls, polls[1:])]
    low, high = ONE_MINUTE_APART
    assert all(low <= gap <= high for gap in gaps), (
        "%s polled %s s apart, not about a minute (%d-%d s)" % (unit, gaps, low, high))


def test_the_installed_release_cannot_be_written_by_the_agents(host):
    for user in ("pharos-agent", "pharos-ssh-access"):
        assert host.run("runuser -u %s -- touch /opt/pharos-hpc/releases/release-a/release/x" % user).rc != 0
    assert host.file("/opt/pharos-hpc/releases/release-a/release/manifest.yml").mode == 0o444


# docs/release.md, "Secrets and trust".
@pytest.mark.parametrize("path, owner, group, mode", [
    ("/etc/pharos-hpc/secrets", "root", "root", 0o700),
    ("/etc/pharos-hpc/secrets/site-agent-token", "root", "root", 0o400),
    ("/etc/pharos-hpc/secrets/site-agent-ldap-password", "root", "root", 0o400),
    ("/etc/pharos-hpc/secrets/ssh-access-site-token", "root", "root", 0o600),
    ("/etc/pharos-hpc/secrets/site-agent-ca.crt", "root", "root", 0o644),
    ("/etc/pharos-hpc/secrets/site-api-ca.crt", "root", "root", 0o644),
    ("/etc/pharos-hpc/secrets/waldur-site-agent-config.yaml", "root", "root", 0o400),
    ("/etc/pharos-hpc/site-agent-ca.crt", "root", "root", 0o644),
    ("/etc/pharos-hpc/site-api-ca.crt", "root", "root", 0o644),
])
def test_secrets_and_public_trust_have_their_documented_owners_and_modes(host, path, owner, group, mode):
    found = host.file(path)
    assert (found.user, found.group, found.mode) == (owner, group, mode)


@pytest.mark.parametrize("name", ["site-agent-token", "site-agent-ldap-password", "ssh-access-site-token",
                                  "site-agent-ca.crt", "site-api-ca.crt"])
def test_secrets_are_adopted_unchanged_from_the_token_directory(host, name):
    assert (host.file("/etc/pharos-hpc/secrets/%s" % name).sha256sum
            == host.file("/root/pharos-tokens/%s" % name).sha256sum)


def test_the_agents_cannot_read_any_secret_directly(host):
    for user in ("pharos-agent", "pharos-ssh-access"):
        assert host.run("runuser -u %s -- cat /etc/pharos-hpc/secrets/site-agent-token" % user).rc != 0
        assert host.run("runuser -u %s -- cat /etc/pharos-hpc/secrets/ssh-access-site-token" % user).rc != 0


def test_the_readable_configuration_names_no_secret_and_the_credential_holds_them(host):
    token = host.file("/etc/pharos-hpc/secrets/site-agent-token").content_string.strip()
    password = host.file("/etc/pharos-hpc/secrets/site-agent-ldap-password").content_string.strip()
    readable = host.file("/etc/pharos-hpc/site-agent.yaml").content_string
    credential = host.file("/etc/pharos-hpc/secrets/waldur-site-agent-config.yaml").content_string
    assert token not in readable and password not in readable
    assert "waldur_api_token: %s" % token in credential and "bind_password: %s" % password in credential
    assert "unit_factor: 60" in readable and "allocation_prefix: pharos_a_" in readable


@pytest.mark.parametrize("unit", ALL_UNITS)
def test_each_agent_polls_and_its_journal_holds_no_traceback(host, unit):
    # An agent that never ran logs no traceback either: the journal read must hold the running
    # agent's own polls.
    polls = wait_for_polls(host, unit, 1, timeout=150)
    journal = host.check_output("journalctl --no-pager -o cat -u %s", unit)
    assert polls, "%s has not polled since it started, so its clean journal proves nothing:\n%s" % (
        unit, journal[-2000:])
    assert "Traceback" not in journal, journal[-3000:]


def test_systemd_rates_every_agent_unit_ok_or_better(host):
    for unit in ALL_UNITS:
        rating = host.check_output("systemd-analyze security --no-pager %s | tail -1", unit)
        print("%s: %s" % (unit, rating))
        exposure = float(re.search(r"exposure level for \S+: ([0-9.]+)", rating).group(1))
        assert exposure <= 2.0, rating
