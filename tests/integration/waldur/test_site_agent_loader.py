"""The upstream waldur_site_load_components (waldur-site-agent 1.0.7) against the simulator.

A Site may run the upstream loader against the Site agent's configuration, which gives an
offering made before the node component existed that component (docs/waldur_offering.md,
"Upstream waldur_site_load_components"). This proves the loader and pharos.hpc.waldur_offering
agree on the node component, so neither undoes the other.
"""

import os
import subprocess
import sys

import pytest
import yaml
from conftest import PROJECT, TOKEN, run_module

REQUIREMENTS = PROJECT / "tests" / "integration" / "waldur" / "site-agent-requirements.txt"
AGENT_NODE_COMPONENT = {"measured_unit": "hours", "accounting_type": "limit", "label": "Node-hours",
                        "unit_factor": 60, "limit_period": "total"}


@pytest.fixture(scope="session")
def site_agent():
    """A virtualenv with the pinned Site agent, built once under .cache/ (gitignored)."""
    venv = PROJECT / ".cache" / "waldur-site-agent-1.0.7"
    loader = venv / "bin" / "waldur_site_load_components"
    marker = venv / ".installed"
    if not marker.exists() or marker.read_text() != REQUIREMENTS.read_text():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=120)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "-r", str(REQUIREMENTS)],
                       check=True, timeout=600)
        marker.write_text(REQUIREMENTS.read_text())
    return loader


def run_loader(loader, site, offering_uuid, tmp_path):
    configuration = {"offerings": [{
        "name": "Icarus HPC", "waldur_api_url": site.waldur.api_url, "waldur_api_token": TOKEN,
        "waldur_offering_uuid": offering_uuid, "backend_type": "slurm",
        "backend_settings": {"default_account": "pharos_default", "customer_prefix": "pharos_c_",
                             "project_prefix": "pharos_p_", "allocation_prefix": "pharos_a_"},
        "backend_components": {"node": AGENT_NODE_COMPONENT}}]}
    path = tmp_path / "waldur-site-agent-config.yaml"
    path.write_text(yaml.safe_dump(configuration))
    path.chmod(0o600)
    site.waldur.requests.clear()
    completed = subprocess.run([str(loader), "--config-file", str(path)], capture_output=True, text=True,
                               timeout=120, check=False,
                               env=dict(os.environ, SSL_CERT_FILE=str(site.pki.ca_file)))
    # The loader logs a failed call and still exits 0: read its log and what Waldur received.
    assert completed.returncode == 0, completed.stderr
    assert "Unable to create or update" not in completed.stdout + completed.stderr, completed.stdout
    return [(method, path.rsplit("/", 2)[-2]) for method, path, _body in site.waldur.writes()]


def test_after_the_upstream_loader_updates_the_node_component_the_module_reports_zero_changed(
        site, site_agent, tmp_path):
    first = run_module(site.args())
    assert first["changed"] is True
    writes = run_loader(site_agent, site, site.offering()["uuid"], tmp_path)
    assert writes == [("POST", "update_offering_component")]
    assert site.offering()["components"][0]["unit_factor"] == 60
    again = run_module(site.args())
    assert again["changed"] is False and again["actions"] == [], again["actions"]


def test_a_node_component_the_loader_created_gets_the_sites_unit_factor_in_one_update(site, site_agent, tmp_path):
    run_module(site.args(components=[]))
    writes = run_loader(site_agent, site, site.offering()["uuid"], tmp_path)
    assert writes == [("POST", "create_offering_component")]
    # waldur-site-agent 1.0.7 does not send unit_factor, so Waldur stores its default.
    assert site.offering()["components"][0]["unit_factor"] == 1
    result = run_module(site.args())
    assert [action["action"] for action in result["actions"]] == ["update_offering_component"]
    assert "unit_factor 1 -> 60" in result["actions"][0]["summary"]
    assert run_module(site.args())["changed"] is False
