"""pharos.hpc.template and pharos.hpc.copy read a file already in place with one shell command,
and leave every other case to the builtin action: a file to write, a mode or owner to mend, an
option beyond the plain ones. Each case runs a real playbook on localhost against files in a
temporary directory; a result with in_place came from the shell command, one without from the
builtin action."""

import grp
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

OWNER = pwd.getpwuid(os.getuid()).pw_name
GROUP = grp.getgrgid(os.getgid()).gr_name


def template(name, dest, **extra):
    return {"name": name, "pharos.hpc.template": dict({"src": "conf.j2", "dest": dest, "owner": OWNER,
                                                        "group": GROUP, "mode": "0640"}, **extra)}


def copy(name, dest, **args):
    return {"name": name, "pharos.hpc.copy": dict({"dest": dest, "mode": "0600"}, **args)}


def shell(name, command):
    return {"name": name, "ansible.builtin.command": command, "check_mode": False}


def play(project, directory, tasks, *options):
    playbook = directory / f"play{len(list(directory.glob('play*.yml')))}.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "vars": {"value": 1},
                                     "tasks": tasks}]))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(project / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    completed = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                                "-e", f"ansible_python_interpreter={sys.executable}", *options, str(playbook)],
                               cwd=directory, env=environment, capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(completed.stdout)
    return {task["task"]["name"]: task["hosts"]["localhost"] for task in report["plays"][0]["tasks"]}


@pytest.fixture
def site(tmp_path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "conf.j2").write_text("value={{ value }}\n")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "plain.txt").write_text("plain\n")
    return tmp_path


def test_a_written_template_is_then_found_in_place_and_a_changed_value_rewrites_it(project, site):
    conf = site / "conf"
    results = play(project, site, [
        template("written", str(conf)),
        template("in place", str(conf)),
        dict(template("another value", str(conf)), vars={"value": 2}),
        dict(template("in place again", str(conf)), vars={"value": 2}),
        template("the first value back", str(conf)),
    ])
    assert results["written"]["changed"] is True and "in_place" not in results["written"]
    assert results["in place"]["changed"] is False and results["in place"]["in_place"] is True
    assert results["in place"]["mode"] == "0640" and results["in place"]["owner"] == OWNER
    assert results["another value"]["changed"] is True and "in_place" not in results["another value"]
    assert results["in place again"]["in_place"] is True
    assert results["the first value back"]["changed"] is True
    assert conf.read_text() == "value=1\n"


def test_a_mode_or_a_content_drift_is_mended_by_the_builtin_action(project, site):
    conf = site / "conf"
    results = play(project, site, [
        template("written", str(conf)),
        shell("loosen the mode", f"chmod 0644 {conf}"),
        template("mode mended", str(conf)),
        shell("edit by hand", f"sh -c 'echo value=9 > {conf}'"),
        template("content mended", str(conf)),
        template("in place", str(conf)),
    ])
    for name in ("mode mended", "content mended"):
        assert results[name]["changed"] is True and "in_place" not in results[name], name
    assert results["in place"]["in_place"] is True
    assert oct(conf.stat().st_mode & 0o777) == "0o640" and conf.read_text() == "value=1\n"


def test_a_copy_of_content_or_of_a_file_is_found_in_place(project, site):
    results = play(project, site, [
        copy("content written", str(site / "content"), content="secret\n"),
        copy("content in place", str(site / "content"), content="secret\n"),
        copy("file written", str(site / "plain"), src="plain.txt"),
        copy("file in place", str(site / "plain"), src="plain.txt", mode=0o600),
        copy("other content", str(site / "content"), content="other\n"),
    ])
    assert results["content written"]["changed"] is True
    assert results["content in place"]["in_place"] is True and results["content in place"]["changed"] is False
    assert results["file in place"]["in_place"] is True
    assert results["other content"]["changed"] is True and "in_place" not in results["other content"]
    assert (site / "content").read_text() == "other\n"


@pytest.mark.parametrize("extra", [{"backup": True}, {"mode": "u=rw,g=r"}, {"follow": True}, {"force": True}])
def test_a_step_with_an_option_beyond_the_plain_ones_runs_the_builtin_action(project, site, extra):
    conf = site / "conf"
    results = play(project, site, [template("written", str(conf), mode="0640"),
                                   template("again, with an option", str(conf), **extra)])
    again = results["again, with an option"]
    assert "in_place" not in again and not again.get("failed"), again
    assert again["changed"] is False


def test_a_link_where_the_file_belongs_is_left_to_the_builtin_action(project, site):
    target = site / "target"
    target.write_text("value=1\n")
    os.chmod(target, 0o640)
    (site / "conf").symlink_to(target)
    results = play(project, site, [template("over a link", str(site / "conf"))])
    assert "in_place" not in results["over a link"]


def test_check_mode_finds_a_file_in_place_and_predicts_a_change_with_its_diff_without_writing(project, site):
    (site / "conf").write_text("value=1\n")
    os.chmod(site / "conf", 0o640)
    (site / "drifted").write_text("value=9\n")
    os.chmod(site / "drifted", 0o640)
    results = play(project, site, [template("in place", str(site / "conf")),
                                   template("drifted", str(site / "drifted")),
                                   template("absent", str(site / "absent"))], "--check", "--diff")
    assert results["in place"]["in_place"] is True
    assert results["drifted"]["changed"] is True and "in_place" not in results["drifted"]
    assert "value=9" in results["drifted"]["diff"][0]["before"] and "value=1" in results["drifted"]["diff"][0]["after"]
    assert results["absent"]["changed"] is True
    assert (site / "drifted").read_text() == "value=9\n" and not (site / "absent").exists()
