# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Staging a release on a host: check the archive, unpack it, install each component offline,
make the tree read-only and record its fingerprint (docs/release.md, "On the host").

A virtualenv's scripts name their interpreter by absolute path, so the venvs are built where
they stay, in /opt/pharos-hpc/releases/<id>/venvs/. The fingerprint file is written last: a
release directory without it is an interrupted stage, never activated, and the next run
removes it and stages again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile

from ansible_collections.pharos.hpc.plugins.module_utils.release.archive import unpack
from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import ReleaseError, sha256_bytes, verify

# What each virtualenv held when it was installed, written before the fingerprint.
VENV_SUMS_NAME = "venvs.sha256"
# The first line of a record that holds the bytecode too. A record written by an earlier version
# of the collection left bytecode out, and a release installed then is checked as it was recorded.
BYTECODE_RECORDED = "# bytecode recorded"
MAX_NAMED_PATHS = 10

# Staging runs as root, and no code of a release's wheels may run then. pip runs by this program,
# given the directory of a copy of pip taken before any wheel was installed, the virtualenv's
# site-packages and pip's arguments. A wheel may put any file into site-packages, pip's own
# among them, so pip is imported from the copy, and every other top-level module from the
# standard library only: a module that would come from site-packages (socks, attr and the
# other optional imports of pip and its vendored libraries) is missing, as if not installed.
# The virtualenv's site-packages comes after the standard library, so pip still sees what is
# installed there. python runs with -I (no PYTHON* variables, no user site, no current
# directory on the path); pip check runs with -S too, so no .pth file of a wheel runs.
PIP_APART_FROM_THE_RELEASE = """\
import importlib.machinery, os, runpy, sys
pip_directory, site_packages = (os.path.realpath(path) + os.sep for path in sys.argv[1:3])
sys.path.insert(0, sys.argv[1])
if sys.argv[2] not in sys.path:
    sys.path.append(sys.argv[2])


def found_in(spec, directory):
    places = [spec.origin] + list(spec.submodule_search_locations or ()) if spec else []
    return [place for place in places if place and os.path.realpath(place).startswith(directory)]


class PipAndStandardLibraryOnly:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name)
        allowed = found_in(spec, pip_directory) if name == "pip" else not found_in(spec, site_packages)
        if not allowed:
            raise ModuleNotFoundError("staging imports %s from neither the standard library nor its own pip" % name,
                                      name=name)
        return spec


sys.meta_path.insert(sys.meta_path.index(importlib.machinery.PathFinder), PipAndStandardLibraryOnly)
sys.argv = ["pip"] + sys.argv[3:]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
"""
PIP_OFFLINE = ["--isolated", "--disable-pip-version-check", "--no-input", "--no-cache-dir",
               "--require-hashes", "--no-deps", "--only-binary=:all:"]


class StageError(Exception):
    """The release cannot be staged or used; the message names the release, the cause and the fix."""


def release_units(manifest, components):
    """{unit file name: component} for the components' unit files."""
    return {path.split("/", 1)[1]: name for name, component in sorted(manifest["components"].items())
            if name in components for path in component["units"]}


def inspect_archive(archive):
    """(manifest, {unit file name: bytes}) of an archive, after its SHA256SUMS and manifest hold.

    It unpacks into a temporary directory outside the managed root and removes it, so check mode
    refuses a tampered archive exactly as a real run does, and writes nothing on the host's tree.
    """
    if not os.path.isfile(archive):
        raise StageError("The release archive %s does not exist on this host. Fix: copy the archive there first "
                         "(ansible.builtin.copy) and give its path as archive." % archive)
    scratch = tempfile.mkdtemp(prefix="pharos-release-check-")
    try:
        try:
            root = unpack(archive, scratch)
            manifest = verify(root)
        except (ReleaseError, OSError, ValueError) as error:
            raise StageError("The release archive %s is refused: %s" % (archive, error)) from None
        units = {}
        for name in release_units(manifest, manifest["components"]):
            with open(os.path.join(root, "units", name), "rb") as handle:
                units[name] = handle.read()
        return manifest, units
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def installed_manifest(layout, release_id, components=()):
    """The manifest of an installed release after SHA256SUMS holds again and every named component
    has its virtualenv, holding what was installed; StageError naming every problem otherwise:
    an activation runs only what was checked."""
    try:
        manifest = verify(layout.release_files(release_id))
    except ReleaseError as error:
        raise StageError("Installed release %s no longer matches its SHA256SUMS, so it is not activated: %s\nFix: "
                         "install the release again under a new release id from a trusted archive."
                         % (release_id, error)) from None
    unknown = sorted(set(components) - set(manifest["components"]))
    if unknown:
        raise StageError("Release %s does not carry the component%s %s (it carries %s): a component the manifest does "
                         "not list cannot be activated. Fix: correct components or ACTIVATION_COMPONENTS."
                         % (release_id, "s" if len(unknown) > 1 else "", ", ".join(unknown),
                            ", ".join(sorted(manifest["components"]))))
    for component in components:
        python = os.path.join(layout.venv(release_id, component), "bin", "python")
        if not os.path.exists(python):
            raise StageError("Release %s has no virtualenv for %s (%s is missing). Fix: install the release again under a "
                             "new release id." % (release_id, component, python))
    if components:
        verify_venvs(layout, release_id, components)
    return manifest


