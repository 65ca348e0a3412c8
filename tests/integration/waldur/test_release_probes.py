"""pharos_release's health probes against the Waldur API simulator: real TLS against a test CA,
a real token, and a redirect to another host that must not be followed."""

import sys
from pathlib import Path

import pytest

# The release helpers of the unit tests: small releases in a temporary root, a recording systemd.
sys.path.append(str(Path(__file__).resolve().parents[2] / "unit"))

# pylint: disable=wrong-import-position
from conftest import TOKEN  # noqa: E402
from release_host_support import (  # noqa: E402
    SSH_UNIT, Clock, RecordingSystemd, install_release, params, read_record, remove)

from ansible_collections.pharos.hpc.plugins.module_utils.release.health import (  # noqa: E402
    offering_active, site_api_answers)
from ansible_collections.pharos.hpc.plugins.module_utils.release.run import RunError, run  # noqa: E402
from waldur_simulator import make_pki  # noqa: E402


def no_sleep(_seconds):
    """Retries back off in real runs; here they need not wait."""


@pytest.fixture
def offering(site):
    """The Site's offering, Active, as pharos.hpc.waldur_offering leaves it."""
    state = site.waldur.state
    offering_uuid = "ab" * 16
    state.offerings[offering_uuid] = {
        "uuid": offering_uuid, "url": site.waldur.api_url + "marketplace-provider-offerings/%s/" % offering_uuid,
        "created": "2026-11-01T00:00:00+00:00", "name": "Icarus HPC", "type": "Marketplace.Slurm", "description": "",
        "backend_id": "", "customer": site.waldur.api_url + "customers/%s/" % site.customer_uuid,
        "customer_uuid": site.customer_uuid, "customer_name": "Icarus provider",
        "category": site.waldur.api_url + "marketplace-categories/%s/" % site.category_uuid,
        "category_uuid": site.category_uuid, "category_title": "HPC", "state": "Active", "paused_reason": "",
        "shared": True, "billable": True, "plugin_options": {}, "secret_options": {},
        "options": {"order": [], "options": {}}, "components": [], "plans": []}
    return state.offerings[offering_uuid]


def probe_offering(site, offering, token=TOKEN, ca_file=None):
    return offering_active(site.waldur.api_url, token, str(ca_file or site.pki.ca_file), offering["uuid"], 2.0,
                           sleep=no_sleep)


def test_an_active_offering_read_through_the_agents_token_and_ca_is_healthy(site, offering):
    assert probe_offering(site, offering) is None
    assert site.waldur.requests[-1][:2] == ("GET", "/api/marketplace-provider-offerings/%s/" % offering["uuid"])


def test_a_paused_offering_is_unhealthy_and_the_message_says_how_to_activate_it(site, offering):
    offering["state"] = "Paused"
    message = probe_offering(site, offering)
    assert "is Paused, not Active" in message and "pharos.hpc.waldur_offering state: active" in message


def test_a_refused_token_is_unhealthy_and_the_token_is_never_quoted(site, offering):
    message = probe_offering(site, offering, token="not-the-agents-token-0123456789")
    assert "HTTP 401" in message and "not-the-agents-token" not in message and TOKEN not in message


def test_the_offering_probe_does_not_trust_a_server_outside_its_ca(site, offering, tmp_path):
    other = make_pki(tmp_path)
    message = probe_offering(site, offering, ca_file=other.ca_file)
    assert "could not connect" in message and "CERTIFICATE_VERIFY_FAILED" in message


def test_the_offering_probe_does_not_follow_a_redirect_and_sends_the_token_nowhere_else(site, offering, other_host):
    site.waldur.faults.redirect_next(1, other_host.origin)
    message = probe_offering(site, offering)
    assert "redirect to 127.0.0.2" in message and "not followed" in message
    assert other_host.received == []


def test_the_site_api_answering_401_over_tls_against_its_ca_is_healthy(site):
    assert site_api_answers(site.waldur.origin, str(site.pki.ca_file), 2.0, sleep=no_sleep) is None


def test_the_site_api_probe_sends_no_credential(site, other_host):
    assert site_api_answers(other_host.origin, str(site.pki.ca_file), 2.0, sleep=no_sleep) is None
    assert other_host.received == [("GET", "/", None)]


def test_a_site_api_outside_its_ca_is_unhealthy(site, tmp_path):
    other = make_pki(tmp_path)
    message = site_api_answers(site.waldur.origin, str(other.ca_file), 2.0, retries=0, sleep=no_sleep)
    assert "could not be reached over verified TLS" in message and "CERTIFICATE_VERIFY_FAILED" in message


def test_a_site_api_redirect_is_not_followed_and_is_unhealthy(site, other_host):
    site.waldur.faults.redirect_next(1, other_host.origin, status=302)
    message = site_api_answers(site.waldur.origin, str(site.pki.ca_file), 2.0, sleep=no_sleep)
    assert "answered HTTP 302, a redirect to 127.0.0.2; it was not followed" in message
    assert other_host.received == []


def test_a_site_api_whose_backend_fails_is_unhealthy_after_the_retries(site):
    site.waldur.faults.fail_next(3, status=502)
    message = site_api_answers(site.waldur.origin, str(site.pki.ca_file), 2.0, retries=2, sleep=no_sleep)
    assert "answered HTTP 502: the edge is up, its backend is not (tried 3 times)" in message


def test_a_site_api_url_in_clear_is_refused_before_any_request():
    assert "is not https://" in site_api_answers("http://127.0.0.1:1", None, 2.0)


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    yield root
    remove(root)


def test_an_activation_whose_offering_is_not_active_restores_the_earlier_release(site, offering, root):
    layout = install_release(root, "r1")
    install_release(root, "r2")
    systemd = RecordingSystemd(layout)
    clock = Clock()
    health = dict(probes=["units", "offering", "site_api"], waldur_url=site.waldur.api_url,
                  token_file=str(site.token_file), ca_file=str(site.pki.ca_file), offering_uuid=offering["uuid"],
                  site_api_url=site.waldur.origin, site_api_ca_file=str(site.pki.ca_file))
    read = []

    def read_token(path):
        read.append(path)
        return Path(path).read_text().strip()

    first = run(params(root, release_id="r1", **health), systemd, None, False, read_token, clock.sleep, clock)
    assert [probe["ok"] for probe in first["health"]] == [True, True, True] and read == [str(site.token_file)]
    offering["state"] = "Paused"
    with pytest.raises(RunError) as raised:
        run(params(root, release_id="r2", **health), systemd, None, False, read_token, clock.sleep, clock)
    message = str(raised.value)
    assert "offering: offering Icarus HPC" in message and "The earlier release r1 is active again" in message
    assert TOKEN not in message and TOKEN not in repr(raised.value.result)
    assert read_record(layout)["release_id"] == "r1" and systemd.active[SSH_UNIT] == "active"
