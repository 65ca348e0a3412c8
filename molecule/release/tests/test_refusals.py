"""What must stop a release before it changes anything (docs/release.md, "The playbooks"): a missing secret, an archive
the pinned signer did not sign, a tampered archive, a component the release does not carry, a reused release id with other inputs,
a host that is not Debian 13; and check.yml, which changes nothing and names every failed precondition in one run. These run before
test_release_changes.py (file order), while release-b was never installed."""

import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from scenario import (RELEASES, changed_count, configuration_digest, current, rebuilt_release_b, release, run_playbook,
                      site_env_with)

PROJECT = Path(__file__).resolve().parents[3]

testinfra_hosts = ["ansible://login"]

RELEASE_A = "/opt/pharos-hpc/releases/release-a"


@pytest.fixture
def unchanged(host):
    """Asserts after the test that the host's configuration, secrets and releases did not change."""
    before = configuration_digest(host), current(host)
    yield
    assert (configuration_digest(host), current(host)) == before


@pytest.fixture
def ldap_password_withheld(host):
    """The Site agent's LDAP password in neither the token directory nor the adopted secrets."""
    host.check_output("mkdir -p /root/partial-tokens && cp -p /root/pharos-tokens/* /root/partial-tokens/ && "
                      "rm /root/partial-tokens/site-agent-ldap-password && "
                      "mv /etc/pharos-hpc/secrets/site-agent-ldap-password /root/withheld-ldap-password")
    yield "/root/partial-tokens"
    host.check_output("mv /root/withheld-ldap-password /etc/pharos-hpc/secrets/site-agent-ldap-password && "
                      "rm -r /root/partial-tokens")


def test_check_playbook_reports_the_active_release_and_changes_nothing(host, unchanged):
    output = run_playbook("check.yml")
    assert changed_count(output) == 0
    assert "Current release release-a" in output


def test_a_missing_secret_stops_the_release_before_any_change(host, ldap_password_withheld):
    before = configuration_digest(host)
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={
        "pharos_token_directory": ldap_password_withheld,
        "pharos_release_archive": str(RELEASES / "release-b.tar.gz")})
    assert rc != 0
    assert "Secret site-agent-ldap-password is neither in the token directory /root/partial-tokens" in output
    assert configuration_digest(host) == before and current(host) == RELEASE_A
    assert not host.file("/opt/pharos-hpc/releases/release-b").exists
    assert not host.file("/var/lib/pharos-hpc/incoming/release-b.tar.gz").exists


UNSAFE_TOKEN_DIRECTORIES = {
    "a secret that is a link": ("ln -sf /etc/shadow {d}/site-agent-token",
                                "Secret site-agent-token in the token directory {d} is a link"),
    "a secret another user may change": ("chmod 0666 {d}/ssh-access-site-token",
                                         "Secret ssh-access-site-token in the token directory {d} is not root's alone"),
    "a directory another user may change": ("chmod 0777 {d}", "The token directory {d} is not root's alone"),
    "a secret others may read": ("chmod 0644 {d}/site-agent-token",
                                 "Secret site-agent-token in the token directory {d} is readable by others than root"),
}


@pytest.mark.parametrize("case", sorted(UNSAFE_TOKEN_DIRECTORIES))
def test_a_token_directory_someone_else_could_change_stops_the_release_before_any_change(host, case, unchanged):
    directory = "/root/unsafe-tokens"
    make, named = (text.format(d=directory) for text in UNSAFE_TOKEN_DIRECTORIES[case])
    host.check_output(f"rm -rf {directory} && install -d -m 0700 {directory} && cp -p /root/pharos-tokens/* {directory}/ "
                      f"&& {make}")
    try:
        rc, output = run_playbook("release.yml", succeed=False, extra_vars={
            "pharos_token_directory": directory, "pharos_release_archive": str(RELEASES / "release-b.tar.gz")})
    finally:
        host.check_output(f"rm -rf {directory}")
    assert rc != 0 and named in output, output[-3000:]
    assert not host.file("/opt/pharos-hpc/releases/release-b").exists