def venv_entries(venvs):
    """{path below venvs: "sha256:<hex>" for a file, "link:<target>" for a link} of every entry
    but directories. Nothing is followed: a link is recorded as a link. Bytecode is recorded
    too: Python runs a .pyc whose header matches its source instead of the source, and the tree
    is read-only, so no bytecode is written after install."""
    entries = {}
    for directory, subdirectories, names in os.walk(venvs):
        descend = []
        for name in sorted(subdirectories + names):
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, venvs)
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                entries[relative] = "link:" + os.readlink(full)
            elif stat.S_ISDIR(mode):
                descend.append(name)
            elif stat.S_ISREG(mode):
                with open(full, "rb") as handle:
                    entries[relative] = sha256_bytes(handle.read())
            else:
                entries[relative] = "special"
        subdirectories[:] = [name for name in subdirectories if name in descend]
    return entries


def _is_bytecode(path):
    return "__pycache__" in path.split(os.sep)[:-1]


def record_venvs(layout, release_id):
    path = os.path.join(layout.release(release_id), VENV_SUMS_NAME)
    entries = venv_entries(layout.venvs(release_id))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(BYTECODE_RECORDED + "\n")
        handle.writelines("%s  %s\n" % (entries[name], name) for name in sorted(entries))
    os.chmod(path, 0o444)


def _named(paths):
    shown = ", ".join(paths[:MAX_NAMED_PATHS])
    return shown + (" and %d more" % (len(paths) - MAX_NAMED_PATHS) if len(paths) > MAX_NAMED_PATHS else "")


