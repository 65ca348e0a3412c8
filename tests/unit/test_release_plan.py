"""pharos_release's planner as a pure function: (desired, host) -> steps, for every state and
starting situation. The steps are what check mode returns and what a run applies."""

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.release.plan import PlanError, plan, predict, target_release

UNIT = "pharos-ssh-access-agent.service"
NEW_FILE, OLD_FILE = "sha256:" + "2" * 64, "sha256:" + "1" * 64
RECORD_R1 = {"release_id": "r1", "components": ["ssh-access"], "units": [UNIT], "state": "active"}


def host(current=None, previous=None, installed=None, record=None, links=None, unit_file=None, active=None,
         enabled=None):
    return {"current": current, "previous": previous, "installed": installed or {}, "active_record": record,
            "links": links if links is not None else {}, "unit_files": {UNIT: unit_file},
            "units": {UNIT: {"active": active or "inactive", "enabled": enabled or "disabled"}}}


def desired(state="active", release_id="r2", archive=None, fingerprint=None, unit_file=NEW_FILE):
    return {"state": state, "release_id": release_id, "archive": archive, "fingerprint": fingerprint,
            "components": ["ssh-access"], "units": [UNIT], "unit_files": {UNIT: unit_file}}


LINKED = {"ssh-access": "current/venvs/ssh-access"}
R1_ACTIVE = dict(current="r1", installed={"r1": "sha256:f1", "r2": "sha256:f2"}, record=RECORD_R1, links=LINKED,
                 unit_file=OLD_FILE, active="active", enabled="enabled")
R2_ACTIVE = dict(current="r2", previous="r1", installed={"r1": "sha256:f1", "r2": "sha256:f2"}, links=LINKED,
                 record=dict(RECORD_R1, release_id="r2"), unit_file=NEW_FILE, active="active", enabled="enabled")

CASES = [
    ("a fresh host installs the release from its archive and activates nothing for present",
     desired("present", archive="/tmp/r2.tar.gz", fingerprint="sha256:f2"), host(), ["stage"]),
    ("present of a release installed with the same inputs changes nothing",
     desired("present", archive="/tmp/r2.tar.gz", fingerprint="sha256:f2"), host(installed={"r2": "sha256:f2"}), []),
    ("present of an installed release named without an archive changes nothing",
     desired("present"), host(installed={"r2": "sha256:f2"}), []),
    ("a fresh host stages, points current, links the component, installs the unit and starts it",
     desired(archive="/tmp/r2.tar.gz", fingerprint="sha256:f2"), host(),
     ["stage", "switch_current", "link_component", "install_unit", "daemon_reload", "enable_units", "restart_units",
      "record_active"]),
    ("another release active records it as previous, switches, updates the unit file and restarts",
     desired(), host(**R1_ACTIVE),
     ["record_previous", "switch_current", "install_unit", "daemon_reload", "restart_units", "record_active"]),
    ("the same release active and running changes nothing", desired(), host(**R2_ACTIVE), []),
    ("the same release active with its unit stopped starts it again",
     desired(), host(**{**R2_ACTIVE, "active": "failed"}), ["restart_units", "record_active"]),
    ("a rollback to the recorded previous release switches back and restarts",
     desired("rolled_back", "r1", unit_file=OLD_FILE), host(**R2_ACTIVE),
     ["record_previous", "switch_current", "install_unit", "daemon_reload", "restart_units", "record_active"]),
    ("stopped stops and disables the active units and records it",
     desired("stopped", "r2"), host(**R2_ACTIVE), ["stop_units", "disable_units", "record_stopped"]),
    ("stopped when already stopped changes nothing",
     desired("stopped", "r2"), host(**{**R2_ACTIVE, "active": "inactive", "enabled": "disabled",
                                       "record": dict(RECORD_R1, release_id="r2", state="stopped")}), []),
    ("info never plans a step", desired("info", "r2"), host(**R1_ACTIVE), []),
]


@pytest.mark.parametrize("wanted, current, steps", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_plan_for_each_state_and_starting_situation(wanted, current, steps):
    assert [step["step"] for step in plan(wanted, current)] == steps


REFUSALS = [
    ("a release id installed with another fingerprint is never reused",
     desired("present", archive="/tmp/r2.tar.gz", fingerprint="sha256:other"), host(installed={"r2": "sha256:f2"}),
     "already installed with other inputs"),
    ("activating a release that is not installed needs its archive",
     desired(), host(installed={"r1": "sha256:f1"}), "Release r2 is not installed on this host"),
    ("a named rollback to a release that is not installed names the installed ones",
     desired("rolled_back", "r9"), host(**R1_ACTIVE),
     "Cannot roll back to release r9: it is not installed on this host (installed: r1, r2)"),
]


@pytest.mark.parametrize("wanted, current, message", [case[1:] for case in REFUSALS], ids=[case[0] for case in REFUSALS])
def test_plans_that_cannot_be_reached_are_refused_with_their_fix(wanted, current, message):
    with pytest.raises(PlanError, match="Fix:") as raised:
        plan(wanted, current)
    assert message in str(raised.value)


def test_a_rollback_without_a_recorded_previous_release_asks_for_a_release_id():
    with pytest.raises(PlanError, match="nothing to roll back to. Fix: name the release"):
        target_release("rolled_back", None, host(current="r1", installed={"r1": "x"}))


def test_a_rollback_without_a_release_id_returns_to_previous():
    assert target_release("rolled_back", None, host(**R2_ACTIVE)) == "r1"


def test_the_diff_says_which_release_becomes_current_and_which_unit_files_and_units_change():
    current = host(**R1_ACTIVE)
    steps = plan(desired(), current)
    diff = predict(current, steps, desired())
    assert diff["before"] == {"current": "r1", "previous": None, "unit_files": {UNIT: OLD_FILE}, "units": {UNIT: "active"}}
    assert diff["after"] == {"current": "r2", "previous": "r1", "unit_files": {UNIT: NEW_FILE}, "units": {UNIT: "active"}}


def test_a_unit_no_longer_selected_is_stopped():
    current = host(**{**R2_ACTIVE, "record": dict(RECORD_R1, release_id="r2", units=[UNIT, "old.service"])})
    current["units"]["old.service"] = {"active": "active", "enabled": "enabled"}
    steps = plan(desired(), current)
    assert [(step["step"], step.get("units")) for step in steps] == [
        ("stop_units", ["old.service"]), ("record_active", None)]
