"""A real wheelhouse release of the upstream Waldur Site agent and our stand-in SSH access agent,
built by scripts/pharos-release-build from PyPI, then checked and installed offline.

The archive (conftest.py) is built for the Python running the tests (the offline install must
run here) and cached under .cache/release-test/, keyed by everything that shapes it, so a re-run
only checks and installs. The first build downloads about 14 MB.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(PROJECT / "collections"))

# pylint: disable=wrong-import-position
from ansible_collections.pharos.hpc.plugins.module_utils import site_env_rules  # noqa: E402
from ansible_collections.pharos.hpc.plugins.module_utils.release import archive as release_archive, contents as release  # noqa: E402
from release_builder.wheels import parse_requirements, wheel_identity  # noqa: E402

SPEC = PROJECT / "tests" / "integration" / "release" / "components.yml"
BUILDER = PROJECT / "scripts" / "pharos-release-build"
OFFLINE = ["--isolated", "--disable-pip-version-check", "--no-input", "--no-cache-dir", "--no-index",
           "--require-hashes", "--no-deps", "--only-binary=:all:"]


@pytest.fixture(scope="session")
def root(archive, tmp_path_factory):
    return Path(release_archive.unpack(str(archive), str(tmp_path_factory.mktemp("release"))))


def test_the_archive_holds_one_release_whose_sha256sums_check(root):
    completed = subprocess.run(["sha256sum", "--check", "--strict", "--quiet", "SHA256SUMS"], cwd=root,
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    manifest = release.verify(str(root))
    assert manifest["release_id"] == root.name and manifest["dependency_mode"] == "wheelhouse"
    assert sorted(manifest["components"]) == ["site-agent", "ssh-access"]


def test_every_wheel_matches_its_requirements_line_and_every_line_has_its_wheel(root):
    wheels = {wheel_identity(path.name)[:2]: release.sha256_file(str(path))
              for path in (root / "wheelhouse").iterdir()}
    pinned = {}
    for requirements in (root / "requirements").iterdir():
        for name, version, digest in parse_requirements(requirements.read_text()):
            assert wheels.get((name, version)) == digest, "%s: %s==%s" % (requirements.name, name, version)
            pinned[(name, version)] = digest
    assert set(pinned) == set(wheels)
    standin = re.search(r'(?m)^version = "([^"]+)"$',
                        (PROJECT / "tests/fixtures/ssh_access_agent/pyproject.toml").read_text()).group(1)
    assert ("waldur-site-agent", "1.0.8rc9") in pinned and ("pharos-ssh-access-standin", standin) in pinned
    # The stand-in's own dependencies, at the versions the Site agent resolves to.
    assert {("httpx", "0.28.1"), ("ldap3", "2.9.1")} <= set(pinned)


def test_the_shipped_site_env_example_passes_against_the_release_manifest(root):
    manifest = release.verify(str(root))
    values = site_env_rules.check_file(str(root / "site.env.example"), components=list(manifest["components"]),
                                       dependency_mode=manifest["dependency_mode"])
    assert release.fingerprint(manifest, values).startswith("sha256:")


def install_offline(root, component, venv):
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    completed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", *OFFLINE, "--find-links", str(root / "wheelhouse"),
         "-r", str(root / "requirements" / ("%s.txt" % component))],
        capture_output=True, text=True, timeout=600, check=False,
        env={"PATH": os.environ["PATH"], "HOME": str(venv)})
    assert completed.returncode == 0, completed.stderr
    # --no-deps installs only what is pinned: pip check proves the pins are the whole closure.
    checked = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check"],
                             capture_output=True, text=True, timeout=120, check=False)
    assert checked.returncode == 0, checked.stdout


def test_the_site_agent_installs_offline_from_the_wheelhouse_and_its_console_script_runs(root, tmp_path):
    install_offline(root, "site-agent", tmp_path / "site-agent")
    completed = subprocess.run([str(tmp_path / "site-agent" / "bin" / "waldur_site_agent"), "--help"],
                               capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert "--mode" in completed.stdout and "--config-file" in completed.stdout


def test_the_ssh_access_stand_in_installs_offline_and_runs_a_cycle_without_showing_its_token(root, tmp_path):
    install_offline(root, "ssh-access", tmp_path / "ssh-access")
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "ssh-access-site-token").write_text("psb_not-a-real-token\n")
    completed = subprocess.run(
        [str(tmp_path / "ssh-access" / "bin" / "pharos-ssh-access-agent"), "--once"], capture_output=True, text=True,
        timeout=60, check=False, env=dict(PATH=os.environ["PATH"], CREDENTIALS_DIRECTORY=str(credentials),
                                          STATE_DIRECTORY=str(tmp_path), CENTRAL_SITE_API_URL="https://127.0.0.1:9"))
    # Its dependencies import and it reaches for the Site API, which nothing serves here.
    assert completed.returncode == 1, completed.stderr
    event = json.loads(completed.stdout)
    assert (event["event"], event["stage"]) == ("error", "site_api")
    assert "psb_" not in completed.stdout + completed.stderr


def test_a_second_build_of_the_same_release_id_is_refused(archive):
    completed = subprocess.run(
        [sys.executable, str(BUILDER), "--spec", str(SPEC), "--release-id", archive.name[:-7],
         "--output-dir", str(archive.parent)], capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 1
    assert "a release id is built once; choose a new --release-id" in completed.stderr


def test_a_spec_whose_build_environment_is_not_strings_is_refused_before_any_download(tmp_path):
    spec = tmp_path / "spec.yml"
    spec.write_text("dependency_mode: wheelhouse\nsite_env_example: x\ncomponents:\n"
                    "  site-agent:\n    build_from_source: [PyYAML==6.0.1]\n"
                    "    build_environment: {PYYAML_FORCE_LIBYAML: 0}\n")
    completed = subprocess.run(
        [sys.executable, str(BUILDER), "--spec", str(spec), "--release-id", "refused", "--output-dir",
         str(tmp_path / "dist")], capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 1
    assert "component site-agent: build_environment maps variable names to strings (quote numbers)" in completed.stderr
    assert not (tmp_path / "dist").exists()
