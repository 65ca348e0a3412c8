"""Hash-pinned requirements and the deterministic release archive."""

import io
import os
import tarfile

import pytest

from ansible_collections.pharos.hpc.plugins.module_utils.release import archive as release_archive, contents as release
from release_builder.archive import FIXED_MTIME, pack
from release_builder.wheels import parse_requirements, requirements_text, wheel_identity

HASH = "0" * 63 + "1"


@pytest.mark.parametrize(("file_name", "identity"), [
    ("pydantic_core-2.50.5-cp313-cp313-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
     ("pydantic-core", "2.50.5", "cp313", "cp313", "manylinux_2_17_x86_64.manylinux2014_x86_64")),
    ("waldur_site_agent-1.0.8rc9-py3-none-any.whl", ("waldur-site-agent", "1.0.8rc9", "py3", "none", "any")),
    ("docopt-0.6.2-1-py2.py3-none-any.whl", ("docopt", "0.6.2", "py2.py3", "none", "any")),
])
def test_a_wheel_file_name_gives_its_canonical_name_version_and_tags(file_name, identity):
    assert wheel_identity(file_name) == identity


def test_a_file_that_is_not_a_wheel_name_is_refused():
    with pytest.raises(release.ReleaseError, match="not name-version-python-abi-platform.whl"):
        wheel_identity("docopt-0.6.2.tar.gz")


def test_requirements_are_one_sorted_hash_pinned_line_per_distribution_and_read_back_equal():
    text = requirements_text([("Waldur_Site.Agent", "1.0.8rc9", HASH), ("anyio", "4.16.0", HASH)])
    assert text == ("anyio==4.16.0 --hash=sha256:%s\nwaldur-site-agent==1.0.8rc9 --hash=sha256:%s\n" % (HASH, HASH))
    assert parse_requirements(text) == [("anyio", "4.16.0", HASH), ("waldur-site-agent", "1.0.8rc9", HASH)]


def test_a_distribution_pinned_twice_is_refused():
    with pytest.raises(release.ReleaseError, match="pyyaml is pinned twice"):
        requirements_text([("PyYAML", "6.0.1", HASH), ("pyyaml", "6.0.4", HASH)])


@pytest.mark.parametrize("line", [
    "waldur-site-agent>=1.0.8rc9 --hash=sha256:" + HASH,
    "waldur-site-agent==1.0.8rc9",
    "waldur-site-agent==1.0.8rc9 --hash=md5:d41d8cd98f00b204e9800998ecf8427e",
    "-e git+https://example.org/agent.git#egg=agent",
    "--index-url https://evil.example.org/simple",
])
def test_a_requirements_line_that_is_not_one_exact_hash_pin_is_refused(line):
    with pytest.raises(release.ReleaseError, match="line 1 is not 'name==version --hash=sha256:<hex>'"):
        parse_requirements(line + "\n")


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    (root / "units").mkdir(parents=True)
    (root / "units" / "a.service").write_text("[Service]\n")
    (root / "SHA256SUMS").write_text("")
    (root / "bin-tool").write_text("#!/bin/sh\n")
    (root / "bin-tool").chmod(0o775)
    return root


def test_the_same_files_always_pack_to_the_same_bytes_with_fixed_owner_mode_and_time(tree, tmp_path):
    pack(str(tree), str(tmp_path / "first.tar.gz"), "r1")
    (tree / "units" / "a.service").touch()
    (tree / "units" / "a.service").chmod(0o600)
    pack(str(tree), str(tmp_path / "second.tar.gz"), "r1")
    assert (tmp_path / "first.tar.gz").read_bytes() == (tmp_path / "second.tar.gz").read_bytes()
    with tarfile.open(tmp_path / "first.tar.gz") as archive:
        members = archive.getmembers()
    assert [member.name for member in members] == ["r1", "r1/SHA256SUMS", "r1/bin-tool", "r1/units", "r1/units/a.service"]
    assert {(member.uid, member.gid, member.mtime) for member in members} == {(0, 0, FIXED_MTIME)}
    assert {member.name: oct(member.mode) for member in members if member.isfile()} == {
        "r1/SHA256SUMS": "0o644", "r1/bin-tool": "0o755", "r1/units/a.service": "0o644"}


def test_a_tree_holding_a_symlink_is_not_packed(tree, tmp_path):
    (tree / "units" / "b.service").symlink_to("/etc/passwd")
    with pytest.raises(release.ReleaseError, match="units/b.service is a symlink"):
        pack(str(tree), str(tmp_path / "r.tar.gz"), "r1")


def member(name, kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    info.size = 2 if kind == tarfile.REGTYPE else 0
    return info


EVIL_MEMBERS = {
    "a path outside its root": (member("r1/../../escaped"), "is not a plain relative path"),
    "an absolute path": (member("/tmp/escaped"), "is not a plain relative path"),
    "a dot component": (member("r1/./a"), "is not a plain relative path"),
    "a symbolic link out": (member("r1/units", tarfile.SYMTYPE, "/etc"), "is a symbolic link"),
    "a symbolic link in": (member("r1/link", tarfile.SYMTYPE, "manifest.yml"), "is a symbolic link"),
    "a hard link": (member("r1/passwd", tarfile.LNKTYPE, "/etc/passwd"), "is a hard link"),
    "a character device": (member("r1/null", tarfile.CHRTYPE), "is a character device"),
    "a block device": (member("r1/disk", tarfile.BLKTYPE), "is a block device"),
    "a FIFO": (member("r1/pipe", tarfile.FIFOTYPE), "is a FIFO"),
    "a name given twice": (member("r1/manifest.yml"), "appears twice"),
}


@pytest.mark.parametrize("case", sorted(EVIL_MEMBERS))
def test_an_archive_with_a_member_that_is_not_a_plain_file_or_directory_is_refused_before_any_write(tmp_path, case):
    evil, problem = EVIL_MEMBERS[case]
    archive_path = tmp_path / "evil.tar.gz"
    with tarfile.open(archive_path, "w:gz") as archive:
        # The harmless member first: tarfile would have written it before meeting the other.
        archive.addfile(member("r1/manifest.yml"), io.BytesIO(b"x\n"))
        archive.addfile(evil, io.BytesIO(b"x\n") if evil.isreg() else None)
    before = sorted(path.name for path in tmp_path.iterdir())
    (tmp_path / "out").mkdir()
    with pytest.raises(release.ReleaseError, match=problem):
        release_archive.unpack(str(archive_path), str(tmp_path / "out"))
    assert list((tmp_path / "out").iterdir()) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(before + ["out"])


def test_an_unpacked_archive_keeps_its_files_and_their_executable_bit(tree, tmp_path):
    pack(str(tree), str(tmp_path / "r.tar.gz"), "r1")
    (tmp_path / "out").mkdir()
    root = release_archive.unpack(str(tmp_path / "r.tar.gz"), str(tmp_path / "out"))
    assert root == str(tmp_path / "out" / "r1")
    assert oct(os.stat(os.path.join(root, "bin-tool")).st_mode & 0o777) == "0o755"
    assert oct(os.stat(os.path.join(root, "units", "a.service")).st_mode & 0o777) == "0o644"


def test_an_archive_with_two_top_directories_is_refused(tmp_path):
    archive_path = tmp_path / "two.tar.gz"
    with tarfile.open(archive_path, "w:gz") as archive:
        for name in ("r1/a", "r2/b"):
            archive.addfile(tarfile.TarInfo(name), io.BytesIO(b""))
    with pytest.raises(release.ReleaseError, match="exactly one top directory"):
        release_archive.unpack(str(archive_path), str(tmp_path / "out"))
