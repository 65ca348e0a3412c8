"""pharos_release runs against a temporary root with a recording stand-in for systemd:
activation, the atomic switch, restoring the predecessor, rollback, stop, and check mode."""

import os
from pathlib import Path

import pytest
from release_host_support import (
    SSH_UNIT, Clock, RecordingSystemd, install_release, no_token, pack_release, params, read_record, tree,
    unit_text, write_site_env)

from ansible_collections.pharos.hpc.plugins.module_utils.release import activate as release_activate
from ansible_collections.pharos.hpc.plugins.module_utils.release import signature as release_signature
from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import Layout
from ansible_collections.pharos.hpc.plugins.module_utils.release.run import RunError, run
from ansible_collections.pharos.hpc.plugins.module_utils.release.systemd import Systemctl, SystemdError, parse_show


def activate(root, systemd, check=False, **overrides):
    clock = Clock()
    return run(params(root, **overrides), systemd, None, check, no_token, sleep=clock.sleep, clock=clock)


# When the releases of active_on() were signed: the same time for each, so that activating one
# after another is never a downgrade.
SIGNED = "2026-11-15T12:00:00Z"


def active_on(root, release_id, *others):
    """A host where release_id was activated (and the others installed), each installed by this
    collection, with the statement it was signed under."""
    layout = install_release(root, release_id, issued=SIGNED)
    for other in others:
        install_release(root, other, issued=SIGNED)
    systemd = RecordingSystemd(layout)
    activate(root, systemd, release_id=release_id)
    return layout, systemd


def unit_file(layout):
    return Path(layout.unit_file(SSH_UNIT)).read_text()


def test_activating_a_release_on_a_fresh_host_links_it_installs_its_unit_and_records_it_after_health(root):
    layout = install_release(root, "r1")
    systemd = RecordingSystemd(layout)
    result = activate(root, systemd, release_id="r1")
    assert result["changed"] and os.readlink(layout.current) == "releases/r1"
    assert os.readlink(layout.component_link("ssh-access")) == "current/venvs/ssh-access"
    assert unit_file(layout) == unit_text("r1")
    assert systemd.writes() == [("daemon-reload",), ("enable", SSH_UNIT), ("restart", SSH_UNIT)]
    assert read_record(layout) == {"release_id": "r1", "components": ["ssh-access"], "units": [SSH_UNIT],
                                   "state": "active"}
    assert [probe["probe"] for probe in result["health"]] == ["units"] and result["health"][0]["ok"]


def test_activating_the_active_release_again_changes_nothing_and_still_requires_health(root):
    layout, systemd = active_on(root, "r1")
    before = tree(str(root))
    result = activate(root, systemd, release_id="r1")
    assert not result["changed"] and result["steps"] == [] and tree(str(root)) == before
    assert result["health"][0]["ok"]


def test_activating_a_second_release_records_the_first_as_previous_and_restarts_the_unit(root):
    layout, systemd = active_on(root, "r1", "r2")
    result = activate(root, systemd, release_id="r2")
    assert os.readlink(layout.current) == "releases/r2" and os.readlink(layout.previous) == "releases/r1"
    assert unit_file(layout) == unit_text("r2") and read_record(layout)["release_id"] == "r2"
    assert result["diff"]["before"]["current"] == "r1" and result["diff"]["after"]["current"] == "r2"
    assert systemd.writes()[-2:] == [("daemon-reload",), ("restart", SSH_UNIT)]


def test_current_names_a_valid_release_at_every_step_of_the_switch(root, monkeypatch):
    layout, systemd = active_on(root, "r1", "r2")
    seen = []
    real_symlink, real_replace = os.symlink, os.replace

    def watch(function):
        def watched(*arguments):
            seen.append((function.__name__, os.path.isdir(layout.current)))
            function(*arguments)
            seen.append((function.__name__ + " done", os.path.isdir(layout.current)))
        return watched

    monkeypatch.setattr(release_activate.os, "symlink", watch(real_symlink))
    monkeypatch.setattr(release_activate.os, "replace", watch(real_replace))
    activate(root, systemd, release_id="r2")
    assert seen and all(valid for _call, valid in seen), seen
    assert os.readlink(layout.current) == "releases/r2"
    assert not [name for name in os.listdir(layout.base) if "pharos-new" in name]


