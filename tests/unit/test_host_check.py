"""pharos.hpc.host_check reads a host's release, init and service identities with one shell command
and stops a host the collection does not support, or whose identities do not fit, naming every
reason at once. The release rule is checked on the lines the read gives; the whole step runs as a
real playbook on localhost."""

import platform
from pathlib import Path

import pytest
from test_files_in_place import play

from ansible_collections.pharos.hpc.plugins.action.host_check import unsupported


def test_debian_13_booted_with_systemd_is_supported():
    assert unsupported(["debian|Debian GNU/Linux|13|trixie", "systemd"]) is None


@pytest.mark.parametrize(("lines", "runs"), [
    (["debian|Debian GNU/Linux|12|bookworm", "systemd"], "this host runs Debian 12 (bookworm) with systemd as its init."),
    (["ubuntu|Ubuntu|24.04|noble", "systemd"], "this host runs Ubuntu 24.04 (noble) with systemd as its init."),
    (["debian|Debian GNU/Linux|13|trixie", "systemd, not booted,"],
     "this host runs Debian 13 (trixie) with systemd, not booted, as its init."),
    (["debian|Debian GNU/Linux|13|trixie", "sh"], "this host runs Debian 13 (trixie) with sh as its init."),
    ([], "this host runs unknown  () with unknown as its init."),
])
def test_another_release_or_init_is_refused_naming_what_the_host_runs(lines, runs):
    reason = unsupported(lines)
    assert reason.startswith("pharos.hpc supports Debian 13 (trixie) with systemd as its init, and " + runs), reason
    assert reason.endswith("or leave it out of the inventory (docs/production.md, \"Supported hosts\").")


def test_a_host_is_stopped_with_its_release_and_its_identities_read_in_one_step(project, tmp_path):
    results = play(project, tmp_path, [{"name": "check", "ignore_errors": True, "pharos.hpc.host_check": {"identities": [
        {"kind": "user", "name": "nobody", "id": 64998, "setting": "pharos_nobody_uid"},
        {"kind": "group", "name": "pharos-absent", "id": 0, "setting": "pharos_absent_gid"},
    ]}}])
    result = results["check"]
    release = platform.freedesktop_os_release()
    read = "|".join(release.get(key, "") for key in ("ID", "NAME", "VERSION_ID", "VERSION_CODENAME"))
    init = Path("/proc/1/comm").read_text().strip()
    assert result["os_release"] == read and result["init"].startswith(init), result
    assert len(result["conflicts"]) == 2, result["conflicts"]
    assert result["failed"] is True and result["msg"].startswith("Stopped before any change on localhost: ")
    assert ("The service accounts and groups Pharos keeps must be absent or have the Site's IDs "
            "(docs/production.md, \"Service identities\"): the account nobody exists with UID 65534") in result["msg"]
    supported = unsupported([result["os_release"], result["init"]])
    assert (supported or "") in result["msg"]


def test_a_host_whose_identities_fit_passes_on_its_identities(project, tmp_path):
    result = play(project, tmp_path, [{"name": "check", "ignore_errors": True, "pharos.hpc.host_check": {"identities": [
        {"kind": "user", "name": "nobody", "id": 65534, "setting": "pharos_nobody_uid"},
        {"kind": "group", "name": "pharos-absent", "id": 64999, "setting": "pharos_absent_gid"},
    ]}}])["check"]
    assert result["conflicts"] == [] and "Service identities" not in result.get("msg", "")
    assert result.get("failed", False) is (unsupported([result["os_release"], result["init"]]) is not None)