def verify_venvs(layout, release_id, components):
    """StageError unless each component's virtualenv holds exactly what was installed."""
    fix = "Fix: install the release again under a new release id from a trusted archive."
    try:
        with open(os.path.join(layout.release(release_id), VENV_SUMS_NAME), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        recorded = dict(reversed(line.split("  ", 1)) for line in lines if line.strip() and not line.startswith("#"))
    except (OSError, ValueError):
        raise StageError("Release %s has no readable record of its virtualenvs (%s), so what would run cannot be "
                         "checked and it is not activated. %s" % (release_id, VENV_SUMS_NAME, fix)) from None
    current = venv_entries(layout.venvs(release_id))
    if BYTECODE_RECORDED not in lines[:1]:
        current = {name: digest for name, digest in current.items() if not _is_bytecode(name)}
    problems = []
    for component in sorted(components):
        prefix = component + os.sep
        before = {name: digest for name, digest in recorded.items() if name.startswith(prefix)}
        now = {name: digest for name, digest in current.items() if name.startswith(prefix)}
        changed = sorted(name for name in before.keys() & now.keys() if before[name] != now[name])
        missing, added = sorted(before.keys() - now.keys()), sorted(now.keys() - before.keys())
        for what, paths in (("changed", changed), ("missing", missing), ("added", added)):
            if paths:
                problems.append("%s %s" % (what, _named(paths)))
    if problems:
        raise StageError("Release %s's virtualenvs no longer hold what was installed (%s), so it is not activated. %s"
                         % (release_id, "; ".join(problems), fix))


def unit_digests(layout, release_id, manifest, components):
    """{unit file name: sha256} of an installed release's unit files for the components."""
    digests = {}
    for name in release_units(manifest, components):
        with open(os.path.join(layout.release_files(release_id), "units", name), "rb") as handle:
            digests[name] = sha256_bytes(handle.read())
    return digests


def _writable(path):
    for directory, _subdirectories, _names in os.walk(path):
        os.chmod(directory, 0o755)


def remove_tree(path):
    """Remove a (possibly read-only) tree."""
    if os.path.lexists(path):
        _writable(path)
        shutil.rmtree(path)


def make_read_only(path):
    """Take write permission from every file and directory below path, symlinks untouched."""
    for directory, subdirectories, names in os.walk(path, topdown=False):
        for name in names:
            full = os.path.join(directory, name)
            mode = os.lstat(full).st_mode
            if stat.S_ISREG(mode):
                os.chmod(full, stat.S_IMODE(mode) & ~0o222)
        for name in subdirectories:
            full = os.path.join(directory, name)
            if not os.path.islink(full):
                os.chmod(full, 0o555)
    os.chmod(path, 0o555)


def _run(run, argv, what, release_id):
    rc, out, err = run(argv)
    if rc != 0:
        raise StageError("Staging release %s failed while %s (exit %d): %s. Fix: %s" % (
            release_id, what, rc, (err or out).strip()[-1500:], "see the cause above; nothing was activated and the "
            "incomplete release is removed on the next run"))
    return out


def site_packages(venv, manifest):
    return os.path.join(venv, "lib", "python" + manifest["python_version"], "site-packages")


@contextlib.contextmanager
def trusted_pip(venv, manifest):
    """A directory holding a copy of the pip that python -m venv put into the virtualenv, taken
    before any wheel is installed there and removed afterwards. It is root's own (mkdtemp makes
    it 0700)."""
    source = os.path.join(site_packages(venv, manifest), "pip")
    directory = tempfile.mkdtemp(prefix="pharos-release-pip-")
    try:
        try:
            shutil.copytree(source, os.path.join(directory, "pip"), symlinks=True)
        except OSError as error:
            raise StageError("Release %s: the virtualenv %s has no pip of its own to install with (%s). Fix: install "
                             "python3-venv, which provides ensurepip, on this host." % (
                                 manifest["release_id"], venv, getattr(error, "strerror", None) or error)) from None
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _pip(python, venv, manifest, pip_directory, arguments, site):
    return [python, "-I"] + ([] if site else ["-S"]) + ["-c", PIP_APART_FROM_THE_RELEASE, pip_directory,
                                                        site_packages(venv, manifest)] + arguments


def install_component(run, python, release_root, venv, component, manifest, index_url=None):
    """python -m venv, then pip isolated with --require-hashes --no-deps --only-binary=:all: from
    the release's wheelhouse (and index mode's approved index), then pip check; pip runs from a
    copy taken before the wheels land, and imports nothing else of theirs."""
    release_id = manifest["release_id"]
    _run(run, [python, "-I", "-m", "venv", venv], "creating the virtualenv of %s (on Debian, python3-venv provides "
         "ensurepip)" % component, release_id)
    arguments = ["install"] + PIP_OFFLINE
    if manifest["dependency_mode"] == "index":
        arguments += ["--index-url", index_url]
    else:
        arguments += ["--no-index"]
    arguments += ["--find-links", os.path.join(release_root, "wheelhouse"),
                  "-r", os.path.join(release_root, manifest["components"][component]["requirements"])]
    with trusted_pip(venv, manifest) as pip_directory:
        # The virtualenv's own python, with site processing, as the virtualenv is new: its python
        # and what site reads as it starts are what python -m venv made, and site sets the prefix
        # pip installs into.
        _run(run, _pip(os.path.join(venv, "bin", "python"), venv, manifest, pip_directory, arguments, site=True),
             "installing %s offline from its hash-pinned requirements" % component, release_id)
        check_closure(run, python, venv, component, manifest, pip_directory)


def check_closure(run, python, venv, component, manifest, pip_directory):
    """pip check of the component's virtualenv by the host's python and the pip in pip_directory,
    without site processing: no .pth file of a wheel runs, and no module of a wheel is imported.
    Not by the virtualenv's python: a wheel's script named python replaces it at install."""
    _run(run, _pip(python, venv, manifest, pip_directory, ["check"], site=False),
         "checking that %s's pins are its whole closure (pip check)" % component, manifest["release_id"])


def python_version(run, python):
    out = _run(run, [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], "asking %s for its version"
               % python, "(any)")
    return out.strip()


def stage(layout, archive, fingerprint, run, python, index_url=None, statement=None):
    """Stage the archive as layout.release(<id>) with a virtualenv per component, keeping the
    signed statement it was checked against; returns the manifest."""
    scratch = None
    os.makedirs(layout.releases, mode=0o755, exist_ok=True)
    manifest, _units = inspect_archive(archive)
    release_id = manifest["release_id"]
    target = layout.release(release_id)
    if os.path.isfile(layout.fingerprint_file(release_id)):
        raise StageError("Release %s is already installed; it is never staged twice." % release_id)
    version = python_version(run, python)
    if version != manifest["python_version"]:
        raise StageError("Release %s was built for Python %s, and %s is Python %s: its wheels would not install. Fix: "
                         "give python the %s interpreter, or build the release for %s."
                         % (release_id, manifest["python_version"], python, version, manifest["python_version"], version))
    remove_tree(target)
    try:
        os.makedirs(target, mode=0o755)
        scratch = tempfile.mkdtemp(prefix=".unpack-", dir=target)
        os.rename(unpack(archive, scratch), layout.release_files(release_id))
        os.rmdir(scratch)
        manifest = verify(layout.release_files(release_id))
        for component in sorted(manifest["components"]):
            install_component(run, python, layout.release_files(release_id), layout.venv(release_id, component),
                              component, manifest, index_url)
        make_read_only(os.path.join(target, "release"))
        make_read_only(os.path.join(target, "venvs"))
        record_venvs(layout, release_id)
        if statement is not None:
            with open(layout.statement_file(release_id), "w", encoding="ascii") as handle:
                handle.write(statement)
            os.chmod(layout.statement_file(release_id), 0o444)
        with open(layout.fingerprint_file(release_id), "w", encoding="ascii") as handle:
            handle.write(fingerprint + "\n")
        os.chmod(layout.fingerprint_file(release_id), 0o444)
        os.chmod(target, 0o555)
    except ReleaseError as error:
        remove_tree(target)
        raise StageError("Release %s is refused after unpacking: %s" % (release_id, error)) from None
    except Exception:
        remove_tree(target)
        raise
    return manifest
