"""Fixtures for running pharos.hpc.waldur_offering against the Waldur API simulator over TLS."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]
# The collection is importable as ansible_collections.pharos.hpc through collections/ (a link
# to this checkout), the simulator from tests/fixtures.
sys.path[:0] = [str(PROJECT / "collections"), str(PROJECT / "tests" / "fixtures"), str(PROJECT / "scripts")]

from ansible.module_utils.testing import patch_module_args  # noqa: E402  pylint: disable=wrong-import-position
from waldur_simulator import RecordingHost, WaldurSimulator, make_pki  # noqa: E402  pylint: disable=wrong-import-position

TOKEN = "f00dfeedcafe0123456789abcdef0123456789ab"
SITE_PLUGIN_OPTIONS = {"username_generation_policy": "service_provider",
                       "service_provider_can_create_offering_user": True}


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


class Site:
    """A simulated Waldur holding one provider organisation whose service account owns it.

    Its operators have turned ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT on, so that the owner
    may activate and pause the offering; tests of a default Waldur turn it off again.
    """

    def __init__(self, pki, directory):
        self.pki = pki
        self.waldur = WaldurSimulator(pki)
        self.customer_uuid = self.waldur.add_customer("Icarus provider")
        self.provider_uuid = self.waldur.add_service_provider(self.customer_uuid)
        self.waldur.state.settings["ALLOW_SERVICE_PROVIDER_OFFERING_MANAGEMENT"] = True
        self.category_uuid = self.waldur.add_category("HPC")
        self.user_uuid = self.waldur.add_user("pharos-agent", TOKEN, [
            dict(role_name="CUSTOMER.OWNER", scope_type="customer", scope_uuid=self.customer_uuid)])
        self.token_file = directory / "waldur-token"
        self.token_file.write_text(TOKEN + "\n")
        self.token_file.chmod(0o600)

    def args(self, **overrides):
        arguments = dict(api_url=self.waldur.api_url, token_file=str(self.token_file), ca_file=str(self.pki.ca_file),
                         name="Icarus HPC", customer_uuid=self.customer_uuid, category_uuid=self.category_uuid,
                         allow_create=True, plugin_options=dict(SITE_PLUGIN_OPTIONS), timeout=2.0, retries=3,
                         allow_service_provider_offering_management=True, plan_name="Node-hours")
        arguments.update(overrides)
        return {name: value for name, value in arguments.items() if value is not None}

    def offering(self):
        offerings = list(self.waldur.state.offerings.values())
        assert len(offerings) == 1, "expected one offering, found %d" % len(offerings)
        return offerings[0]


@pytest.fixture
def site(pki, tmp_path):
    site = Site(pki, tmp_path)
    yield site
    site.waldur.close()


@pytest.fixture
def other_host(pki):
    host = RecordingHost(pki)
    yield host
    host.close()


def run_module(arguments, check=False):
    """main() of the module in this process, as Ansible would call it; returns its JSON result."""
    from ansible_collections.pharos.hpc.plugins.modules import waldur_offering  # pylint: disable=import-outside-toplevel

    payload = dict(arguments, _ansible_check_mode=check, _ansible_diff=True)
    output = io.StringIO()
    with patch_module_args(payload), contextlib.redirect_stdout(output), pytest.raises(SystemExit):
        waldur_offering.main()
    return json.loads(output.getvalue())


def run_ansible(arguments, *options):
    """The module as Ansible really runs it: `ansible localhost -m pharos.hpc.waldur_offering`."""
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(PROJECT / "collections"),
                       ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
                       ANSIBLE_FORCE_COLOR="false", ANSIBLE_NOCOLOR="true")
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "ansible"), "localhost", "-i", "localhost,", "-c", "local",
         "-e", "ansible_python_interpreter=%s" % sys.executable,
         "-m", "pharos.hpc.waldur_offering", "-a", json.dumps(arguments), *options],
        cwd=PROJECT, env=environment, capture_output=True, text=True, timeout=120, check=False)
    try:
        report = json.loads(completed.stdout)
    except ValueError:
        raise AssertionError("ansible printed no JSON:\n%s\n%s" % (completed.stdout, completed.stderr)) from None
    return report["plays"][0]["tasks"][0]["hosts"]["localhost"], completed
