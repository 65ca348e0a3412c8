"""pharos.hpc.replace reads a file where its pattern matches nowhere with one shell command, and
leaves every other case to the builtin module: a match to replace, a file that is not UTF-8 text,
a file it cannot read, an option beyond the plain ones. Each case runs a real playbook on
localhost against a temporary directory; a result with in_place came from the shell command, one
without from the builtin module."""

from test_files_in_place import play

# The job_identity role's own step: extrausers after the local files, once.
NSS_UNREAD = r"^((?:passwd|group):\s+files)\b(?!.*\bextrausers\b)"
NSS_LINES = "passwd:         files systemd\ngroup:          files systemd\nshadow:         files\n"


def replace_step(name, path, **args):
    return {"name": name, "pharos.hpc.replace": dict({"path": str(path), "regexp": NSS_UNREAD,
                                                      "replace": r"\1 extrausers"}, **args)}


def test_a_file_is_replaced_once_and_then_read_in_place(project, tmp_path):
    nsswitch = tmp_path / "nsswitch.conf"
    nsswitch.write_text(NSS_LINES)
    results = play(project, tmp_path, [replace_step("replaced", nsswitch), replace_step("in place", nsswitch)])
    assert results["replaced"]["changed"] is True and "in_place" not in results["replaced"]
    assert results["in place"]["changed"] is False and results["in place"]["in_place"] is True
    assert nsswitch.read_text() == NSS_LINES.replace("files systemd", "files extrausers systemd")


def test_check_mode_leaves_a_match_to_the_builtin_module_which_shows_the_diff_and_writes_nothing(project, tmp_path):
    nsswitch = tmp_path / "nsswitch.conf"
    nsswitch.write_text(NSS_LINES)
    result = play(project, tmp_path, [replace_step("predicted", nsswitch)], "--check", "--diff")["predicted"]
    assert result["changed"] is True and "in_place" not in result, result
    assert "files extrausers systemd" in result["diff"]["after"], result["diff"]
    assert nsswitch.read_text() == NSS_LINES


def test_a_file_the_shell_cannot_judge_or_an_option_beyond_the_plain_ones_runs_the_builtin_module(project, tmp_path):
    latin1 = tmp_path / "latin1.conf"
    latin1.write_bytes("# caf\u00e9\n".encode("latin-1"))
    done = tmp_path / "done.conf"
    done.write_text(NSS_LINES.replace("files systemd", "files extrausers systemd"))
    # Each step goes on after a failure: the builtin's answer to a file that is not UTF-8 differs
    # between ansible-core releases, and only who answers is asserted here.
    results = play(project, tmp_path, [dict(step, ignore_errors=True) for step in (
        replace_step("not UTF-8", latin1),
        replace_step("with a backup", done, backup=True),
        replace_step("missing", tmp_path / "never-made"),
    )], "--check")
    for name, result in results.items():
        assert "in_place" not in result and result["changed"] is False, (name, result)
    assert results["missing"].get("failed") is True and "does not exist" in results["missing"]["msg"]
    assert not results["with a backup"].get("failed"), results["with a backup"]
