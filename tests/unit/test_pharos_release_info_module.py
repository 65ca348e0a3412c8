"""The pharos_release_info module: what is installed and active, read without a single write."""

import json
import os

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


TOKEN = "9f2c4e1a7b3d5f6081a2c3d4e5f60718293a4b5c"
LDAP_PASSWORD = "Correct-Horse-Battery-Staple-7"
CENTRAL_TOKEN = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwaGFyb3MifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"


def journal_holding(*messages):
    return "\n".join(json.dumps({"__REALTIME_TIMESTAMP": str(1_796_438_000_000_000 + offset), "MESSAGE": message})
                     for offset, message in enumerate(messages))


def status_with_journal(root, monkeypatch, lines, **options):
    """The module's result with journal_lines, for one active unit whose journal holds lines, and
    the agents' secrets planted on the host."""
    layout = install_release(root, "r1")
    systemd = RecordingSystemd(layout)
    monkeypatch.setattr(pharos_release, "Systemctl", lambda *arguments: systemd)
    monkeypatch.setattr(pharos_release_info, "Systemctl", lambda *arguments: systemd)
    assert run(pharos_release, dict(release_id="r1", components=["ssh-access"], root=str(root), probes=["units"],
                                    health_settle=0, health_timeout=1))["changed"]
    secrets = root / "etc" / "pharos-hpc" / "secrets"
    secrets.mkdir(parents=True, exist_ok=True)
    (secrets / "ssh-access-site-token").write_text(TOKEN + "\n")
    (secrets / "waldur-site-agent-config.yaml").write_text(
        "offerings:\n  - name: Icarus HPC\n    backend_settings:\n      ldap:\n        bind_password: %s\n" % LDAP_PASSWORD)
    original = pharos_release_info.AnsibleModule.run_command

    def run_command(module, argv, **arguments):
        if os.path.basename(argv[0]) == "journalctl":
            return 0, journal_holding(*lines), ""
        return original(module, argv, **arguments)
    monkeypatch.setattr(pharos_release_info.AnsibleModule, "run_command", run_command)
    return run(pharos_release_info, dict(root=str(root), journal_lines=10, **options))


def test_the_agents_secrets_on_the_host_never_leave_it_in_the_journal_summary(root, monkeypatch):
    result = status_with_journal(root, monkeypatch, [
        json.dumps({"event": "error", "message": "bind as cn=pharos-agent with %s refused" % LDAP_PASSWORD}),
        "GET /api/offerings/ with %s; %s" % ("x" * 280, TOKEN)])
    (summary,) = result["journal"].values()
    assert summary["last_error"]["message"] == "bind as cn=pharos-agent with ******** refused"
    assert summary["last_log"].startswith("2026-12-05T02:33:20+00:00 GET /api/offerings/ with xxx")
    shown = json.dumps(result)
    for secret in (TOKEN, LDAP_PASSWORD, TOKEN[:10]):
        assert secret not in shown


def test_secret_shaped_values_in_a_journal_line_are_redacted_and_the_line_is_cut(root, monkeypatch):
    result = status_with_journal(root, monkeypatch, [
        json.dumps({"event": "error", "message": "token %s expired" % JWT}),
        "retrying with token=%s, Authorization: Bearer %s password: %s %s" % (
            "a1b2c3d4e5f6a7b8c9d0", "Zm9vYmFyYmF6cXV4cXV1eA", "s3cr3t!", "x" * 2000)])
    (summary,) = result["journal"].values()
    assert summary["last_error"]["message"] == "token [redacted] expired"
    line = summary["last_log"].split(" ", 1)[1]
    assert line.startswith("retrying with token=[redacted], Authorization: Bearer [redacted] password: [redacted] xxx")
    assert len(line) == 300
    shown = json.dumps(result)
    for secret in ("a1b2c3d4e5f6a7b8c9d0", "Zm9vYmFyYmF6cXV4cXV1eA", "s3cr3t!", JWT[:20]):
        assert secret not in shown


def test_the_secrets_of_the_token_directory_are_masked_too(root, tmp_path, monkeypatch):
    central = tmp_path / "tokens"
    central.mkdir()
    (central / "site-agent-token").write_text(CENTRAL_TOKEN + "\n")
    result = status_with_journal(root, monkeypatch, ["sent %s to Waldur" % CENTRAL_TOKEN],
                                 token_directory=str(central))
    (summary,) = result["journal"].values()
    assert summary["last_log"] == "2026-12-05T02:33:20+00:00 sent ******** to Waldur"
