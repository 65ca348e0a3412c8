"""The agents' secrets rotated through release.yml (docs/production.md, "Rotating a secret"): a
new token directory and one run put the Site agent on its new Waldur token and the SSH access
agent on its new Site API bearer, and a run killed
between a change of the agents' files and their restart is finished by the next run.

Runs last (pytest orders files by name) and leaves the rotated token in place."""

import json
import time

import pytest
from scenario import ALL_UNITS, SIMULATOR, run_playbook, started_before_change

testinfra_hosts = ["ansible://login"]
ROTATED_DIRECTORY = "/root/pharos-tokens-next"

# What each agent reads at start, which release.yml writes.
AGENT_FILES = {"pharos-ssh-access-agent.service": "/etc/pharos-hpc/ssh-access.env",
               "waldur-site-agent@order_process.service": "/etc/pharos-hpc/site-agent.env"}

def agent_events(host, mode, since):
    """The Site agent mode's log events (JSON) since the epoch second given."""
    lines = host.check_output("journalctl -u waldur-site-agent@%s -o cat --no-pager --since @%d" % (mode, since))
    return [json.loads(line)["event"] for line in lines.splitlines() if line.startswith("{")]


def agent_event(host, mode, since, event, timeout=120):
    """The mode's events once it has logged the one awaited, or after the timeout: a restarted
    agent logs its first cycle some seconds after systemd reports it active."""
    deadline = time.monotonic() + timeout
    events = agent_events(host, mode, since)
    while event not in events and time.monotonic() < deadline:
        time.sleep(2)
        events = agent_events(host, mode, since)
    return events


def test_a_release_run_killed_after_the_agents_files_changed_is_finished_by_the_next(host):
    for path in AGENT_FILES.values():
        assert host.run("echo '# changed by hand' >> %s" % path).rc == 0
    status, output = run_playbook("release.yml", interrupt_after="Write the Site agent's environment file")
    assert status == -9 and "INTERRUPTED after" in output, output[-3000:]
    for unit, path in AGENT_FILES.items():
        assert started_before_change(host, unit, path), unit

    run_playbook("release.yml")
    for unit, path in AGENT_FILES.items():
        assert not started_before_change(host, unit, path), unit
    for unit in ALL_UNITS:
        assert host.service(unit).is_running, unit


@pytest.fixture
def rotated_token_directory(host):
    """The central step's token directory again, with both agents' new tokens."""
    host.check_output("install -d -m 0700 %s" % ROTATED_DIRECTORY)
    for new, name in (("site-agent-next-token", "site-agent-token"), ("ssh-access-site-next-token", "ssh-access-site-token")):
        copied = host.ansible("copy", "src=%s dest=%s/%s mode=0600" % (SIMULATOR / new, ROTATED_DIRECTORY, name),
                              check=False)
        assert not copied.get("failed"), copied
    host.check_output("for name in site-agent-ldap-password site-agent-ca.crt site-api-ca.crt; "
                      "do cp -p /root/pharos-tokens/$name %s/; done" % ROTATED_DIRECTORY)
    return ROTATED_DIRECTORY


def test_new_agent_tokens_are_taken_with_one_run_and_the_agents_poll_with_them(host, rotated_token_directory):
    since = int(host.check_output("date +%s"))
    run_playbook("release.yml", extra_vars={"pharos_token_directory": rotated_token_directory})

    credential = "/etc/pharos-hpc/secrets/waldur-site-agent-config.yaml"
    new_token = (SIMULATOR / "site-agent-next-token").read_text().strip()
    assert host.run("grep -c -F -f %s/site-agent-token %s" % (rotated_token_directory, credential)).stdout.strip() == "1"
    assert new_token not in host.file("/etc/pharos-hpc/site-agent.yaml").content_string
    for mode in ("order_process", "membership_sync", "report"):
        unit = "waldur-site-agent@%s.service" % mode
        assert not started_before_change(host, unit, credential), unit
        # Waldur names the token's own user: the agent runs as the new token's owner.
        events = agent_event(host, mode, since, "Current user username: site-agent-next")
        assert "Current user username: site-agent-next" in events, (mode, events[-20:])
    polled = agent_event(host, "order_process", since, "There are no pending or executing orders")
    assert "There are no pending or executing orders" in polled, polled[-20:]

    bearer = "/etc/pharos-hpc/secrets/ssh-access-site-token"
    assert host.file(bearer).sha256sum == host.file(rotated_token_directory + "/ssh-access-site-token").sha256sum
    assert not started_before_change(host, "pharos-ssh-access-agent.service", bearer)
    # The Site API takes the new bearer: the agent's cycles get past it (this scenario has no
    # directory, so each cycle then stops at the directory stage).
    cycles = wait_for_access_agent_cycles(host, since)
    assert cycles and all(cycle.get("stage") != "site_api" for cycle in cycles), cycles


def wait_for_access_agent_cycles(host, since, seconds=90):
    deadline = time.monotonic() + seconds
    while True:
        lines = host.check_output("journalctl -u pharos-ssh-access-agent -o cat --no-pager --since @%d" % since)
        cycles = [json.loads(line) for line in lines.splitlines() if line.startswith("{")]
        if cycles or time.monotonic() > deadline:
            return cycles
        time.sleep(5)
