# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a release archive: every member checked before anything is written, then unpacked
file by file, never through a link. The builder writes the archive (scripts/release_builder).

Pure Python, importable without Ansible.
"""

from __future__ import annotations

import os
import shutil
import tarfile

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import ReleaseError

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
