"""status.yml on the whole Site in adopt mode, after the member's journey: every agent's last cycle
succeeded, every precondition holds, and it ends zero. The release scenario shows the failures."""

import re

from journey import run_site_playbook

testinfra_hosts = ["ansible://pharos-journey-login"]

UNITS = ["pharos-ssh-access-agent.service"] + [
    "waldur-site-agent@%s.service" % mode for mode in ("membership_sync", "order_process", "report")]


def test_status_of_a_healthy_site_names_each_agents_last_good_cycle_and_ends_zero(host):
    before = host.check_output("stat -c %Y /etc/pharos-hpc/site.env /opt/pharos-hpc/current")
    rc, output = run_site_playbook("status.yml")
    text = " ".join(output.split())
    assert rc == 0, output[-3000:]
    for unit in UNITS:
        assert re.search(r"%s: active \(running\), last started [^;]*; last good cycle 20\d\d-" % re.escape(unit), text), unit
    assert "preconditions: all hold" in text
    assert "PROBLEM" not in text
    assert host.check_output("stat -c %Y /etc/pharos-hpc/site.env /opt/pharos-hpc/current") == before
