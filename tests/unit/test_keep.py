"""pharos.hpc.keep runs several of the collection's in-place steps as one: each as it would run as a
task of its own (its check mode, its diff, its read in place), in order, the first failure stopping
the rest. Each case runs a real playbook on localhost against a temporary directory."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_files_in_place import GROUP, OWNER, play, shell


@pytest.fixture
def site(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "conf.j2").write_text("value={{ value }}\n")
    return tmp_path


def keep(name, steps, **task):
    return dict({"name": name, "pharos.hpc.keep": {"steps": steps}}, **task)


def directory(path, mode="0750", **extra):
    return dict({"file": {"path": str(path), "state": "directory", "owner": OWNER, "group": GROUP, "mode": mode}},
                **extra)


def script(dest, src="conf.j2"):
    return {"template": {"src": src, "dest": str(dest), "owner": OWNER, "group": GROUP, "mode": "0755"}}


def test_check_mode_predicts_each_step_and_writes_nothing_then_a_run_makes_them_and_the_next_finds_them(project, site):
    tree = site / "tree"
    steps = [directory(tree), script(tree / "prolog.sh")]
    predicted = play(project, site, [keep("keep", steps)], "--check", "--diff")["keep"]
    assert predicted["changed"] is True and not tree.exists()
    assert [step["step"] for step in predicted["results"]] == [f"file {tree}", f"template {tree}/prolog.sh"]
    assert [step["changed"] for step in predicted["results"]] == [True, True]
    assert {"before", "after"} <= set(predicted["diff"][0]) and predicted["diff"][1]["after"] == "value=1\n"

    made = play(project, site, [keep("keep", steps)], "--diff")["keep"]
    assert made["changed"] is True and (tree / "prolog.sh").read_text() == "value=1\n"
    assert oct(tree.stat().st_mode & 0o7777) == "0o750" and oct((tree / "prolog.sh").stat().st_mode & 0o777) == "0o755"

    again = play(project, site, [keep("keep", steps)], "--check", "--diff")["keep"]
    assert again["changed"] is False and "diff" not in again
    assert all(step.get("in_place") is True for step in again["results"]), again["results"]


def test_one_drift_among_resources_in_place_is_the_one_step_predicted_and_mended(project, site):
    tree = site / "tree"
    steps = [directory(tree), script(tree / "prolog.sh"), script(tree / "check.sh")]
    play(project, site, [keep("keep", steps)])
    os.chmod(tree, 0o755)
    (tree / "check.sh").write_text("edited by hand\n")

    predicted = play(project, site, [keep("keep", steps)], "--check", "--diff")["keep"]
    assert [step["changed"] for step in predicted["results"]] == [True, False, True]
    assert oct(tree.stat().st_mode & 0o7777) == "0o755" and (tree / "check.sh").read_text() == "edited by hand\n"
    assert predicted["diff"][1]["before"] == "edited by hand\n"

    mended = play(project, site, [keep("keep", steps)])["keep"]
    assert [step["changed"] for step in mended["results"]] == [True, False, True]
    assert oct(tree.stat().st_mode & 0o7777) == "0o750" and (tree / "check.sh").read_text() == "value=1\n"
    assert play(project, site, [keep("keep", steps)])["keep"]["changed"] is False


def test_a_step_whose_when_is_false_is_passed_over(project, site):
    results = play(project, site, [keep("keep", [
        directory(site / "made"),
        directory(site / "passed over", when=False),
        directory(site / "made too", when=True),
    ])])["keep"]
    assert [step["path"] for step in results["results"]] == [str(site / "made"), str(site / "made too")]
    assert not (site / "passed over").exists()


def test_the_first_step_that_fails_stops_the_rest_and_is_named(project, site):
    (site / "a file").write_text("not a directory\n")
    result = play(project, site, [keep("keep", [
        directory(site / "first"),
        directory(site / "a file"),
        directory(site / "never reached"),
    ])])["keep"]
    assert result["failed"] is True and result["msg"].startswith(f"file {site / 'a file'}: ")
    assert (site / "first").is_dir() and not (site / "never reached").exists()
    assert len(result["results"]) == 2


def test_a_fail_step_refuses_the_host_with_its_words_and_nothing_after_it_is_written(project, site):
    refused = {"fail": {"msg": "The tree is not safe to take over, so nothing was written."}, "when": True}
    for mode in (["--check"], []):
        result = play(project, site, [keep("keep", [refused, directory(site / "never made")], ignore_errors=True)],
                      *mode)["keep"]
        assert result["failed"] is True and result["msg"] == "The tree is not safe to take over, so nothing was written."
        assert [step["step"] for step in result["results"]] == ["fail"]
        assert not (site / "never made").exists()


def test_a_fail_step_passed_over_lets_the_steps_run(project, site):
    result = play(project, site, [keep("keep", [
        {"fail": {"msg": "never said"}, "when": False},
        directory(site / "made"),
    ])])["keep"]
    assert result["changed"] is True and [step["step"] for step in result["results"]] == [f"file {site / 'made'}"]
    assert (site / "made").is_dir()


def test_a_fail_step_without_its_words_alone_is_refused(project, site):
    results = play(project, site, [
        keep("no words", [{"fail": {}, "when": True}, directory(site / "first")], ignore_errors=True),
        keep("more than words", [{"fail": {"msg": "x", "path": "/tmp"}}], ignore_errors=True),
    ])
    for name in ("no words", "more than words"):
        assert results[name]["failed"] is True and "steps[0] is a fail step: give it msg" in results[name]["msg"]
    assert not (site / "first").exists()


def test_a_step_the_action_cannot_run_is_refused_before_any_step_runs(project, site):
    results = play(project, site, [
        keep("an unknown kind", [directory(site / "first"), {"command": {"cmd": "true"}}], ignore_errors=True),
        keep("two kinds in one step", [dict(directory(site / "first"), copy={"content": "x", "dest": "/tmp/x"})],
             ignore_errors=True),
        keep("a condition left as text", [directory(site / "first", when="inventory_hostname == 'localhost'")],
             ignore_errors=True),
        keep("no steps", [], ignore_errors=True),
        shell("the first step's directory", f"test ! -e {site / 'first'}"),
    ])
    unknown, mixed, text, empty = (results[name] for name in (
        "an unknown kind", "two kinds in one step", "a condition left as text", "no steps"))
    assert unknown["failed"] is True and "steps[1] must name one of fail, group, user, file, copy" in unknown["msg"]
    assert mixed["failed"] is True and "steps[0] must name one of" in mixed["msg"]
    assert text["failed"] is True and "steps[0].when must be true or false" in text["msg"]
    assert empty["failed"] is True and "non-empty list" in empty["msg"]
    assert results["the first step's directory"].get("rc") == 0


def test_a_later_step_reads_again_after_an_earlier_one_changed_the_host(project, site):
    written = site / "written"
    results = play(project, site, [keep("keep", [
        {"copy": {"content": "a\n", "dest": str(written), "mode": "0600"}},
        {"file": {"path": str(written), "state": "file", "mode": "0600"}},
    ])])["keep"]["results"]
    assert results[0]["changed"] is True
    assert results[1]["changed"] is False and results[1].get("in_place") is True, results[1]


def test_the_steps_of_a_converged_node_are_read_with_one_command(project, site):
    tree = site / "tree"
    steps = [directory(tree), script(tree / "prolog.sh"), script(tree / "check.sh"),
             {"group": {"name": GROUP}}]
    play(project, site, [keep("keep", steps)])
    playbook = site / "verbose.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "vars": {"value": 1},
                                     "tasks": [keep("keep", steps)]}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(project / "collections"), ANSIBLE_NOCOLOR="true")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-vvv", "-i", "localhost,",
                                "-c", "local", "-e", f"ansible_python_interpreter={sys.executable}", str(playbook)],
                               cwd=site, env=environment, capture_output=True, text=True, timeout=120, check=False)
    commands = [line for line in completed.stdout.splitlines() if "EXEC" in line]
    assert completed.returncode == 0 and "changed=0" in completed.stdout, completed.stdout[-2000:]
    assert len(commands) == 1, commands
    assert all(part in commands[0] for part in ("stat -c", "sha1sum", "getent -s files group"))


def test_a_step_that_cannot_render_fails_named_and_the_steps_before_it_stand(project, site):
    (site / "templates" / "broken.j2").write_text("{{ never_defined }}\n")
    result = play(project, site, [keep("keep", [
        directory(site / "made"),
        script(site / "made" / "broken.sh", src="broken.j2"),
        directory(site / "never reached"),
    ], ignore_errors=True)])["keep"]
    assert result["failed"] is True and result["msg"].startswith(f"template {site / 'made' / 'broken.sh'}: ")
    assert "never_defined" in result["msg"]
    assert [step["changed"] for step in result["results"][:1]] == [True] and (site / "made").is_dir()
    assert not (site / "never reached").exists()


def test_a_refused_step_is_named_by_its_keys_never_by_its_values(project, site):
    result = play(project, site, [keep("keep", [{"copy": {"content": "s3cret-value", "dest": "/tmp/x"},
                                                 "shell": "true"}], ignore_errors=True)])["keep"]
    assert result["failed"] is True and "the keys copy, shell" in result["msg"]
    assert "s3cret-value" not in result["msg"]
