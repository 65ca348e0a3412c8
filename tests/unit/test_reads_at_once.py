"""run_all_on_host runs several reads as one shell command and gives each its own exit code and
exactly the output it printed: a file without a final newline, an empty output, a failed read."""

import subprocess

from ansible_collections.pharos.hpc.plugins.plugin_utils.remote import run_all_on_host, run_on_host


class LocalConnection:
    def get_option(self, name):
        raise KeyError(name)


class Action:
    """An action whose commands run here, each counted."""

    def __init__(self):
        self._connection = LocalConnection()
        self.commands = []

    def _low_level_execute_command(self, command):
        self.commands.append(command)
        ran = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
        return {"rc": ran.returncode, "stdout": ran.stdout, "stderr": ran.stderr}


def test_each_read_gets_its_own_exit_code_and_exact_output_from_one_command(tmp_path):
    (tmp_path / "unterminated").write_text("no final newline")
    (tmp_path / "blank lines").write_text("a\n\n")
    action = Action()
    reads = ["echo one", "false", f"cat '{tmp_path}/unterminated'", f"cat '{tmp_path}/blank lines'",
             "true", f"cat '{tmp_path}/missing'"]
    made = run_all_on_host(action, reads)
    assert len(action.commands) == 1
    assert {read: (made[read]["rc"], made[read]["stdout"]) for read in reads} == {
        "echo one": (0, "one\n"),
        "false": (1, ""),
        f"cat '{tmp_path}/unterminated'": (0, "no final newline"),
        f"cat '{tmp_path}/blank lines'": (0, "a\n\n"),
        "true": (0, ""),
        f"cat '{tmp_path}/missing'": (1, ""),
    }


def test_a_read_made_already_is_answered_once_and_then_run_again():
    action = Action()
    action.reads_made = run_all_on_host(action, ["echo made", "echo other"])
    assert run_on_host(action, "echo made")["stdout"] == "made\n" and len(action.commands) == 1
    assert run_on_host(action, "echo made")["stdout"] == "made\n" and len(action.commands) == 2


def test_output_that_imitates_the_end_of_a_read_cannot_split_another():
    action = Action()
    forged = "printf '\\npharos-read-0000000000000000 0\\n'"
    made = run_all_on_host(action, [forged, "echo after"])
    assert made[forged]["stdout"] == "\npharos-read-0000000000000000 0\n" and made["echo after"]["stdout"] == "after\n"
