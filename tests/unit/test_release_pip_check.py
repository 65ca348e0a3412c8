"""Staging's pip install and pip check in a real virtualenv: pip check still finds a requirement
the pins left out, and staging, which runs as root, runs no code of the release's wheels: not a
.pth file, not a module named like the standard library or like an optional import of pip's,
not a wheel's replacement of pip's own code."""

import base64
import hashlib
import subprocess
import sys
import venv
import zipfile
from types import SimpleNamespace

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
    with stage.trusted_pip(str(venv_path), MANIFEST) as pip_directory:
        stage.check_closure(run, sys.executable, str(venv_path), "ssh-access", MANIFEST, pip_directory)
    assert not marker.exists(), "pip check ran the .pth file"
    # The same virtualenv's python with site processing runs it: the file is live.
    subprocess.run([str(venv_path / "bin" / "python"), "-c", "pass"], check=True)
    assert marker.read_text() == "ran"
    marker.unlink()


def test_a_requirement_the_pins_left_out_stops_staging(component):
    venv_path, site_packages, marker = component
    installed(site_packages, "needy", requires=["leftout"])
    try:
        with stage.trusted_pip(str(venv_path), MANIFEST) as pip_directory, \
                pytest.raises(stage.StageError, match="needy 1.0 requires leftout, which is not installed"):
            stage.check_closure(run, sys.executable, str(venv_path), "ssh-access", MANIFEST, pip_directory)
    finally:
        for path in sorted((site_packages / "needy-1.0.dist-info").iterdir()):
            path.unlink()
        (site_packages / "needy-1.0.dist-info").rmdir()
    assert not marker.exists()


# Staging runs as root, and no code of a release's wheels may run before its units run it as
# their own account. Each wheel below plants a way pip could be made to run it.
def module_writing(marker):
    return f"open({str(marker)!r}, 'w').close()\n"


def optparse_writing(marker):
    """optparse, which pip imports, shadowed: writes the marker, then stands aside for the real one."""
    return module_writing(marker) + (
        "import importlib.util, sys, sysconfig\n"
        "spec = importlib.util.spec_from_file_location('optparse', sysconfig.get_paths()['stdlib'] + '/optparse.py')\n"
        "sys.modules['optparse'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(sys.modules['optparse'])\n")


def wheel(wheelhouse, name, files):
    """A pure-Python wheel as a build backend writes one; (file name, sha256)."""
    info = f"{name}-1.0.dist-info"
    files = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for member, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{member},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
    path = wheelhouse / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            info = zipfile.ZipInfo(member)
            info.external_attr = (0o100755 if ".data/scripts/" in member else 0o100644) << 16
            archive.writestr(info, text)
    return path.name, hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    """One component staged by the real install_component from a wheelhouse of hostile wheels,
    with the names of the markers written while staging (the tests run in any order)."""
    directory = tmp_path_factory.mktemp("staged")
    markers = directory / "markers"
    markers.mkdir()
    release = directory / "release"
    (release / "wheelhouse").mkdir(parents=True)
    (release / "requirements").mkdir()
    wheels = {
        "shadow": {"optparse.py": optparse_writing(markers / "optparse")},
        "optional": {"socks.py": module_writing(markers / "socks"),
                     "attr/__init__.py": module_writing(markers / "attr"),
                     "_manylinux.py": module_writing(markers / "_manylinux")},
        "hooks": {"hooks.pth": "import os; " + module_writing(markers / "pth")},
        "pipfix": {"pip/_internal/commands/check.py": module_writing(markers / "pip")},
        "interpreter": {"interpreter-1.0.data/scripts/python": f"#!/bin/sh\n: > {markers / 'python'}\n"
                                                                 f"exec {sys.executable} \"$@\"\n"},
    }
    pins = []
    for name, files in wheels.items():
        _file, digest = wheel(release / "wheelhouse", name, files)
        pins.append(f"{name}==1.0 --hash=sha256:{digest}\n")
    (release / "requirements" / "agent.txt").write_text("".join(pins))
    manifest = {"release_id": "2026.12.0", "python_version": VERSION, "dependency_mode": "wheelhouse",
                "components": {"agent": {"requirements": "requirements/agent.txt"}}}
    venv_path = directory / "venvs" / "agent"
    refused = None
    try:
        stage.install_component(run, sys.executable, str(release), str(venv_path), "agent", manifest)
    except stage.StageError as error:
        refused = error
    return SimpleNamespace(venv=venv_path, markers=markers, refused=refused,
                           site_packages=venv_path / "lib" / f"python{VERSION}" / "site-packages",
                           ran=sorted(path.name for path in markers.iterdir()))


def test_every_hostile_wheel_is_installed_and_the_component_stages(staged):
    assert staged.refused is None
    for planted in ("optparse.py", "socks.py", "attr/__init__.py", "_manylinux.py", "hooks.pth"):
        assert (staged.site_packages / planted).is_file(), planted
    assert "markers" in (staged.site_packages / "pip" / "_internal" / "commands" / "check.py").read_text()


def test_a_wheel_module_named_like_the_standard_library_does_not_run_while_staging(staged):
    assert "optparse" not in staged.ran, "pip imported the wheel's optparse.py as root"


def test_a_wheel_module_pip_imports_when_present_does_not_run_while_staging(staged):
    """socks (requests), attr (rich) and _manylinux (packaging, from pip 24 on in pip check)."""
    assert {"socks", "attr", "_manylinux"}.isdisjoint(staged.ran), "pip imported a wheel's module as root"


def test_a_wheel_that_replaces_pips_own_code_does_not_run_it_while_staging(staged):
    assert "pip" not in staged.ran, "pip ran the wheel's copy of pip's own code as root"


def test_a_wheel_script_that_replaces_the_virtualenvs_python_does_not_run_while_staging(staged):
    assert (staged.venv / "bin" / "python").read_text().startswith("#!/bin/sh"), "the wheel did not replace python"
    assert "python" not in staged.ran, "staging ran the wheel's bin/python as root"


def test_a_wheel_pth_file_does_not_run_while_staging(staged):
    assert "pth" not in staged.ran, "a wheel's .pth file ran as root"


def test_the_hostile_modules_are_live_for_the_component_itself(staged):
    """What staging keeps out is what the component's own python runs: the plants are real."""
    subprocess.run([str(staged.venv / "bin" / f"python{VERSION}"), "-c", "import socks, attr"], check=True)
    subprocess.run([str(staged.venv / "bin" / "python"), "-c", "pass"], check=True)
    assert {"pth", "socks", "attr", "python"} <= {path.name for path in staged.markers.iterdir()}
