"""The Site converged on one node: what a person relies on, checked on the real host."""

import pytest

testinfra_hosts = ["ansible://all"]


def test_munge_credential_round_trips(host):
    encoded = host.run("munge -n -s pharos-probe")
    assert encoded.rc == 0, encoded.stderr
    decoded = host.run(f"echo {encoded.stdout.strip()} | unmunge")
    assert decoded.rc == 0, decoded.stderr
    assert "STATUS:          Success (0)" in decoded.stdout
    assert "pharos-probe" in decoded.stdout


def test_munge_key_is_readable_by_munge_alone(host):
    key = host.file("/etc/munge/munge.key")
    assert key.user == "munge"
    assert key.group == "munge"
    assert key.mode == 0o400


@pytest.mark.parametrize("account", ["nobody", "www-data"])
def test_service_accounts_cannot_read_the_munge_key(host, account):
    assert host.run(f"runuser -u {account} -- cat /etc/munge/munge.key").rc != 0

