# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hash-pinned requirements of a release and its deterministic archive.

A requirements file has one line per distribution, ``name==version --hash=sha256:<hex>``,
sorted by name, so that ``pip install --require-hashes --no-deps`` installs exactly the
locked wheels and nothing else. The archive is a gzip'd tar whose bytes depend only on the
files: sorted entries, fixed mtimes, owner 0:0, fixed modes, no gzip name or time.

Pure Python, importable without Ansible.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tarfile

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import ReleaseError, walk

REQUIREMENT_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s=]+) --hash=sha256:([0-9a-f]{64})\Z")
# PEP 427: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
WHEEL_NAME = re.compile(r"([^-]+)-([^-]+)(-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl\Z")
# 1980-01-01: the earliest time a zip (and so a wheel) can record; also used for the tar.
FIXED_MTIME = 315532800


def canonical_name(name):
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_identity(filename):
    """(canonical name, version, python tag, abi tag, platform tag) of a wheel's file name."""
    match = WHEEL_NAME.match(filename)
    if not match:
        raise ReleaseError("wheel %s" % filename, ["its name is not name-version-python-abi-platform.whl"])
    name, version, _build, python, abi, platform = match.groups()
    return canonical_name(name), version, python, abi, platform


def requirements_text(pins):
    """The requirements file for [(name, version, sha256)], sorted by canonical name.

    One distribution may appear once only: two wheels of it would be two hashes to one pin.
    """
    lines, seen = [], {}
    for name, version, digest in sorted(pins, key=lambda pin: canonical_name(pin[0])):
        key = canonical_name(name)
        if key in seen:
            raise ReleaseError("requirements", ["%s is pinned twice (%s and %s)" % (key, seen[key], version)])
        seen[key] = version
        lines.append("%s==%s --hash=sha256:%s\n" % (key, version, digest))
    return "".join(lines)


def parse_requirements(text):
    """[(canonical name, version, sha256)] of a requirements file written by requirements_text();
    ReleaseError naming every line that is not one exact hash-pinned distribution."""
    pins, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        match = REQUIREMENT_LINE.match(line)
        if not match:
            problems.append("line %d is not 'name==version --hash=sha256:<hex>'" % number)
            continue
        name, version, digest = match.groups()
        pins.append((canonical_name(name), version, digest))
    if problems:
        raise ReleaseError("requirements", problems)
    return pins


def _tarinfo(name, size=0, directory=False, executable=False):
    info = tarfile.TarInfo(name)
    info.mtime = FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if directory:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
    else:
        info.size, info.mode = size, 0o755 if executable else 0o644
    return info


def pack(root, archive_path, top):
    """Write root as archive_path (a .tar.gz) with every entry under top/; the same files
    always give the same bytes. Refuses a root holding symlinks or special files."""
    files, problems = walk(root)
    if problems:
        raise ReleaseError("release %s" % root, problems)
    directories = sorted({"/".join(path.split("/")[:depth]) for path in files
                          for depth in range(1, path.count("/") + 1)})
    entries = sorted([(path, True) for path in directories] + [(path, False) for path in files])
    with open(archive_path, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as archive:
        archive.addfile(_tarinfo(top, directory=True))
        for path, is_directory in entries:
            name = "%s/%s" % (top, path)
            if is_directory:
                archive.addfile(_tarinfo(name, directory=True))
                continue
            full = os.path.join(root, path)
            executable = bool(os.stat(full).st_mode & 0o100)
            with open(full, "rb") as handle:
                archive.addfile(_tarinfo(name, os.path.getsize(full), executable=executable), handle)


MEMBER_KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a character device",
                tarfile.BLKTYPE: "a block device", tarfile.FIFOTYPE: "a FIFO", tarfile.CONTTYPE: "a contiguous file"}


class ArchiveError(ReleaseError):
    """An archive that must not be unpacked; str() lists every problem, one per line."""


def member_problems(members):
    """Why each member may not be extracted: only regular files and directories, under one top
    directory, with relative names free of . and .. components, each once. Checked before
    anything is written, whatever the Python's tarfile filters."""
    problems, seen = [], set()
    for member in members:
        name = member.name
        parts = name.split("/")
        if not (member.isreg() or member.isdir()):
            problems.append("%s is %s, not a regular file or directory" % (name, MEMBER_KINDS.get(member.type, "special")))
        elif name.startswith("/") or "\\" in name or any(part in ("", ".", "..") for part in parts):
            problems.append("%s is not a plain relative path (no leading /, no . or .., no backslash)" % name)
        elif name in seen:
            problems.append("%s appears twice" % name)
        seen.add(name)
    tops = sorted({member.name.split("/", 1)[0] for member in members})
    if len(tops) != 1:
        problems.append("it must hold exactly one top directory, not %s" % tops)
    return problems


def unpack(archive_path, destination):
    """Extract a release archive into destination, a new empty directory; returns the release
    root inside it. Every member is checked first (member_problems) and nothing is written
    unless all pass; files are then created one by one, never through a link."""
    with tarfile.open(archive_path, mode="r:gz") as archive:
        members = archive.getmembers()
        problems = member_problems(members)
        if problems:
            raise ArchiveError("archive %s" % archive_path, problems)
        for member in members:
            target = os.path.join(destination, *member.name.split("/"))
            if member.isdir():
                os.makedirs(target, mode=0o755, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o755 if member.mode & 0o100 else 0o644)
            with os.fdopen(descriptor, "wb") as out:
                shutil.copyfileobj(archive.extractfile(member), out)
    return os.path.join(destination, members[0].name.split("/", 1)[0])
