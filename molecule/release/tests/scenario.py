"""What the release scenario's tests share: its playbook runs, its files and its Waldur."""

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import httpx

SCENARIO = Path(__file__).resolve().parents[1]
PROJECT = SCENARIO.parents[1]
# The scenarios' shared helpers for runs killed half-way live in tests/fixtures.
sys.path.insert(0, str(PROJECT / "tests" / "fixtures"))
import interrupted_runs  # noqa: E402

started_before_change = interrupted_runs.started_before_change
EPHEMERAL = Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent"))
RELEASES = EPHEMERAL / "releases"
SITE_ENV = EPHEMERAL / "site.env"
SIMULATOR = EPHEMERAL / "waldur"
OFFERING_UUID = "0ffe71b9c0ffee00d15ea5e000000001"
WALDUR_PORT = 18443

SITE_AGENT_UNITS = ["waldur-site-agent@%s.service" % mode for mode in ("order_process", "membership_sync", "report")]
SSH_ACCESS_UNIT = "pharos-ssh-access-agent.service"
ALL_UNITS = SITE_AGENT_UNITS + [SSH_ACCESS_UNIT]


def run_playbook(playbook, *options, extra_vars=None, as_json=False, succeed=True, interrupt_after=None):
    """ansible-playbook playbooks/<playbook> on the scenario's inventory, as an administrator runs it.

    With succeed=False a failed run is returned too, as (return code, output), the output
    parsed when as_json. With
    interrupt_after, the run is killed as soon as the task of that name changed something
    (tests/fixtures/interrupt), and (return code, output) is returned."""
    command = [str(Path(sys.executable).parent / "ansible-playbook"),
               "-i", str(Path(os.environ["MOLECULE_INVENTORY_FILE"]).parent), *options]
    if extra_vars is not None:
        command += ["-e", json.dumps(extra_vars)]
    command.append(str(PROJECT / "playbooks" / playbook))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"),
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
    if as_json:
        environment["ANSIBLE_STDOUT_CALLBACK"] = "ansible.posix.json"
    if interrupt_after is not None:
        environment.update(interrupted_runs.interrupting_environment(interrupt_after))
        succeed = False
    result = subprocess.run(command, cwd=PROJECT, env=environment, capture_output=True, text=True, timeout=900,
                            check=False)
    if not succeed:
        return result.returncode, json.loads(result.stdout) if as_json else result.stdout + result.stderr
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    return json.loads(result.stdout) if as_json else result.stdout


def task_results(report, task_name):
    """Each host's result of the task named task_name in an ansible.posix.json report."""
    return [task["hosts"] for play in report["plays"] for task in play["tasks"] if task["task"]["name"] == task_name]


def activation(report):
    """The login node's result of the release's activation task in an ansible.posix.json report."""
    [hosts] = task_results(report, "pharos.hpc.release : Install and activate the release")
    [result] = hosts.values()
    return result


def changed_count(output):
    """The changed= figure of the single host in a PLAY RECAP."""
    recap = output[output.rindex("PLAY RECAP"):]
    return int(recap.split("changed=")[1].split()[0])


def site_env_with(path, **values):
    """A copy of the scenario's site.env at path with the given keys replaced; returns its path."""
    lines = []
    for line in SITE_ENV.read_text().splitlines():
        key = line.split("=", 1)[0]
        lines.append("%s=%s" % (key, values[key]) if key in values else line)
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def configuration_digest(host):
    """One digest over every file under /etc/pharos-hpc and the release links, to see that nothing moved."""
    return host.check_output("find /etc/pharos-hpc /opt/pharos-hpc -maxdepth 1 -printf '%%p %%l %%T@\\n' | sort "
                             "| sha256sum && sha256sum /etc/pharos-hpc/*.* /etc/pharos-hpc/secrets/* | sha256sum")


def current(host):
    return host.file("/opt/pharos-hpc/current").linked_to