def test_a_failed_health_check_restores_the_predecessor_and_says_it_is_active_again(root):
    layout, systemd = active_on(root, "r1", "r2")
    systemd.fails_under = {"r2"}
    calls = len(systemd.writes())
    with pytest.raises(RunError) as raised:
        activate(root, systemd, release_id="r2")
    message = str(raised.value)
    assert "Activation of release r2 failed" in message and "pharos-ssh-access-agent.service is failed" in message
    assert "The earlier release r1 is active again" in message and raised.value.result["restored"]
    assert os.readlink(layout.current) == "releases/r1" and not os.path.lexists(layout.previous)
    assert unit_file(layout) == unit_text("r1") and read_record(layout)["release_id"] == "r1"
    # r2's unit file and a restart under r2, then r1's unit file written back and a restart under r1
    assert systemd.writes()[calls:] == [("daemon-reload",), ("restart", SSH_UNIT), ("daemon-reload",), ("restart", SSH_UNIT)]
    assert systemd.active[SSH_UNIT] == "active"


def test_a_failed_first_activation_leaves_the_host_without_a_current_release_and_without_its_units(root):
    layout = install_release(root, "r1")
    systemd = RecordingSystemd(layout, fails_under={"r1"})
    with pytest.raises(RunError, match="No release was active before; the host is back to that"):
        activate(root, systemd, release_id="r1")
    assert not os.path.lexists(layout.current) and not os.path.lexists(layout.unit_file(SSH_UNIT))
    assert not os.path.lexists(layout.component_link("ssh-access")) and not os.path.exists(layout.active_record)
    assert systemd.active[SSH_UNIT] == "inactive" and systemd.enabled[SSH_UNIT] == "disabled"


def test_a_tampered_installed_release_is_refused_before_anything_changes(root):
    layout, systemd = active_on(root, "r1", "r2")
    tampered = Path(layout.release_files("r2")) / "units" / SSH_UNIT
    os.chmod(tampered.parent, 0o755)
    tampered.write_text("[Service]\nExecStart=/bin/sh -c 'curl evil'\n")
    before, calls = tree(str(root)), len(systemd.writes())
    with pytest.raises(RunError, match="no longer matches its SHA256SUMS") as raised:
        activate(root, systemd, release_id="r2")
    assert "units/pharos-ssh-access-agent.service does not match its SHA-256" in str(raised.value)
    assert tree(str(root)) == before and len(systemd.writes()) == calls


def writable(path):
    """Give root's write permission back along a read-only release, as an attacker with root would."""
    for directory in [path.parent] + list(path.parents)[:4]:
        if directory.exists():
            os.chmod(directory, 0o755)


@pytest.mark.parametrize("change", ["changed", "added", "missing", "linked"])
def test_a_virtualenv_changed_after_install_is_refused_before_anything_changes(root, change):
    layout = Layout(str(root))
    site_packages = Path(layout.venv("r2", "ssh-access")) / "lib" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / "agent.py").write_text("print('agent')\n")
    layout, systemd = active_on(root, "r1", "r2")
    python = Path(layout.venv("r2", "ssh-access")) / "bin" / "python"
    writable(site_packages / "agent.py")
    writable(python)
    if change == "changed":
        os.chmod(python, 0o755)
        python.write_text("#!/bin/sh\ncurl evil\n")
    elif change == "added":
        (site_packages / "sitecustomize.py").write_text("import os; os.system('curl evil')\n")
    elif change == "missing":
        (site_packages / "agent.py").unlink()
    else:
        python.unlink()
        python.symlink_to("/bin/sh")
    before, calls = tree(str(root)), len(systemd.writes())
    with pytest.raises(RunError, match="virtualenvs no longer hold what was installed") as raised:
        activate(root, systemd, release_id="r2")
    message = str(raised.value)
    assert {"changed": "changed ssh-access/bin/python", "added": "added ssh-access/lib/site-packages/sitecustomize.py",
            "missing": "missing ssh-access/lib/site-packages/agent.py",
            "linked": "changed ssh-access/bin/python"}[change] in message
    assert "install the release again under a new release id" in message
    assert tree(str(root)) == before and len(systemd.writes()) == calls


