"""The pharos_release_info module: what is installed and active, read without a single write."""

from module_runner import run_module as run
from release_host_support import RecordingSystemd, install_release, tree

from ansible_collections.pharos.hpc.plugins.modules import pharos_release, pharos_release_info


def test_an_installed_release_that_was_never_activated_is_listed_and_not_current(root, monkeypatch):
    layout = install_release(root, "r1")
    monkeypatch.setattr(pharos_release_info, "Systemctl", lambda *arguments: RecordingSystemd(layout))
    before = tree(str(root))
    result = run(pharos_release_info, dict(root=str(root)))
    assert result["changed"] is False
    assert (result["current"], result["previous"], result["installed"]) == (None, None, ["r1"])
    assert tree(str(root)) == before


def test_after_two_activations_it_reports_current_previous_and_the_running_units(root, monkeypatch):
    layout = install_release(root, "r1")
    install_release(root, "r2")
    systemd = RecordingSystemd(layout)
    monkeypatch.setattr(pharos_release, "Systemctl", lambda *arguments: systemd)
    monkeypatch.setattr(pharos_release_info, "Systemctl", lambda *arguments: systemd)
    for release_id in ("r1", "r2"):
        activated = run(pharos_release, dict(release_id=release_id, components=["ssh-access"], root=str(root),
                                             probes=["units"], health_settle=0, health_timeout=1))
        assert activated["changed"], activated
    before = tree(str(root))
    result = run(pharos_release_info, dict(root=str(root)))
    assert (result["current"], result["previous"], result["installed"]) == ("r2", "r1", ["r1", "r2"])
    assert result["unit_states"]["pharos-ssh-access-agent.service"]["active"] == "active"
    assert tree(str(root)) == before


def test_with_the_units_probe_it_says_which_unit_of_the_active_release_is_down_and_writes_nothing(root, monkeypatch):
    layout = install_release(root, "r1")
    systemd = RecordingSystemd(layout)
    monkeypatch.setattr(pharos_release, "Systemctl", lambda *arguments: systemd)
    monkeypatch.setattr(pharos_release_info, "Systemctl", lambda *arguments: systemd)
    activated = run(pharos_release, dict(release_id="r1", components=["ssh-access"], root=str(root),
                                         probes=["units"], health_settle=0, health_timeout=1))
    assert activated["changed"], activated
    healthy = run(pharos_release_info, dict(root=str(root), probes=["units"], probe_timeout=0))
    assert healthy["health"] == [{"probe": "units", "ok": True, "message": "holds"}]
    systemd.stop(["pharos-ssh-access-agent.service"])
    before, calls = tree(str(root)), len(systemd.calls)
    down = run(pharos_release_info, dict(root=str(root), probes=["units"], probe_timeout=0))
    (probe,) = down["health"]
    assert (probe["probe"], probe["ok"], down["changed"]) == ("units", False, False)
    assert "pharos-ssh-access-agent.service is inactive" in probe["message"]
    assert tree(str(root)) == before and not [call for call in systemd.calls[calls:] if call[0] != "states"]
    assert "health" not in run(pharos_release_info, dict(root=str(root)))
