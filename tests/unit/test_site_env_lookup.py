"""The pharos.hpc.site_env lookup, as a playbook calls it: one ansible-playbook run whose tasks
each read a site.env, and the tests read their results."""

import pytest
from lookup_playbook import PROJECT, lookup_results
from release_builder.archive import dump_manifest

MANIFEST = {"format": 1, "release_id": "2026.11.0", "dependency_mode": "index", "python_version": "3.13",
            "site_env_example": "site.env.example",
            "components": {"site-agent": {"requirements": "requirements/site-agent.txt",
                                          "units": ["units/waldur-site-agent@.service"],
                                          "entry_points": ["waldur_site_agent"]}}}
EXAMPLE = "docs/examples/site.env.example"
TASKS = {
    "good": "lookup('pharos.hpc.site_env', '%s', components=['site-agent', 'ssh-access'])" % EXAMPLE,
    "manifest": "lookup('pharos.hpc.site_env', '%s', manifest=manifest)" % EXAMPLE,
    "missing": "lookup('pharos.hpc.site_env', 'absent/site.env')",
    "unnamed": "lookup('pharos.hpc.site_env', pharos_site_env_file | default(''))",
    "pasted": "lookup('pharos.hpc.site_env', pasted)",
}
# A token pasted over a line of site.env, padded base64 as a token file holds it.
PASTED_TOKEN = "c2l0ZS1hZ2VudC10b2tlbi1vZi10aGUtbGFi"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    directory = tmp_path_factory.mktemp("lookup")
    (directory / "manifest.yml").write_text(dump_manifest(MANIFEST))
    example = (PROJECT / EXAMPLE).read_text()
    (directory / "pasted.env").write_text(example.replace("\nWALDUR_API_URL=", "\n%s==\n#" % PASTED_TOKEN, 1))
    return lookup_results(directory, TASKS, variables={"manifest": str(directory / "manifest.yml"),
                                                       "pasted": str(directory / "pasted.env")})


def test_a_good_site_env_gives_its_literal_values(results):
    values = results["good"]["msg"]
    assert not results["good"].get("failed"), values
    assert len(values) == 21 and values["CENTRAL_SITE_API_URL"] == "https://site.example.org"
    assert values["SITE_AGENT_MODES"] == "order_process membership_sync report"


def test_the_manifest_supplies_the_components_and_the_dependency_mode_and_every_violation_is_named(results):
    assert results["manifest"]["failed"] is True
    message = results["manifest"]["msg"]
    assert "docs/examples/site.env.example is refused (2 problems)" in message
    assert "line 57: ACTIVATION_COMPONENTS names ssh-access, which is not one of site-agent" in message
    assert "PYTHON_INDEX_URL is missing" in message


def test_a_missing_file_is_named(results):
    assert results["missing"]["failed"] is True
    assert "cannot read absent/site.env: No such file or directory" in results["missing"]["msg"]


def test_an_unset_site_env_file_names_the_variable_to_set(results):
    assert results["unnamed"]["failed"] is True
    assert "no site.env is named. Fix: set pharos_site_env_file" in results["unnamed"]["msg"]
    assert "directory" not in results["unnamed"]["msg"]


def test_a_token_pasted_into_site_env_is_refused_by_its_line_without_printing_it(results):
    assert results["pasted"]["failed"] is True
    message = results["pasted"]["msg"]
    assert "does not start with a key" in message and "WALDUR_API_URL is missing" in message
    assert PASTED_TOKEN[:8] not in message and PASTED_TOKEN[-8:] not in message, message
