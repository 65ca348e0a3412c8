"""The agents' secrets read from a host so that status.yml masks them in what their journals
show: each token file's lines, the secret values of the Site agent's configuration, and nothing
that is public or reached through a link."""

import os

from ansible_collections.pharos.hpc.plugins.module_utils.release.agent_secrets import read_secrets

CONFIG = """offerings:
  - name: Icarus HPC
    waldur_api_url: https://waldur.example/api/
    waldur_api_token: 0123456789abcdef0123456789abcdef01234567
    backend_settings:
      ldap:
        bind_dn: cn=pharos-agent,ou=services,ou=pharos,dc=pharos,dc=lab
        bind_password: lab-only-pharos-agent-password
"""


def test_token_files_and_the_site_agents_secret_values_are_read(tmp_path):
    (tmp_path / "ssh-access-site-token").write_text("ssh-access-token-value\n")
    (tmp_path / "waldur-site-agent-config.yaml").write_text(CONFIG)
    assert read_secrets([str(tmp_path)]) == {"ssh-access-token-value", "0123456789abcdef0123456789abcdef01234567",
                                             "lab-only-pharos-agent-password"}


def test_certificates_and_the_configurations_other_values_are_not_masked(tmp_path):
    (tmp_path / "site-agent-ca.crt").write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    (tmp_path / "waldur-site-agent-config.yaml").write_text(CONFIG)
    found = read_secrets([str(tmp_path)])
    assert not {"Icarus HPC", "https://waldur.example/api/", "MIIB"} & found and len(found) == 2


def test_a_link_or_a_missing_directory_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.write_text("not-a-secret-of-the-agents\n")
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    os.symlink(outside, secrets / "site-agent-token")
    (secrets / "site-agent-ldap-password").write_text("ldap-password\n")
    assert read_secrets([str(secrets), str(tmp_path / "missing")]) == {"ldap-password"}
