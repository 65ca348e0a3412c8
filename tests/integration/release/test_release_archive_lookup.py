"""The pharos.hpc.release_archive lookup on the real built release, as the release role's
preflight calls it on the controller: what it says of a sound archive, and that a tampered one
is refused naming the altered file."""

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils import release, release_archive, site_env_rules

PROJECT = Path(__file__).resolve().parents[3]
SITE_ENV = PROJECT / "release" / "site.env.example"


def tampered_copy(archive, destination):
    """The archive with one unit file altered and its SHA256SUMS left as they were."""
    with tarfile.open(archive) as original, tarfile.open(destination, "w:gz") as copy:
        for member in original.getmembers():
            data = original.extractfile(member) if member.isfile() else None
            if member.name.endswith("units/pharos-ssh-access-agent.service"):
                content = data.read().replace(b"NoNewPrivileges=yes", b"NoNewPrivileges=no")
                member.size, data = len(content), io.BytesIO(content)
            copy.addfile(member, data)
    return destination


@pytest.fixture(scope="module")
def results(archive, tmp_path_factory):
    directory = tmp_path_factory.mktemp("lookup")
    calls = {"sound": (archive, SITE_ENV), "tampered": (tampered_copy(archive, directory / "tampered.tar.gz"), SITE_ENV)}
    playbook = directory / "read.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": name, "ansible.builtin.debug": {
            "msg": "{{ lookup('pharos.hpc.release_archive', '%s', site_env='%s') }}" % (path, site_env)},
         "ignore_errors": True} for name, (path, site_env) in calls.items()]}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,",
                                "-c", "local", str(playbook)], cwd=PROJECT, env=environment,
                               capture_output=True, text=True, timeout=300, check=False)
    report = json.loads(completed.stdout)
    return {task["task"]["name"]: task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]}


def test_a_sound_archive_gives_its_release_components_and_the_install_fingerprint(results, archive, tmp_path):
    found = results["sound"]["msg"]
    manifest = release.verify(release_archive.unpack(str(archive), str(tmp_path)))
    values = site_env_rules.check_file(str(SITE_ENV), list(manifest["components"]), manifest["dependency_mode"])
    assert found["release_id"] == manifest["release_id"]
    assert found["components"] == ["site-agent", "ssh-access"]
    assert found["fingerprint"] == release.fingerprint(manifest, values)


def test_a_tampered_archive_is_refused_naming_the_altered_file(results):
    failed = results["tampered"]
    assert failed.get("failed") is True
    assert "units/pharos-ssh-access-agent.service does not match its SHA-256 in SHA256SUMS" in failed["msg"]
