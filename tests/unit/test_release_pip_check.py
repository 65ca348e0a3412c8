"""Staging's pip check (stage.check_closure) in a real virtualenv: it still finds a requirement
the pins left out, and it never runs a wheel's .pth file, which site would run as root."""

import subprocess
import sys
import venv

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.release import stage

VERSION = "%d.%d" % sys.version_info[:2]
MANIFEST = {"release_id": "2026.12.0", "python_version": VERSION}


def run(argv):
    completed = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    return completed.returncode, completed.stdout, completed.stderr


def installed(site_packages, name, requires=()):
    """A distribution as pip installs one: its dist-info with METADATA and its requirements."""
    info = site_packages / f"{name}-1.0.dist-info"
    info.mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def component(tmp_path_factory):
    directory = tmp_path_factory.mktemp("component")
    venv.create(directory / "venv", with_pip=True)
    site_packages = directory / "venv" / "lib" / f"python{VERSION}" / "site-packages"
    marker = directory / "pth-ran"
    (site_packages / "planted.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n")
    installed(site_packages, "agent")
    return directory / "venv", site_packages, marker


def test_a_whole_closure_passes_and_no_pth_file_runs(component):
    venv_path, _site_packages, marker = component
    stage.check_closure(run, str(venv_path), "ssh-access", MANIFEST)
    assert not marker.exists(), "pip check ran the .pth file"
    # The same virtualenv's python with site processing runs it: the file is live.
    subprocess.run([str(venv_path / "bin" / "python"), "-c", "pass"], check=True)
    assert marker.read_text() == "ran"
    marker.unlink()


def test_a_requirement_the_pins_left_out_stops_staging(component):
    venv_path, site_packages, marker = component
    installed(site_packages, "needy", requires=["leftout"])
    try:
        with pytest.raises(stage.StageError, match="needy 1.0 requires leftout, which is not installed"):
            stage.check_closure(run, str(venv_path), "ssh-access", MANIFEST)
    finally:
        for path in sorted((site_packages / "needy-1.0.dist-info").iterdir()):
            path.unlink()
        (site_packages / "needy-1.0.dist-info").rmdir()
    assert not marker.exists()
