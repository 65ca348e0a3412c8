"""What the journey's tests share: the scenario's Waldur, read from the controller, and waiting."""

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

EPHEMERAL = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent"))
SIMULATOR = EPHEMERAL / "waldur"
WALDUR_PORT = 18453
SITE_API_PORT = 18454
OFFERING_UUID = "0ffe71b9c0ffee00d15ea5e000000002"

# waldur-seed.yml's work, as the Site agent names it in Slurm: pharos_p_<project slug> and
# pharos_a_<resource slug> (docs/allocations.md).
PROJECT_ACCOUNT = "pharos_p_project-hpc"
ALLOCATION = "pharos_a_hpc-2026"
QUALIFICATION = "pharos_a_qualification-2026"
NODE_HOURS = {ALLOCATION: 10, QUALIFICATION: 2}
ALLOCATIONS_OF = {"pharosalice": {ALLOCATION, QUALIFICATION}, "pharosbob": {ALLOCATION}}
# The Site's own compute partition (vars/scenario.yml): the journey runs on an adopted Site.
COMPUTE = "batch"
# The agents poll every minute; a change shows within a few of their cycles.
AGENT_CYCLE_SECONDS = 240


def waldur(host, method, path, body=None, as_user="waldur-staff"):
    """A call to the scenario's Waldur from the controller: its state, as staff sees it, unless
    another of the simulator's tokens is named. Returns (status, decoded body or None)."""
    address = host.check_output("getent hosts waldur.lab").split()[0]
    token = (SIMULATOR / ("%s-token" % as_user)).read_text().strip()
    with httpx.Client(verify=str(SIMULATOR / "ca.pem"), timeout=10,
                      headers={"Authorization": "Token %s" % token}) as client:
        response = client.request(method, "https://%s:%d/api/%s" % (address, WALDUR_PORT, path), json=body)
    return response.status_code, (response.json() if response.content else None)


def listed(host, path):
    status, items = waldur(host, "GET", path)
    assert status == 200, items
    return items


def resource_of_account(host, account):
    """The Waldur resource whose backend_id is the Slurm account."""
    resources = listed(host, "marketplace-provider-resources/?offering_uuid=%s" % OFFERING_UUID)
    return next(resource for resource in resources if resource["backend_id"] == account)


def wait_until(condition, seconds, interval=3):
    """condition() until it returns something truthy or seconds pass; its last answer either way."""
    deadline = time.monotonic() + seconds
    while True:
        answer = condition()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(interval)


def agent_log(host, mode, lines=40):
    return host.run("journalctl -u waldur-site-agent@%s --no-pager -n %d" % (mode, lines)).stdout


def sacctmgr(host, *arguments):
    """sacctmgr's parsable answer as rows of fields."""
    output = host.check_output("sacctmgr --noheader --parsable2 " + " ".join(arguments))
    return [line.split("|") for line in output.splitlines() if line]


def as_member(host, member, command):
    return host.run("runuser -u %s -- %s" % (member, command))


# Each login comes from its own loopback address: sshd's per-source penalties, which refuse an
# address after a few failed logins, would otherwise refuse a good key, or pass for a revoked one.
SOURCES = ("127.0.%d.%d" % (third, fourth) for third, fourth in itertools.product(range(1, 255), range(2, 255)))


def ssh(host, member, command="id -un", key=None):
    """An ssh login as member on the login node, with the key pair /root/<key>-key (by default
    /root/<member>-key, which new_key makes). A refused login exits 254, not ssh's 255: the
    tests reach the login node over ssh themselves, and testinfra reads 255 as its own
    connection failing."""
    return host.run("ssh -n -b %s -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                    "-o ConnectTimeout=5 -i /root/%s-key %s@127.0.0.1 %s; status=$?; "
                    "[ $status -ne 255 ] || status=254; exit $status" % (next(SOURCES), key or member, member, command))


def new_key(host, name):
    """A new key pair /root/<name>-key on the login node; returns its public half."""
    made = host.run("rm -f /root/{n}-key /root/{n}-key.pub && ssh-keygen -q -t ed25519 -N '' -C {n} -f /root/{n}-key "
                    "&& cat /root/{n}-key.pub".format(n=name))
    assert made.rc == 0, made.stderr
    return made.stdout.strip()


def submit_keys(host, member, *keys):
    """The member's keys as the control plane grants them, through the Site API's stand-in: the
    keys given replace the member's, and none revokes them all."""
    address = host.check_output("getent hosts site-api.lab").split()[0]
    token = (SIMULATOR / "site-api-operator-token").read_text().strip()
    response = httpx.put("https://%s:%d/stand-in/members/%s/keys" % (address, SITE_API_PORT, member),
                         json={"keys": list(keys)}, headers={"Authorization": "Bearer " + token},
                         verify=str(SIMULATOR / "ca.pem"), timeout=10)
    assert response.status_code == 200, response.text


def access_agent_cycles(host, since):
    """The SSH access agent's log lines (JSON) since the epoch second given."""
    lines = host.check_output("journalctl -u pharos-ssh-access-agent -o cat --no-pager --since @%d" % since)
    return [json.loads(line) for line in lines.splitlines() if line.startswith("{")]


def run_site_playbook(playbook, *options, extra_vars=None):
    """ansible-playbook playbooks/<playbook> on the scenario's inventory, as an administrator runs
    it; returns (return code, output)."""
    project = Path(__file__).resolve().parents[3]
    command = [str(Path(sys.executable).parent / "ansible-playbook"),
               "-i", str(Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent),
               "-e", "slurm_member_token_issuer=https://issuer.pharos.test",
               "-e", "slurm_member_token_public_keys_file=%s/signer.pub.pem" % EPHEMERAL, *options]
    if extra_vars is not None:
        command += ["-e", json.dumps(extra_vars)]
    command.append(str(project / "playbooks" / playbook))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(project / "collections"),
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
    result = subprocess.run(command, cwd=project, env=environment, capture_output=True, text=True, timeout=900,
                            check=False)
    return result.returncode, result.stdout + result.stderr
