"""`python -m waldur_simulator`, the simulator a lab container's Site agent talks to, run as a process.

Each case reads the launched simulator the way the container will: over TLS verified against
the ca.pem it wrote, with the token it wrote, and through pharos' own health probes.
"""

import ipaddress
import json
import os
import signal
import ssl
import subprocess
import sys
import time

import httpx
import pytest
from conftest import PROJECT
from cryptography import x509

from ansible_collections.pharos.hpc.plugins.module_utils.release.health import offering_active, site_api_answers

OFFERING_UUID = "5eed" * 8
READY_TIMEOUT = 60


class Launched:
    """One simulator process; its ready file as a dict, and what it wrote."""

    def __init__(self, state_dir, *extra):
        self.state_dir = state_dir
        self.process = subprocess.Popen(
            [sys.executable, "-m", "waldur_simulator", "--port", "0", "--site-api-port", "0",
             "--name", "waldur.lab", "--name", "site-api.lab", "--state-dir", str(state_dir),
             "--offering-uuid", OFFERING_UUID, *extra],
            env=dict(os.environ, PYTHONPATH=str(PROJECT / "tests" / "fixtures")),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.ready = self._wait_until_ready()
        self.token = (state_dir / "site-agent-token").read_text().strip()
        self.tls = ssl.create_default_context(cafile=str(state_dir / "ca.pem"))
        self.origin = "https://127.0.0.1:%d" % self.ready["port"]

    def _wait_until_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if (self.state_dir / "ready").exists():
                return json.loads((self.state_dir / "ready").read_text())
            if self.process.poll() is not None:
                raise AssertionError("the simulator exited %d:\n%s"
                                     % (self.process.returncode, self.process.stdout.read()))
            time.sleep(0.1)
        self.process.kill()
        raise AssertionError("the simulator wrote no ready file in %d s" % READY_TIMEOUT)

    def get(self, path, token=None):
        headers = {"Authorization": "Token " + (token or self.token)}
        return httpx.get(self.origin + path, headers=headers, verify=self.tls, timeout=5.0)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=10)
        finally:
            self.process.stdout.close()


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    simulator = Launched(tmp_path_factory.mktemp("simulator"), "--bind", "127.0.0.1")
    yield simulator
    simulator.stop()


def test_the_offering_is_read_over_tls_with_the_written_token_and_ca(launched):
    response = launched.get("/api/marketplace-provider-offerings/%s/" % OFFERING_UUID)
    assert response.status_code == 200
    offering = response.json()
    assert (offering["uuid"], offering["state"], offering["type"]) == (OFFERING_UUID, "Active", "Marketplace.Slurm")
    assert offering["plugin_options"] == {"username_generation_policy": "service_provider",
                                          "service_provider_can_create_offering_user": True}
    (node,) = offering["components"]
    assert {name: node[name] for name in ("type", "name", "billing_type", "measured_unit", "unit_factor",
                                          "limit_period")} == {
        "type": "node", "name": "Node-hours", "billing_type": "limit", "measured_unit": "hours",
        "unit_factor": 60, "limit_period": "total"}


def test_the_token_belongs_to_the_owner_of_the_offerings_customer(launched):
    me = launched.get("/api/users/me/").json()
    assert me["username"] == "pharos-agent"
    assert [(permission["role_name"], permission["scope_uuid"]) for permission in me["permissions"]] \
        == [("CUSTOMER.OWNER", launched.ready["customer_uuid"])]
    assert oct((launched.state_dir / "site-agent-token").stat().st_mode & 0o777) == "0o600"


def test_a_wrong_token_is_refused_with_a_drf_detail(launched):
    response = launched.get("/api/marketplace-provider-offerings/%s/" % OFFERING_UUID, token="0" * 40)
    assert response.status_code == 401 and response.json() == {"detail": "Invalid token."}


def test_pharos_health_probes_find_the_offering_active_and_the_site_api_answering(launched):
    ca_file = str(launched.state_dir / "ca.pem")
    api_url = "https://127.0.0.1:%d/api/" % launched.ready["port"]
    assert offering_active(api_url, launched.token, ca_file, OFFERING_UUID, 5.0) is None
    assert site_api_answers("https://127.0.0.1:%d" % launched.ready["site_api_port"], ca_file, 5.0) is None


def test_the_site_api_stand_in_answers_401_to_a_request_without_credentials(launched):
    response = httpx.get("https://127.0.0.1:%d/" % launched.ready["site_api_port"], verify=launched.tls, timeout=5.0)
    assert response.status_code == 401
    assert response.json() == {"detail": "Authentication credentials were not provided."}


