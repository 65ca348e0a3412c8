"""The units probe of pharos_release's health: every selected unit active after the settle time,
polled until the timeout. The HTTP probes run against the Waldur simulator in
tests/integration/waldur/test_release_probes.py."""

import pytest
from release_host_support import Clock

from ansible_collections.pharos.hpc.plugins.module_utils.release.health import failures, units_active

UNIT = "pharos-ssh-access-agent.service"


class ScriptedSystemd:
    """Reads the unit states of a script, one entry per poll (the last one repeats)."""

    def __init__(self, *script):
        self.script = list(script)
        self.polls = 0

    def states(self, units):
        state = self.script[min(self.polls, len(self.script) - 1)]
        self.polls += 1
        return {unit: {"active": state, "enabled": "enabled"} for unit in units}


CASES = [
    ("a unit active at the first probe is healthy", ["active"], None, 1),
    ("a unit still starting is waited for", ["activating", "activating", "active"], None, 3),
    ("a unit that exits and waits to restart is unhealthy at the timeout", ["activating"],
     "pharos-ssh-access-agent.service is activating after 10 seconds", 8),
    ("a unit that failed is unhealthy and the message names its journal", ["failed"],
     "journalctl -u pharos-ssh-access-agent.service", 8),
]


@pytest.mark.parametrize("script, message, polls", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_units_probe(script, message, polls):
    clock = Clock()
    systemd = ScriptedSystemd(*script)
    found = units_active(systemd, [UNIT], timeout=10, settle=3, clock=clock, sleep=clock.sleep)
    assert (found is None) == (message is None) and (message is None or message in found)
    assert systemd.polls == polls


def test_a_probe_is_waited_on_for_the_settle_time_before_it_is_read():
    clock = Clock()
    units_active(ScriptedSystemd("active"), [UNIT], timeout=10, settle=3, clock=clock, sleep=clock.sleep)
    assert clock.now == 3


def test_failures_name_each_failed_probe():
    assert failures([{"probe": "units", "ok": True, "message": "holds"},
                     {"probe": "site_api", "ok": False, "message": "redirect"}]) == ["site_api: redirect"]
