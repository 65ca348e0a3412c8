"""The pharos.hpc.release_archive lookup, as the release role's preflight calls it, when the
inventory leaves the signer's key unset or names something that is not a key: the message names
the variable to set, not the working directory."""

import pytest
from lookup_playbook import lookup_results

TASKS = {
    "unset": "lookup('pharos.hpc.release_archive', 'absent.tar.gz', signer_key=pharos_release_signer_key | default(''))",
    "a directory": "lookup('pharos.hpc.release_archive', 'absent.tar.gz', signer_key='release')",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return lookup_results(tmp_path_factory.mktemp("lookup"), TASKS)


def test_an_unset_signer_key_names_the_variable_to_set(results):
    assert results["unset"]["failed"] is True
    message = results["unset"]["msg"]
    assert "no release signer is pinned. Fix: set pharos_release_signer_key" in message
    assert "directory" not in message


def test_a_signer_key_that_is_a_directory_is_named_with_the_variable_to_set(results):
    assert results["a directory"]["failed"] is True
    message = results["a directory"]["msg"]
    assert "the pinned release signer key release cannot be read (Is a directory)" in message
    assert "Fix: set pharos_release_signer_key" in message