@pytest.fixture
def debian_12(host):
    """The host says it is Debian 12 (bookworm), as its os-release tells it, for one test."""
    release_file = host.check_output("readlink -f /etc/os-release")
    host.check_output(f"cp -p {release_file} /root/os-release.trixie && "
                      f"sed -i -e 's/^VERSION_ID=.*/VERSION_ID=\"12\"/' -e 's/trixie/bookworm/g' {release_file}")
    yield
    host.check_output(f"mv /root/os-release.trixie {release_file}")


def test_check_names_every_failed_precondition_in_one_run(host, tmp_path, ldap_password_withheld, debian_12, unchanged):
    broken_site_env = site_env_with(tmp_path / "site.env", CENTRAL_OFFERING_UUID="NOT-A-UUID",
                                    ACTIVATION_COMPONENTS="site-agent ssh-access")
    rc, output = run_playbook("check.yml", succeed=False, extra_vars={
        "pharos_token_directory": ldap_password_withheld, "pharos_site_env_file": broken_site_env})
    assert rc != 0
    assert "CENTRAL_OFFERING_UUID" in output
    assert "Secret site-agent-ldap-password" in output
    assert ("pharos.hpc supports Debian 13 (trixie) with systemd as its init, and pharos-release-login runs debian 12 with systemd"
            in " ".join(output.split())), output[-3000:]


def tampered_copy(destination):
    """release-b with one unit file weakened and its SHA256SUMS left as they were."""
    with tarfile.open(RELEASES / "release-b.tar.gz") as original, tarfile.open(destination, "w:gz") as copy:
        for member in original.getmembers():
            data = original.extractfile(member) if member.isfile() else None
            if member.name.endswith("units/pharos-ssh-access-agent.service"):
                content = data.read().replace(b"NoNewPrivileges=yes", b"NoNewPrivileges=no")
                member.size = len(content)
                data = io.BytesIO(content)
            copy.addfile(member, data)
    return destination


@pytest.mark.parametrize("playbook", ["check.yml", "release.yml"])
def test_a_release_built_for_another_python_is_refused_before_any_change(host, tmp_path, playbook, unchanged):
    host_python = host.check_output("python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'")
    other = "3.11" if host_python != "3.11" else "3.12"
    archive = rebuilt_release_b(tmp_path / "release-b.tar.gz", python_version=other)
    rc, output = run_playbook(playbook, succeed=False, extra_vars={"pharos_release_archive": str(archive)})
    assert rc != 0
    assert ("Release release-b is built for Python %s, and python3 on this host is Python %s" % (other, host_python)
            in " ".join(output.split())), output[-3000:]
    assert not host.file("/opt/pharos-hpc/releases/release-b").exists


def test_a_repacked_release_is_refused_by_its_signature_before_any_change(host, tmp_path, unchanged):
    repacked = tampered_copy(tmp_path / "release-b.tar.gz")
    shutil.copyfile(RELEASES / "release-b.tar.gz.sig", str(repacked) + ".sig")
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_release_archive": str(repacked)})
    assert rc != 0
    assert "is not signed by the pinned release signer" in output
    assert "SHA256SUMS" not in output
    assert not host.file("/opt/pharos-hpc/releases/release-b").exists


def test_an_archive_swapped_on_the_host_after_the_controllers_check_is_refused_there(host, unchanged):
    """release-a's archive and signature, valid both, where the controller checked release-b: the
    module on the host checks the signature again and that it names what the controller checked."""
    host.check_output("install -d -m 0700 /root/swapped && "
                      "cp /var/lib/pharos-hpc/incoming/release-a.tar.gz /root/swapped/release-b.tar.gz && "
                      "cp /var/lib/pharos-hpc/incoming/release-a.tar.gz.sig /root/swapped/release-b.tar.gz.sig")
    checked = "sha256:" + hashlib.sha256((RELEASES / "release-b.tar.gz").read_bytes()).hexdigest()
    try:
        refused = release(host, archive="/root/swapped/release-b.tar.gz", expect_release_id="release-b",
                          expect_archive_sha256=checked, signer_key=(RELEASES / "signer.pub.pem").read_text())
    finally:
        host.check_output("rm -r /root/swapped")
    assert "is not the one the controller checked: its signature names release release-a" in refused["msg"], refused
    assert "the controller checked release release-b, %s" % checked in refused["msg"]
    assert not host.file("/opt/pharos-hpc/releases/release-b").exists


