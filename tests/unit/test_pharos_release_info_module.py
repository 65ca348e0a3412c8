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
