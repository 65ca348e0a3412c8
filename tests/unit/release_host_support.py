"""What the pharos_release unit tests share: small releases written into a temporary root, and a
recording stand-in for systemd (unit tests cannot run systemd; the molecule scenario `release`
exercises the real one).

A release written here is complete as the module's stage step leaves one (verified files,
a virtualenv directory per component, the record of what the virtualenvs hold, the
fingerprint last) but its virtualenvs hold no
packages: installing them for real is tests/integration/release's job.
"""

import json
import os
import shutil
from pathlib import Path

from ansible_collections.pharos.hpc.plugins.module_utils.release import signature as release_signature
from ansible_collections.pharos.hpc.plugins.module_utils.release.layout import Layout
from ansible_collections.pharos.hpc.plugins.module_utils.release.stage import make_read_only, record_venvs
from release_builder.archive import dump_manifest, pack, write_sums

PROJECT = Path(__file__).resolve().parents[2]
SSH_UNIT = "pharos-ssh-access-agent.service"
AGENT_TEMPLATE = "waldur-site-agent@.service"


def manifest(release_id):
    return {
        "format": 1, "release_id": release_id, "dependency_mode": "wheelhouse", "python_version": "3.13",
        "site_env_example": "site.env.example",
        "components": {
            "site-agent": {"requirements": "requirements/site-agent.txt", "units": ["units/" + AGENT_TEMPLATE],
                           "entry_points": ["waldur_site_agent"]},
            "ssh-access": {"requirements": "requirements/ssh-access.txt", "units": ["units/" + SSH_UNIT],
                           "entry_points": ["pharos-ssh-access-agent"]},
        },
    }


def unit_text(release_id, unit=SSH_UNIT):
    return "# %s of release %s\n[Service]\nUser=pharos-ssh-access\nExecStart=/opt/pharos-hpc/ssh-access/bin/agent\n" % (
        unit, release_id)


def write_release_tree(directory, release_id, units=None):
    """The files of a release (what an archive holds), with SHA256SUMS; returns the directory."""
    units = units or {SSH_UNIT: unit_text(release_id), AGENT_TEMPLATE: unit_text(release_id, AGENT_TEMPLATE)}
    files = {
        "manifest.yml": dump_manifest(manifest(release_id)),
        "site.env.example": (PROJECT / "docs" / "examples" / "site.env.example").read_text(),
        "requirements/site-agent.txt": "",
        "requirements/ssh-access.txt": "",
    }
    files.update(("units/" + name, text) for name, text in units.items())
    for path, text in files.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text)
    write_sums(str(directory))
    return directory


# The release signer the tests pin (params' signer_key).
SIGNER_PRIVATE, SIGNER_PUBLIC = release_signature.new_key_pair()


def sign_archive(archive, release_id, issued=None):
    """<archive>.sig as the release signer writes it."""
    Path(str(archive) + release_signature.SIGNATURE_SUFFIX).write_text(
        release_signature.sign(str(archive), SIGNER_PRIVATE, release_id, issued), encoding="ascii")
    return archive


def pack_release(tmp_path, release_id, units=None, issued=None):
    """A release archive as scripts/pharos-release-build packs and signs one."""
    tree = write_release_tree(tmp_path / ("tree-" + release_id) / release_id, release_id, units)
    archive = tmp_path / ("%s.tar.gz" % release_id)
    pack(str(tree), str(archive), release_id)
    return sign_archive(archive, release_id, issued)


# When the tests' installed releases were signed, unless a test says otherwise: the same time for
# each, so that activating one after another is never a downgrade.
SIGNED = "2026-11-15T12:00:00Z"


