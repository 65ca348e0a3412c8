"""pharos.hpc.read_command runs a command with each argument as given, no shell reading it, in
check mode too, and answers as ansible.builtin.command does: rc, stdout and stderr, a non-zero
status failing the step unless failed_when takes it. Each case runs a real playbook on localhost."""

from test_files_in_place import play


def read(name, argv, **extra):
    return dict({"name": name, "pharos.hpc.read_command": {"argv": argv}}, **extra)


def test_each_argument_reaches_the_command_as_given_in_check_mode_too(project, tmp_path):
    marker = tmp_path / "never-made"
    results = play(project, tmp_path, [
        read("arguments", ["printf", "%s|", "a b", "$HOME", f"; touch {marker}", "'quoted'"]),
        read("error output", ["sh", "-c", "echo out; echo err >&2"]),
        read("numbers", ["echo", 4801, 2.5]),
    ], "--check")
    assert results["arguments"]["stdout"] == f"a b|$HOME|; touch {marker}|'quoted'|"
    assert results["arguments"]["changed"] is False and results["arguments"]["rc"] == 0
    assert results["error output"]["stdout_lines"] == ["out"] and results["error output"]["stderr_lines"] == ["err"]
    assert results["numbers"]["stdout"] == "4801 2.5" and results["numbers"]["cmd"] == ["echo", "4801", "2.5"]
    assert not marker.exists()


def test_a_non_zero_status_fails_the_step_unless_failed_when_takes_it(project, tmp_path):
    results = play(project, tmp_path, [
        read("taken", ["sh", "-c", "echo missing >&2; exit 32"], failed_when=False),
        read("failed", ["false"], ignore_errors=True),
    ])
    assert results["taken"]["rc"] == 32 and results["taken"]["stderr"] == "missing" and not results["taken"].get("failed")
    assert results["failed"]["failed"] is True and results["failed"]["rc"] == 1


def test_a_command_not_given_as_argv_is_refused_with_the_form_it_takes(project, tmp_path):
    results = play(project, tmp_path, [
        {"name": "a string", "pharos.hpc.read_command": {"argv": "sacctmgr show cluster"}, "ignore_errors": True},
        read("a mapping in argv", ["echo", {"a": 1}], ignore_errors=True),
    ])
    assert results["a string"]["failed"] is True
    assert "argv: [sacctmgr, --noheader, show, cluster]" in results["a string"]["msg"]
    assert results["a mapping in argv"]["failed"] is True and "{'a': 1} is not" in results["a mapping in argv"]["msg"]
