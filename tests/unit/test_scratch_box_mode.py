"""The scratch role keeps a box's mode through the directory itself
(roles/scratch/files/keep_box_mode.py, run by roles/scratch/tasks/box.yml as root): the box's
owner may swap it for a link between the role's look and its change, and root must then change
nothing, least of all the link's target."""

import os
import subprocess
import sys

from conftest import PROJECT

SCRIPT = PROJECT / "roles" / "scratch" / "files" / "keep_box_mode.py"


def keep_mode(path, uid, mode):
    """The script as the task runs it: python3 -c <its text> <box> <uid> <mode>."""
    return subprocess.run([sys.executable, "-c", SCRIPT.read_text(encoding="utf-8"), str(path), str(uid), mode],
                          capture_output=True, text=True, check=False)


def test_a_box_swapped_for_a_link_is_refused_and_the_links_target_keeps_its_mode(tmp_path):
    target = tmp_path / "shadow"
    target.write_text("root's\n")
    target.chmod(0o600)
    box = tmp_path / ".runtime"
    box.symlink_to(target)
    result = keep_mode(box, os.getuid(), "711")
    assert result.returncode != 0
    assert "is no longer a real directory" in result.stderr and "nothing was changed" in result.stderr
    assert target.stat().st_mode & 0o7777 == 0o600


def test_a_box_swapped_for_a_link_to_a_directory_is_refused_too(tmp_path):
    target = tmp_path / "etc"
    target.mkdir(mode=0o755)
    box = tmp_path / ".runtime"
    box.symlink_to(target)
    assert keep_mode(box, os.getuid(), "711").returncode != 0
    assert target.stat().st_mode & 0o7777 == 0o755


def test_a_box_now_held_by_another_uid_is_refused_unchanged(tmp_path):
    box = tmp_path / ".runtime"
    box.mkdir(mode=0o700)
    result = keep_mode(box, os.getuid() + 1, "711")
    assert result.returncode != 0
    assert "not UID %d's: nothing was changed" % (os.getuid() + 1) in result.stderr
    assert box.stat().st_mode & 0o7777 == 0o700


def test_the_owners_real_box_gets_the_mode(tmp_path):
    box = tmp_path / ".runtime"
    box.mkdir(mode=0o700)
    result = keep_mode(box, os.getuid(), "711")
    assert result.returncode == 0, result.stderr
    assert box.stat().st_mode & 0o7777 == 0o711