def test_a_tampered_release_the_signer_signed_is_refused_by_its_sums_before_any_change(host, tmp_path, unchanged):
    tampered = tampered_copy(tmp_path / "release-b.tar.gz")
    signed = subprocess.run([sys.executable, str(PROJECT / "scripts" / "pharos-release-sign"),
                             "--key", str(RELEASES / "signer.pem"), "--release-id", "release-b", str(tampered)],
                            capture_output=True, text=True, check=False)
    assert signed.returncode == 0, signed.stderr
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_release_archive": str(tampered)})
    assert rc != 0
    assert "units/pharos-ssh-access-agent.service" in output and "SHA256SUMS" in output
    assert not host.file("/opt/pharos-hpc/releases/release-b").exists


def test_a_virtualenv_changed_after_install_is_refused_before_any_change(host, unchanged):
    agent = host.check_output("ls -d %s/venvs/ssh-access/lib/python3*/site-packages/pharos_ssh_access_standin/__init__.py"
                              % RELEASE_A)
    host.check_output("cp -p %s /root/agent-init.py && echo '# planted' >> %s" % (agent, agent))
    try:
        rc, output = run_playbook("release.yml", succeed=False)
    finally:
        host.check_output("cp -p /root/agent-init.py %s && rm /root/agent-init.py" % agent)
    assert rc != 0
    assert "virtualenvs no longer hold what was installed" in output
    assert "changed " + agent.split("/venvs/", 1)[1] in output
    assert host.service("pharos-ssh-access-agent.service").is_running


def test_a_component_the_release_does_not_carry_cannot_be_activated(host, tmp_path, unchanged):
    site_env = site_env_with(tmp_path / "site.env", ACTIVATION_COMPONENTS="site-agent ssh-access slurm-runtime")
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_site_env_file": site_env})
    assert rc != 0
    assert "slurm-runtime" in output
    assert not host.service("pharos-slurm-runtime.service").is_running


def test_a_release_id_reused_with_other_inputs_is_refused_before_any_change(host, tmp_path, unchanged):
    site_env = site_env_with(tmp_path / "site.env", SLURM_COMPUTE_PARTITION="gh200")
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_site_env_file": site_env})
    assert rc != 0
    assert "Release release-a is installed on this host with other inputs" in output
    assert "SLURM_COMPUTE_PARTITION=compute" in host.file("/etc/pharos-hpc/site.env").content_string


def test_a_site_env_that_disagrees_with_the_inventory_is_refused_naming_both(host, tmp_path, unchanged):
    site_env = site_env_with(tmp_path / "site.env", LDAP_BASE_DN="dc=icarus-hpc,dc=pharos", PHAROS_AGENT_UID="4100009")
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_site_env_file": site_env})
    assert rc != 0
    suffix = host.ansible.get_variables()["pharos_ldap_suffix"]
    assert ("has LDAP_BASE_DN=dc=icarus-hpc,dc=pharos, but the inventory has pharos_ldap_suffix: %s" % suffix
            in output)
    assert "has PHAROS_AGENT_UID=4100009, but the inventory has pharos_agent_uid: 4100001" in output


@pytest.fixture
def other_ldap_password(host):
    """A token directory whose LDAP password is not the one the inventory gave cn=pharos-agent."""
    host.check_output("mkdir -p /root/other-tokens && cp -p /root/pharos-tokens/* /root/other-tokens/ && "
                      "printf 'not-the-vault-password\\n' > /root/other-tokens/site-agent-ldap-password")
    yield "/root/other-tokens"
    host.check_output("rm -r /root/other-tokens")


def test_an_ldap_password_other_than_the_inventorys_is_refused_without_showing_either(host, other_ldap_password,
                                                                                      unchanged):
    rc, output = run_playbook("release.yml", succeed=False, extra_vars={"pharos_token_directory": other_ldap_password})
    assert rc != 0
    assert ("The Site agent's LDAP password in /root/other-tokens/site-agent-ldap-password differs from the "
            "inventory's openldap_agent_password" in output)
    password = host.ansible.get_variables()["openldap_agent_password"]
    assert "not-the-vault-password" not in output and password not in output
