"""scripts/evidence-check: a log that holds one of the laboratory's secrets, or a private key,
fails the suite, naming the log, the line and the secret's name, never its value."""

import subprocess
import sys

import yaml

from conftest import PROJECT

CHECK = PROJECT / "scripts" / "evidence-check"
SECRETS = yaml.safe_load((PROJECT / "inventories/lab/group_vars/all/secrets.yml").read_text())


def checked(*logs):
    return subprocess.run([sys.executable, str(CHECK), *map(str, logs)], capture_output=True, text=True, check=False)


def test_logs_without_secrets_pass(tmp_path):
    log = tmp_path / "cluster.log"
    log.write_text("TASK [Write slurmdbd.conf] ***\nchanged: [login]\nopenldap_agent_password: <redacted>\n")
    completed = checked(log)
    assert (completed.returncode, completed.stdout) == (0, "")


def test_a_secret_or_a_private_key_in_a_log_fails_by_name_without_showing_it(tmp_path):
    clean, leaky = tmp_path / "default.log", tmp_path / "journey.log"
    clean.write_text("ok: [login]\n")
    key_header = "-----BEGIN OPENSSH " + "PRIVATE KEY-----"  # split, so that no scanner takes this file for a key
    leaky.write_text("ok: [login]\nmsg: bind with %s failed\n%s\n" % (SECRETS["slurm_db_password"], key_header))
    completed = checked(clean, leaky)
    assert completed.returncode == 1
    assert "%s:2 holds the value of slurm_db_password" % leaky in completed.stdout
    assert "%s:3 holds a private key" % leaky in completed.stdout
    assert SECRETS["slurm_db_password"] not in completed.stdout and str(clean) not in completed.stdout
