"""site.yml refuses a host the collection does not support before it changes anything there: a
Debian release other than 13, and a host whose init is not systemd. Each host is a container of
the base image, started here as the Site's only node and removed after."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

PROJECT = Path(__file__).resolve().parents[3]
IMAGE = "pharos-lab/trixie:base"
# As molecule.yml starts the scenario's node: systemd as PID 1 in a container.
SYSTEMD_OPTIONS = ["--cgroupns", "private", "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
                   "--cap-add", "SYS_ADMIN", "--security-opt", "seccomp=unconfined",
                   "--security-opt", "apparmor=unconfined", "--stop-signal", "SIGRTMIN+3"]
BOOKWORM_OS_RELEASE = ('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
                       'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n')


def docker(*arguments):
    return subprocess.run(["docker", *arguments], capture_output=True, text=True, check=False)


@pytest.fixture
def start_host(tmp_path):
    started = []

    def start(init="systemd", release_files=None):
        name = "pharos-default-unsupported-" + uuid.uuid4().hex[:8]
        options, command = (SYSTEMD_OPTIONS, ["/lib/systemd/systemd"]) if init == "systemd" else ([], [init, "infinity"])
        mounts = []
        for path, content in (release_files or {}).items():
            given = tmp_path / Path(path).name
            given.write_text(content)
            mounts += ["-v", f"{given}:{path}:ro"]
        run = docker("run", "-d", "--name", name, *options, *mounts, IMAGE, *command)
        assert run.returncode == 0, run.stderr
        started.append(name)
        return name

    yield start
    if started:
        docker("rm", "-f", *started)


def run_site(tmp_path, name):
    """A real run of site.yml, the container as the Site's login node, with the lab's Site values."""
    inventory = tmp_path / "inventory"
    inventory.mkdir()
    (inventory / "group_vars").symlink_to(PROJECT / "inventories" / "lab" / "group_vars")
    (inventory / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "community.docker.docker"},
        "children": {"login": {"hosts": {name: {}}}, "cluster": {"children": {"login": {}}}}}}))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"), ANSIBLE_NOCOLOR="true",
                       ANSIBLE_FORCE_COLOR="false")
    return subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory),
                           str(PROJECT / "playbooks" / "site.yml")],
                          cwd=PROJECT, env=environment, capture_output=True, text=True, timeout=300, check=False)


def assert_refused_before_any_change(result, name):
    # The failed task's message is in stdout or stderr, depending on the callback's settings.
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0, output[-2000:]
    assert f"Stopped before any change on {name}: pharos.hpc supports Debian 13 (trixie) with systemd" in output, \
        output[-3000:]
    assert docker("exec", name, "test", "-e", "/etc/munge").returncode != 0, "munge's directory was made"
    assert docker("exec", name, "dpkg-query", "-W", "munge").returncode != 0, "munge was installed"
    return output.split("and this host runs ", 1)[1]


def test_a_host_of_another_debian_release_is_refused_before_any_change(tmp_path, start_host):
    name = start_host(release_files={"/usr/lib/os-release": BOOKWORM_OS_RELEASE, "/etc/debian_version": "12.11\n"})
    runs = assert_refused_before_any_change(run_site(tmp_path, name), name)
    assert runs.startswith("Debian 12"), runs[:200]
    assert "(bookworm) with systemd as its init" in runs[:200]


def test_a_host_whose_init_is_not_systemd_is_refused_before_any_change(tmp_path, start_host):
    name = start_host(init="sleep")
    runs = assert_refused_before_any_change(run_site(tmp_path, name), name)
    assert runs.startswith("Debian 13"), runs[:200]
    assert "with systemd as its init" not in runs[:200]
