"""pharos.hpc.file reads a directory or file already as the step wants it, or a path already
absent, with one shell command, and leaves every other case to the builtin module: a path to make,
mend or remove, a link, an option beyond the plain ones. Each case runs a real playbook on
localhost against a temporary directory; a result with in_place came from the shell command, one
without from the builtin module."""

import os

import pytest
from test_files_in_place import GROUP, OWNER, play


def path_step(name, path, **args):
    return {"name": name, "pharos.hpc.file": dict({"path": str(path)}, **args)}


def test_paths_as_wanted_are_read_without_a_module_run(project, tmp_path):
    (tmp_path / "directory").mkdir(mode=0o750)
    os.chmod(tmp_path / "directory", 0o1750)
    (tmp_path / "key").write_text("k")
    os.chmod(tmp_path / "key", 0o600)
    results = play(project, tmp_path, [
        path_step("directory", tmp_path / "directory", state="directory", owner=OWNER, group=GROUP, mode="01750"),
        path_step("directory by IDs", tmp_path / "directory", state="directory", owner=str(os.getuid()),
                  group=str(os.getgid())),
        path_step("file without a state", tmp_path / "key", owner=OWNER, mode="0600"),
        path_step("absent", tmp_path / "never-made", state="absent"),
    ])
    for name, result in results.items():
        assert result["changed"] is False and result.get("in_place") is True, (name, result)
    assert results["directory"]["mode"] == "01750" and results["directory"]["state"] == "directory"
    assert results["file without a state"]["state"] == "file"
    assert results["absent"]["state"] == "absent"


def test_check_mode_leaves_each_drift_to_the_builtin_module_and_changes_nothing(project, tmp_path):
    (tmp_path / "loose").mkdir(mode=0o755)
    (tmp_path / "leftover").write_text("old")
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    results = play(project, tmp_path, [
        path_step("another mode", tmp_path / "loose", state="directory", mode="0700"),
        path_step("another owner", tmp_path / "loose", state="directory", owner="nobody"),
        path_step("another group by GID", tmp_path / "loose", state="directory", group="65534"),
        path_step("a file to remove", tmp_path / "leftover", state="absent"),
        path_step("a dangling link to remove", tmp_path / "dangling", state="absent"),
        path_step("a directory to make", tmp_path / "new", state="directory", mode="0755"),
        path_step("a file where a directory belongs", tmp_path / "leftover", state="directory"),
    ], "--check")
    refused = results.pop("a file where a directory belongs")
    assert refused.get("failed") is True and "in_place" not in refused, refused
    for name, result in results.items():
        assert result["changed"] is True and "in_place" not in result, (name, result)
    assert oct((tmp_path / "loose").stat().st_mode & 0o7777) == "0o755"
    assert (tmp_path / "leftover").read_text() == "old" and not (tmp_path / "new").exists()
    assert (tmp_path / "dangling").is_symlink()


@pytest.mark.parametrize(("case", "args"), [
    ("a link to a directory", {"state": "directory"}),
    ("an option beyond the plain ones", {"state": "directory", "recurse": True}),
    ("a symbolic mode", {"state": "directory", "mode": "u=rwx"}),
])
def test_a_link_or_a_step_beyond_the_plain_ones_runs_the_builtin_module(project, tmp_path, case, args):
    (tmp_path / "target").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "target")
    path = tmp_path / ("link" if case == "a link to a directory" else "target")
    result = play(project, tmp_path, [path_step(case, path, **args)], "--check")[case]
    assert "in_place" not in result and not result.get("failed"), result
