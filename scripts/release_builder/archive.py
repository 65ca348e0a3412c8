# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing a release: its manifest.yml, its SHA256SUMS and its deterministic archive.

The archive is a gzip'd tar whose bytes depend only on the files: sorted entries, fixed
mtimes, owner 0:0, fixed modes, no gzip name or time. module_utils/release/ reads all three
back (contents.verify(), archive.unpack()).
"""

import gzip
import os
import tarfile

import yaml

from ansible_collections.pharos.hpc.plugins.module_utils.release.contents import (
    SUMS_NAME, ReleaseError, manifest_problems, sha256_file, walk)

# 1980-01-01: the earliest time a zip (and so a wheel) can record; also used for the tar.
FIXED_MTIME = 315532800


def dump_manifest(manifest):
    """The manifest as the YAML text a release carries; load_manifest() reads it back equal."""
    problems = manifest_problems(manifest)
    if problems:
        raise ReleaseError("manifest", problems)
    return yaml.safe_dump(manifest, sort_keys=True, default_flow_style=False)


def _files(root):
    """Every file below root, as walk() lists them; ReleaseError if a symlink or special file is there."""
    files, problems = walk(root)
    if problems:
        raise ReleaseError("release %s" % root, problems)
    return files


def write_sums(root):
    """Write root/SHA256SUMS over every other file (sha256sum's format); returns its text."""
    files = _files(root)
    text = "".join("%s  %s\n" % (sha256_file(os.path.join(root, path)), path) for path in files if path != SUMS_NAME)
    with open(os.path.join(root, SUMS_NAME), "w", encoding="utf-8") as handle:
        handle.write(text)
    return text


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
    files = _files(root)
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