@pytest.mark.parametrize(("change", "named"), [
    ("planted", "added ssh-access/lib/site-packages/__pycache__/agent.cpython-313.pyc"),
    ("rewritten", "changed ssh-access/lib/site-packages/__pycache__/helper.cpython-313.pyc"),
])
def test_bytecode_changed_in_a_virtualenv_after_install_is_refused_before_anything_changes(root, change, named):
    """Python runs a .pyc whose header matches its source's mtime and size instead of the source,
    so the bytecode pip compiled at install is recorded like the source."""
    layout = Layout(str(root))
    cache = Path(layout.venv("r2", "ssh-access")) / "lib" / "site-packages" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / "helper.cpython-313.pyc").write_bytes(b"compiled at install")
    layout, systemd = active_on(root, "r1", "r2")
    writable(cache / "helper.cpython-313.pyc")
    os.chmod(cache / "helper.cpython-313.pyc", 0o644)
    if change == "planted":
        (cache / "agent.cpython-313.pyc").write_bytes(b"planted bytecode")
    else:
        (cache / "helper.cpython-313.pyc").write_bytes(b"other bytecode")
    before, calls = tree(str(root)), len(systemd.writes())
    with pytest.raises(RunError, match=named):
        activate(root, systemd, release_id="r2")
    assert tree(str(root)) == before and len(systemd.writes()) == calls


def test_a_release_recorded_before_bytecode_was_recorded_is_checked_as_it_was_recorded(root):
    """A release installed by 0.2.0 has a record without bytecode: its caches are no change."""
    layout = Layout(str(root))
    cache = Path(layout.venv("r2", "ssh-access")) / "lib" / "site-packages" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / "helper.cpython-313.pyc").write_bytes(b"compiled at install")
    layout, systemd = active_on(root, "r1", "r2")
    record = Path(layout.release("r2")) / "venvs.sha256"
    os.chmod(record.parent, 0o755)
    os.chmod(record, 0o644)
    lines = record.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "# bytecode recorded" and any("__pycache__" in line for line in lines)
    record.write_text("".join(line + "\n" for line in lines[1:] if "__pycache__" not in line), encoding="utf-8")
    assert activate(root, systemd, release_id="r2")["current"] == "r2"


def test_an_installed_release_without_a_record_of_its_virtualenvs_is_not_activated(root):
    layout, systemd = active_on(root, "r1", "r2")
    record = Path(layout.release("r2")) / "venvs.sha256"
    os.chmod(record.parent, 0o755)
    record.unlink()
    with pytest.raises(RunError, match="has no readable record of its virtualenvs"):
        activate(root, systemd, release_id="r2")


def test_rolled_back_returns_to_previous_and_the_release_it_leaves_becomes_previous(root):
    layout, systemd = active_on(root, "r1", "r2")
    activate(root, systemd, release_id="r2")
    result = activate(root, systemd, state="rolled_back")
    assert result["release_id"] == "r1" and os.readlink(layout.current) == "releases/r1"
    assert os.readlink(layout.previous) == "releases/r2" and unit_file(layout) == unit_text("r1")


def test_a_rollback_with_no_previous_release_fails_and_names_the_fix(root):
    _layout, systemd = active_on(root, "r1")
    with pytest.raises(RunError, match="nothing to roll back to. Fix: name the release to return to with release_id"):
        activate(root, systemd, state="rolled_back")


def test_a_named_rollback_to_a_release_that_is_not_installed_fails_clearly(root):
    _layout, systemd = active_on(root, "r1")
    with pytest.raises(RunError, match="Cannot roll back to release r0: it is not installed on this host"):
        activate(root, systemd, state="rolled_back", release_id="r0")


def test_stopped_stops_and_disables_the_units_and_keeps_releases_and_links(root):
    layout, systemd = active_on(root, "r1")
    result = activate(root, systemd, state="stopped", components=None)
    assert [step["step"] for step in result["steps"]] == ["stop_units", "disable_units", "record_stopped"]
    assert systemd.active[SSH_UNIT] == "inactive" and os.readlink(layout.current) == "releases/r1"
    assert read_record(layout)["state"] == "stopped" and os.path.isdir(layout.release("r1"))
    assert activate(root, systemd, state="stopped", components=None)["changed"] is False


