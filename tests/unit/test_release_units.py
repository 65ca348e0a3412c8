"""The release's unit files: hardened as docs/release.md lists ("The unit files"), fixed service
accounts, bearers as credentials, and accepted by systemd itself."""

import shutil
import subprocess

import pytest

UNITS = {
    "waldur-site-agent@.service": {"user": "pharos-agent", "component": "site-agent", "entry_point": "waldur_site_agent",
                                   "credential": "waldur-site-agent-config.yaml"},
    "pharos-ssh-access-agent.service": {"user": "pharos-ssh-access", "component": "ssh-access",
                                        "entry_point": "pharos-ssh-access-agent", "credential": "ssh-access-site-token"},
}
# docs/release.md, "The unit files": the hardening, with the system call filter.
HARDENING = {
    "NoNewPrivileges": "yes", "CapabilityBoundingSet": "", "AmbientCapabilities": "", "ProtectSystem": "strict",
    "ProtectHome": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes", "RestrictSUIDSGID": "yes",
    "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes",
    "ProtectControlGroups": "yes", "ProtectClock": "yes", "ProtectHostname": "yes", "RestrictNamespaces": "yes",
    "RestrictRealtime": "yes", "LockPersonality": "yes", "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
    "SystemCallArchitectures": "native",
}


def directives(path):
    """{name: [values]} of a unit file's [Service] section (a directive may repeat)."""
    found, section = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "Service" and "=" in line and not line.startswith("#"):
            name, value = line.split("=", 1)
            found.setdefault(name, []).append(value)
    return found


@pytest.fixture(params=sorted(UNITS), ids=sorted(UNITS))
def unit(request, project):
    return request.param, directives(project / "release" / "units" / request.param)


def test_every_unit_carries_each_hardening_directive(unit):
    name, service = unit
    missing = {key: value for key, value in HARDENING.items() if service.get(key) != [value]}
    assert missing == {}, "%s lacks or changes %s" % (name, missing)
    assert "@system-service" in service["SystemCallFilter"]


def test_every_unit_runs_as_its_fixed_service_account_never_root(unit):
    name, service = unit
    assert service["User"] == service["Group"] == [UNITS[name]["user"]]


def test_every_unit_takes_its_bearer_as_a_credential_from_the_root_only_secrets(unit):
    name, service = unit
    credential = UNITS[name]["credential"]
    assert service["LoadCredential"] == ["%s:/etc/pharos-hpc/secrets/%s" % (credential, credential)]
    assert all(credential not in value for value in service["EnvironmentFile"])


def test_every_unit_runs_its_components_entry_point_through_the_stable_path(unit):
    name, service = unit
    command = service["ExecStart"][0].split()
    assert command[0] == "/opt/pharos-hpc/%s/bin/%s" % (UNITS[name]["component"], UNITS[name]["entry_point"])


def test_the_site_agent_runs_one_instance_per_mode_with_its_configuration_from_the_credential(project):
    service = directives(project / "release" / "units" / "waldur-site-agent@.service")
    # waldur_site_agent's own options (waldur_site_agent.common.utils.init_configuration).
    assert service["ExecStart"][0].split()[1:] == ["--mode", "%i", "--config-file", "%d/waldur-site-agent-config.yaml"]
    assert service["StateDirectory"] == ["pharos-site-agent/%i"] and service["StateDirectoryMode"] == ["0700"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units_apart_from_the_programs_a_release_installs_later(project, tmp_path):
    for name in UNITS:
        instance = name.replace("@.", "@report.")
        shutil.copyfile(project / "release" / "units" / name, tmp_path / instance)
        completed = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / instance)],
                                   capture_output=True, text=True, timeout=60, check=False)
        complaints = [line for line in (completed.stdout + completed.stderr).splitlines()
                      if line and "is not executable: No such file or directory" not in line]
        assert complaints == [], complaints