def install_release(root, release_id, fingerprint=None, units=None, issued=SIGNED):
    """A release as the stage step leaves it under root, with the signed statement it was installed
    under (its archive signed at issued), as the stage step keeps it; issued=None keeps none, as an
    earlier version of the collection did."""
    layout = Layout(str(root))
    target = Path(layout.release(release_id))
    write_release_tree(target / "release", release_id, units)
    for component in ("site-agent", "ssh-access"):
        python = Path(layout.venv(release_id, component)) / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text("")
    make_read_only(str(target / "release"))
    make_read_only(str(target / "venvs"))
    record_venvs(layout, release_id)
    if issued:
        Path(layout.statement_file(release_id)).write_text(
            release_signature.statement(release_id, "sha256:" + "1" * 64, issued), encoding="ascii")
    Path(layout.fingerprint_file(release_id)).write_text((fingerprint or "sha256:" + "0" * 64) + "\n")
    os.chmod(target, 0o555)
    return layout


def write_site_env(root, **values):
    """etc/pharos-hpc/site.env below root: the shipped example with some values replaced."""
    lines = []
    for line in (PROJECT / "docs" / "examples" / "site.env.example").read_text().splitlines():
        key = line.split("=", 1)[0]
        lines.append("%s=%s" % (key, values.pop(key)) if key in values and not line.startswith("#") else line)
    path = Path(root) / "etc" / "pharos-hpc" / "site.env"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def tree(root):
    """Every path below root with its kind, mode and content (or link target): to compare before/after."""
    found = {}
    for directory, subdirectories, names in os.walk(root):
        for name in sorted(subdirectories + names):
            path = os.path.join(directory, name)
            status = os.lstat(path)
            if os.path.islink(path):
                found[path] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[path] = ("dir", oct(status.st_mode))
            else:
                with open(path, "rb") as handle:
                    found[path] = ("file", oct(status.st_mode), handle.read())
    return found


def remove(root):
    for directory, _subdirectories, _names in os.walk(root):
        os.chmod(directory, 0o755)
    shutil.rmtree(root)


class RecordingSystemd:
    """Answers like systemctl and records every call. A unit named in fails_under exits at once
    (reads failed) when it is started while current points at one of those releases."""

    def __init__(self, layout, fails_under=(), active=(), enabled=()):
        self.layout = layout
        self.fails_under = set(fails_under)
        self.calls = []
        self.active = {unit: "active" for unit in active}
        self.enabled = {unit: "enabled" for unit in enabled}

    def writes(self):
        return [call for call in self.calls if call[0] != "states"]

    def states(self, units):
        self.calls.append(("states", tuple(units)))
        return {unit: {"active": self.active.get(unit, "inactive"), "enabled": self.enabled.get(unit, "disabled")}
                for unit in units}

    def daemon_reload(self):
        self.calls.append(("daemon-reload",))

    def enable(self, units):
        self.calls.append(("enable",) + tuple(units))
        self.enabled.update((unit, "enabled") for unit in units)

    def disable(self, units):
        self.calls.append(("disable",) + tuple(units))
        self.enabled.update((unit, "disabled") for unit in units)

    def restart(self, units):
        self.calls.append(("restart",) + tuple(units))
        current = os.readlink(self.layout.current) if os.path.islink(self.layout.current) else ""
        failing = current.rsplit("/", maxsplit=1)[-1] in self.fails_under
        self.active.update((unit, "failed" if failing else "active") for unit in units)

    def stop(self, units):
        self.calls.append(("stop",) + tuple(units))
        self.active.update((unit, "inactive") for unit in units)


class Clock:
    """A clock the probes' sleeps advance, so waiting for a unit costs no real time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def params(root, **overrides):
    values = dict(state="active", archive=None, release_id=None, components=["ssh-access"], instances=None,
                  site_env=None, root=str(root), python="python3", probes=["units"], waldur_url=None, token_file=None,
                  ca_file=None, offering_uuid=None, site_api_url=None, site_api_ca_file=None, health_timeout=10.0,
                  health_settle=3.0, signer_key=SIGNER_PUBLIC.decode("ascii"), expect_release_id=None,
                  expect_archive_sha256=None, allow_downgrade=False)
    values.update(overrides)
    return values


def read_record(layout):
    with open(layout.active_record, encoding="utf-8") as handle:
        return json.load(handle)


def no_token(path):
    raise AssertionError("no probe needing the token was selected, yet %s was read" % path)