def test_info_reports_the_host_and_changes_nothing(root):
    layout, systemd = active_on(root, "r1", "r2")
    before = tree(str(root))
    result = activate(root, systemd, state="info", components=None)
    assert (result["changed"], result["current"], result["installed"]) == (False, "r1", ["r1", "r2"])
    assert result["unit_states"][SSH_UNIT]["active"] == "active" and tree(str(root)) == before
    assert os.readlink(layout.current) == "releases/r1"


@pytest.mark.parametrize("situation", ["fresh host", "another release active"])
def test_check_mode_writes_nothing_and_predicts_the_steps_of_the_real_run(root, tmp_path, situation):
    archive = pack_release(tmp_path, "r2")
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    if situation == "another release active":
        active_on(root, "r1")
    layout = Layout(str(root))
    systemd = RecordingSystemd(layout, active=[SSH_UNIT] if situation != "fresh host" else ())
    before, calls = tree(str(root)), len(systemd.writes())
    predicted = activate(root, systemd, check=True, archive=str(archive))
    assert tree(str(root)) == before and len(systemd.writes()) == calls
    assert predicted["changed"] and predicted["diff"]["after"]["current"] == "r2"
    assert predicted["steps"][0]["step"] == "stage" and predicted["release_id"] == "r2"
    expected = ["stage", "record_signer"] + (["record_previous"] if situation != "fresh host" else []) + ["switch_current"]
    assert [step["step"] for step in predicted["steps"]][:len(expected)] == expected
    assert "health" not in predicted


def test_installing_a_release_id_again_with_another_site_env_is_refused(root, tmp_path):
    archive = pack_release(tmp_path, "r2")
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    install_release(root, "r2", fingerprint="sha256:" + "e" * 64)
    with pytest.raises(RunError, match="already installed with other inputs") as raised:
        activate(root, RecordingSystemd(Layout(str(root))), state="present", archive=str(archive))
    assert "a release id is never reused" in str(raised.value)


def test_an_archive_needs_the_sites_values_to_be_installed(root, tmp_path):
    archive = pack_release(tmp_path, "r2")
    with pytest.raises(RunError, match="site.env does not exist"):
        activate(root, RecordingSystemd(Layout(str(root))), state="present", archive=str(archive))


def test_a_component_the_release_does_not_carry_cannot_be_activated(root):
    install_release(root, "r1")
    with pytest.raises(RunError, match="does not carry the component slurm-runtime"):
        activate(root, RecordingSystemd(Layout(str(root))), release_id="r1", components=["slurm-runtime"])


def test_a_template_unit_runs_once_per_site_agent_mode(root):
    layout = install_release(root, "r1")
    write_site_env(root)
    systemd = RecordingSystemd(layout)
    result = activate(root, systemd, release_id="r1", components=["site-agent"])
    assert result["units"] == ["waldur-site-agent@order_process.service", "waldur-site-agent@membership_sync.service",
                               "waldur-site-agent@report.service"]
    assert os.path.isfile(layout.unit_file("waldur-site-agent@.service"))


SHOW = """Id=pharos-ssh-access-agent.service
ActiveState=active
UnitFileState=enabled

Id=waldur-site-agent@report.service
ActiveState=activating
UnitFileState=disabled

Id=missing.service
ActiveState=inactive
UnitFileState=
"""


def test_systemctl_show_is_read_as_each_units_active_and_enabled_state():
    assert parse_show(SHOW, [SSH_UNIT, "waldur-site-agent@report.service", "missing.service", "other.service"]) == {
        SSH_UNIT: {"active": "active", "enabled": "enabled"},
        "waldur-site-agent@report.service": {"active": "activating", "enabled": "disabled"},
        "missing.service": {"active": "inactive", "enabled": "not-found"},
        "other.service": {"active": "inactive", "enabled": "not-found"},
    }


def test_systemctl_is_asked_in_one_call_and_a_failure_names_the_command():
    argvs = []

    def run(argv):
        argvs.append(argv)
        return (0, SHOW, "") if argv[1] == "show" else (1, "", "Unit x.service not found.")

    systemd = Systemctl(run, "/usr/bin/systemctl")
    assert systemd.states([SSH_UNIT])[SSH_UNIT]["active"] == "active"
    with pytest.raises(SystemdError, match="systemctl restart -- x.service failed .exit 1.: Unit x"):
        systemd.restart(["x.service"])
    assert argvs[0] == ["/usr/bin/systemctl", "show", "--property=Id,ActiveState,UnitFileState", "--", SSH_UNIT]