def release(host, **arguments):
    """pharos.hpc.pharos_release on the host for real (testinfra's default is check mode)."""
    # testinfra hands the arguments to ansible's -a, which takes them as JSON.
    return host.ansible("pharos.hpc.pharos_release", json.dumps(arguments), check=False, become=True)


def waldur(host, method, path, body=None, as_user="site-agent"):
    """A call to the scenario's Waldur from the controller, with the Site agent's token or
    another of the simulator's (waldur-staff: only staff change an offering's state)."""
    address = host.check_output("getent hosts waldur.lab").split()[0]
    token = (SIMULATOR / ("%s-token" % as_user)).read_text().strip()
    with httpx.Client(verify=str(SIMULATOR / "ca.pem"), timeout=10,
                      headers={"Authorization": "Token %s" % token}) as client:
        response = client.request(method, "https://%s:%d/api/%s" % (address, WALDUR_PORT, path), json=body)
    response.raise_for_status()
    return response.json() if response.content else None


# The wheels the release builder makes itself (from a project or a source archive): in index
# mode they stay in the archive's wheelhouse, and every other wheel comes from the index.
BUILT_HERE = ("pharos_ssh_access_standin-", "docopt-", "pyyaml-")


def release_b_wheels():
    """{file name: bytes} of every wheel in release-b's wheelhouse."""
    with tarfile.open(RELEASES / "release-b.tar.gz") as archive:
        return {Path(member.name).name: archive.extractfile(member).read() for member in archive.getmembers()
                if member.isfile() and member.name.endswith(".whl")}


def rebuilt_release_b(destination, release_id="release-b", python_version=None, index_mode=False):
    """release-b as a builder would have made it under another release id, for another Python,
    or in index mode (its wheelhouse holding only the wheels built here): its manifest says so,
    its SHA256SUMS match its files, and the scenario's signer signs it."""
    with tarfile.open(RELEASES / "release-b.tar.gz") as original:
        members = [(member, original.extractfile(member).read() if member.isfile() else None)
                   for member in original.getmembers()]
    if index_mode:
        members = [(member, data) for member, data in members if not member.name.endswith(".whl")
                   or Path(member.name).name.lower().startswith(BUILT_HERE)]
    manifest_text = next(data for member, data in members if member.name.endswith("/manifest.yml"))
    changed = manifest_text.replace(b"release_id: release-b", b"release_id: " + release_id.encode())
    if python_version:
        changed = re.sub(rb"(?m)^python_version: .*$", b"python_version: '%s'" % python_version.encode(), changed)
    if index_mode:
        changed = changed.replace(b"dependency_mode: wheelhouse", b"dependency_mode: index")
    assert changed != manifest_text
    files = {member.name.split("/", 1)[1]: (changed if member.name.endswith("/manifest.yml") else data)
             for member, data in members if data is not None and not member.name.endswith("/SHA256SUMS")}
    sums = "".join("%s  %s\n" % (hashlib.sha256(data).hexdigest(), path) for path, data in sorted(files.items()))
    with tarfile.open(destination, "w:gz") as copy:
        for member, data in members:
            if member.name.endswith("/manifest.yml"):
                data = changed
            elif member.name.endswith("/SHA256SUMS"):
                data = sums.encode()
            member.name = re.sub(r"^(\./)?release-b(/|$)", r"\g<1>%s\2" % release_id, member.name)
            # A long name was read from a PAX header, which would be written again over the new one.
            member.pax_headers.pop("path", None)
            if data is not None:
                member.size = len(data)
            copy.addfile(member, io.BytesIO(data) if data is not None else None)
    signed = subprocess.run([sys.executable, str(PROJECT / "scripts" / "pharos-release-sign"), "--key",
                             str(RELEASES / "signer.pem"), "--release-id", release_id, str(destination)],
                            capture_output=True, text=True, check=False)
    assert signed.returncode == 0, signed.stderr
    return destination
