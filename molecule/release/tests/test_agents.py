"""The real release, activated by playbooks/release.yml: the upstream Site agent's three modes and
the SSH access agent run as their own users from a read-only release, with seed 002's secrets."""

import re

import pytest
from scenario import ALL_UNITS, SITE_AGENT_UNITS, SSH_ACCESS_UNIT, current

testinfra_hosts = ["ansible://login"]

UNIT_USERS = [(unit, "pharos-agent") for unit in SITE_AGENT_UNITS] + [(SSH_ACCESS_UNIT, "pharos-ssh-access")]


@pytest.mark.parametrize("unit, user", UNIT_USERS)
def test_each_agent_unit_is_active_and_runs_as_its_own_user_never_root(host, unit, user):
    assert host.service(unit).is_running and host.service(unit).is_enabled
    pid = host.check_output("systemctl show --property=MainPID --value %s", unit)
    assert host.check_output("ps -o user= -p %s", pid).strip() == user


def test_the_site_agent_runs_the_upstream_release_from_the_current_release(host):
    assert current(host) == "/opt/pharos-hpc/releases/release-a"
    version = host.check_output("/opt/pharos-hpc/site-agent/bin/python -c "
                                "'import importlib.metadata as m; print(m.version(\"waldur-site-agent\"))'")
    assert version == "1.0.8rc9"
    command = host.check_output("systemctl show --property=ExecStart --value waldur-site-agent@report.service")
    assert "/opt/pharos-hpc/site-agent/bin/waldur_site_agent" in command and "--mode report" in command


def test_the_site_agent_modes_poll_every_minute(host):
    environment = host.file("/etc/pharos-hpc/site-agent.env").content_string
    for mode in ("ORDER_PROCESS", "MEMBERSHIP_SYNC", "REPORT"):
        assert "WALDUR_SITE_AGENT_%s_PERIOD_MINUTES=1\n" % mode in environment


def test_the_installed_release_cannot_be_written_by_the_agents(host):
    for user in ("pharos-agent", "pharos-ssh-access"):
        assert host.run("runuser -u %s -- touch /opt/pharos-hpc/releases/release-a/release/x" % user).rc != 0
    assert host.file("/opt/pharos-hpc/releases/release-a/release/manifest.yml").mode == 0o444


@pytest.mark.parametrize("path, owner, group, mode", [
    ("/etc/pharos-hpc/secrets", "root", "root", 0o700),
    ("/etc/pharos-hpc/secrets/site-agent-token", "root", "root", 0o400),
    ("/etc/pharos-hpc/secrets/site-agent-ldap-password", "root", "root", 0o400),
    ("/etc/pharos-hpc/secrets/ssh-access-site-token", "root", "pharos-ssh-access", 0o640),
    ("/etc/pharos-hpc/secrets/site-agent-ca.crt", "root", "root", 0o644),
    ("/etc/pharos-hpc/secrets/site-api-ca.crt", "root", "root", 0o644),
    ("/etc/pharos-hpc/secrets/waldur-site-agent-config.yaml", "root", "root", 0o400),
    ("/etc/pharos-hpc/site-agent-ca.crt", "root", "root", 0o644),
    ("/etc/pharos-hpc/site-api-ca.crt", "root", "root", 0o644),
])
def test_secrets_and_public_trust_have_seed_002_owners_and_modes(host, path, owner, group, mode):
    found = host.file(path)
    assert (found.user, found.group, found.mode) == (owner, group, mode)


@pytest.mark.parametrize("name", ["site-agent-token", "site-agent-ldap-password", "ssh-access-site-token",
                                  "site-agent-ca.crt", "site-api-ca.crt"])
def test_secrets_are_adopted_unchanged_from_the_token_directory(host, name):
    assert (host.file("/etc/pharos-hpc/secrets/%s" % name).sha256sum
            == host.file("/root/pharos-tokens/%s" % name).sha256sum)


def test_the_agents_cannot_read_any_secret_directly(host):
    for user in ("pharos-agent", "pharos-ssh-access"):
        assert host.run("runuser -u %s -- cat /etc/pharos-hpc/secrets/site-agent-token" % user).rc != 0
        assert host.run("runuser -u %s -- cat /etc/pharos-hpc/secrets/ssh-access-site-token" % user).rc != 0


def test_the_readable_configuration_names_no_secret_and_the_credential_holds_them(host):
    token = host.file("/etc/pharos-hpc/secrets/site-agent-token").content_string.strip()
    password = host.file("/etc/pharos-hpc/secrets/site-agent-ldap-password").content_string.strip()
    readable = host.file("/etc/pharos-hpc/site-agent.yaml").content_string
    credential = host.file("/etc/pharos-hpc/secrets/waldur-site-agent-config.yaml").content_string
    assert token not in readable and password not in readable
    assert "waldur_api_token: %s" % token in credential and "bind_password: %s" % password in credential
    assert "unit_factor: 60" in readable and "allocation_prefix: pharos_a_" in readable


def test_no_agent_logs_a_traceback(host):
    journal = host.check_output("journalctl --no-pager -o cat %s", " ".join("-u " + unit for unit in ALL_UNITS))
    assert "Traceback" not in journal, journal[-3000:]


def test_systemd_rates_every_agent_unit_ok_or_better(host):
    for unit in ALL_UNITS:
        rating = host.check_output("systemd-analyze security --no-pager %s | tail -1", unit)
        print("%s: %s" % (unit, rating))
        exposure = float(re.search(r"exposure level for \S+: ([0-9.]+)", rating).group(1))
        assert exposure <= 2.0, rating