# The archive on the host is checked against the pinned signer again, and against what the
# controller checked (expect_*), before anything in it is read or anything changes.
@pytest.mark.parametrize("swap", ["another release, validly signed", "the same id, another archive"])
def test_an_archive_swapped_on_the_host_after_the_controllers_check_is_refused_before_anything_changes(
        root, tmp_path, swap):
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    layout, systemd = active_on(root, "r1")
    checked = pack_release(tmp_path / "controller", "r2")
    on_host = (pack_release(tmp_path / "host", "r0") if swap.startswith("another")
               else pack_release(tmp_path / "host", "r2", units={SSH_UNIT: unit_text("swapped")}))
    before = tree(str(root))
    with pytest.raises(RunError, match="is not the one the controller checked") as raised:
        activate(root, systemd, archive=str(on_host), expect_release_id="r2",
                 expect_archive_sha256=release_signature.archive_digest(str(checked)))
    assert "Nothing was changed" in str(raised.value)
    assert tree(str(root)) == before and os.readlink(layout.current) == "releases/r1"


def test_an_archive_changed_on_the_host_after_signing_is_refused_there(root, tmp_path):
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    archive = pack_release(tmp_path, "r2")
    archive.write_bytes(archive.read_bytes() + b"\0")
    with pytest.raises(RunError, match="is not signed by the pinned release signer"):
        activate(root, RecordingSystemd(Layout(str(root))), archive=str(archive))
    assert not os.path.exists(Layout(str(root)).release("r2"))


def test_an_archive_is_not_installed_without_a_pinned_signer(root, tmp_path):
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    archive = pack_release(tmp_path, "r2")
    with pytest.raises(RunError, match="give signer_key"):
        activate(root, RecordingSystemd(Layout(str(root))), archive=str(archive), signer_key=None)


def on_a_host_running_a_newer_release(root):
    write_site_env(root, ACTIVATION_COMPONENTS="ssh-access")
    layout = install_release(root, "r2", issued="2026-11-30T12:00:00Z")
    systemd = RecordingSystemd(layout)
    activate(root, systemd, release_id="r2")
    return layout, systemd


def test_an_older_release_validly_signed_is_refused_as_a_downgrade_before_anything_changes(root, tmp_path):
    layout, systemd = on_a_host_running_a_newer_release(root)
    older = pack_release(tmp_path, "r1", issued="2026-11-01T12:00:00Z")
    before = tree(str(root))
    with pytest.raises(RunError, match="activating it is a downgrade") as raised:
        activate(root, systemd, archive=str(older))
    message = str(raised.value)
    assert "r1 was signed at 2026-11-01T12:00:00Z, before the active release r2 (signed at 2026-11-30" in message
    assert "rollback.yml" in message and "allow_downgrade: true" in message
    assert tree(str(root)) == before and os.readlink(layout.current) == "releases/r2"


def test_an_installed_older_release_is_refused_as_a_downgrade_too(root):
    layout, systemd = on_a_host_running_a_newer_release(root)
    install_release(root, "r1", issued="2026-11-01T12:00:00Z")
    with pytest.raises(RunError, match="activating it is a downgrade"):
        activate(root, systemd, release_id="r1")
    assert os.readlink(layout.current) == "releases/r2"


def test_a_downgrade_the_run_allows_explicitly_is_activated(root, tmp_path):
    layout, systemd = on_a_host_running_a_newer_release(root)
    older = pack_release(tmp_path, "r1", issued="2026-11-01T12:00:00Z")
    predicted = activate(root, systemd, check=True, archive=str(older), allow_downgrade=True)
    assert [step["step"] for step in predicted["steps"]][:4] == ["stage", "record_signer", "record_previous",
                                                                 "switch_current"]
    install_release(root, "r1", issued="2026-11-01T12:00:00Z")
    result = activate(root, systemd, release_id="r1", allow_downgrade=True)
    assert result["current"] == "r1" and os.readlink(layout.current) == "releases/r1"


def test_a_rollback_to_an_older_release_is_the_deliberate_way_back(root):
    layout, systemd = on_a_host_running_a_newer_release(root)
    install_release(root, "r1", issued="2026-11-01T12:00:00Z")
    activate(root, systemd, state="rolled_back", release_id="r1")
    assert os.readlink(layout.current) == "releases/r1"