def test_the_certificate_names_the_hosts_and_the_bind_address(launched):
    certificate = x509.load_pem_x509_certificate((launched.state_dir / "server.pem").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["waldur.lab", "site-api.lab"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert launched.ready["api_url"] == "https://waldur.lab:%d/api/" % launched.ready["port"]


def test_sigterm_stops_it_cleanly_and_removes_ready(tmp_path):
    simulator = Launched(tmp_path, "--bind", "127.0.0.1")
    assert simulator.stop() == 0
    assert not (tmp_path / "ready").exists() and (tmp_path / "ca.pem").exists()


def test_bound_to_every_address_it_answers_on_an_address_named_in_its_certificate(tmp_path):
    simulator = Launched(tmp_path, "--bind", "0.0.0.0", "--address", "127.0.0.1")
    try:
        assert simulator.get("/api/marketplace-provider-offerings/%s/" % OFFERING_UUID).json()["state"] == "Active"
        certificate = x509.load_pem_x509_certificate((tmp_path / "server.pem").read_bytes())
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    finally:
        assert simulator.stop() == 0


def test_a_port_already_taken_is_a_sentence_not_a_traceback(launched, tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "waldur_simulator", "--bind", "127.0.0.1", "--port", str(launched.ready["port"]),
         "--name", "waldur.lab", "--state-dir", str(tmp_path), "--offering-uuid", OFFERING_UUID],
        env=dict(os.environ, PYTHONPATH=str(PROJECT / "tests" / "fixtures")),
        capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    assert "cannot listen on 127.0.0.1" in completed.stderr and "Fix: free the port" in completed.stderr


SEED = """\
settings:
  ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT: false
posix_pools: {uid: [5000000, 5499999], gid: [5500000, 5549999]}
tokens:
  - {name: waldur-staff, staff: true}
  - {name: sp-manager, role: CUSTOMER.MANAGER}
customers:
  - name: University
    projects:
      - name: Climate runs
        members:
          - {username: alice, role: PROJECT.MANAGER, ssh_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDq alice"}
          - {username: bob, offering_username: bob01}
          - {username: carol, offering_username: carol01}
          - {username: dave, offering_user_state: Pending account linking}
        orders:
          - {name: Climate 2026, node_hours: 10}
"""


def test_a_seed_file_adds_projects_members_pending_orders_and_tokens(tmp_path):
    seed = tmp_path / "seed.yml"
    seed.write_text(SEED)
    simulator = Launched(tmp_path / "state", "--bind", "127.0.0.1", "--seed", str(seed))
    try:
        (order,) = simulator.get("/api/marketplace-orders/?state=pending-provider").json()
        assert (order["type"], order["resource_name"], order["limits"]) == ("Create", "Climate 2026", {"node": 10})
        team = simulator.get("/api/marketplace-provider-resources/%s/team/" % order["marketplace_resource_uuid"]).json()
        assert sorted((member["username"], member["offering_user_username"]) for member in team) == [
            ("alice", None), ("bob", "bob01"), ("carol", "carol01"), ("dave", None)]
        # Waldur gives each offering user the lowest free UID and primary GID of the provider's pools.
        offering_users = simulator.get("/api/marketplace-offering-users/").json()
        assert sorted((user["user_username"], user["username"], user["state"], user["uidnumber"],
                       user["primarygroup"]) for user in offering_users) == [
            ("bob", "bob01", "OK", 5000000, 5500000), ("carol", "carol01", "OK", 5000001, 5500001),
            ("dave", None, "Pending account linking", 5000002, 5500002)]
        staff = (tmp_path / "state" / "waldur-staff-token").read_text().strip()
        assert simulator.get("/api/users/me/", token=staff).json()["is_staff"] is True
        manager = simulator.ready["token_files"]["sp-manager"]
        roles = simulator.get("/api/users/me/", token=open(manager, encoding="utf-8").read().strip()).json()
        assert [(role["role_name"], role["scope_type"]) for role in roles["permissions"]] == [
            ("CUSTOMER.MANAGER", "service_provider")]
    finally:
        assert simulator.stop() == 0


def started_with_seed(tmp_path, text):
    """The simulator started with a seed file holding text; it must stop before listening."""
    seed = tmp_path / "seed.yml"
    seed.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "waldur_simulator", "--bind", "127.0.0.1", "--port", "0", "--name", "waldur.lab",
         "--state-dir", str(tmp_path / "state"), "--offering-uuid", OFFERING_UUID, "--seed", str(seed)],
        env=dict(os.environ, PYTHONPATH=str(PROJECT / "tests" / "fixtures")),
        capture_output=True, text=True, timeout=60, check=False)


def test_a_seed_with_a_pool_the_wrong_way_round_is_refused_before_listening(tmp_path):
    completed = started_with_seed(tmp_path, "posix_pools: {uid: [5499999, 5000000], gid: [5500000, 5549999]}\n")
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    assert "posix_pools.uid must be [lowest, highest]" in completed.stderr
    assert not (tmp_path / "state" / "ready").exists()


@pytest.mark.parametrize(("entry", "rule"), [
    ("orders: [{name: x, node_hours: -3}]", "orders[0]: name and node_hours"),
    ("members: [{username: x, offering_user_state: OK}]", "members[0]: offering_user_state is one of"),
    ("members: [{username: x, offering_username: x1, offering_user_state: Pending account linking}]",
     "members[0]: offering_user_state is one of"),
], ids=["hours below one", "a state that is not pending", "a pending state beside a username"])
def test_a_wrong_seed_names_the_entry_and_the_rule_before_listening(tmp_path, entry, rule):
    completed = started_with_seed(tmp_path, "customers:\n  - name: University\n    projects:\n      - name: P\n"
                                            "        %s\n" % entry)
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    assert "customers[0].projects[0]." + rule in completed.stderr
    assert not (tmp_path / "state" / "ready").exists()
