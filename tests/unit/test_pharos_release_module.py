"""The pharos_release module as Ansible calls it: arguments in, one JSON result out."""

import contextlib
import io
import json

import certifi
import pytest
from ansible.module_utils.testing import patch_module_args
from release_host_support import (
    SIGNER_PUBLIC, RecordingSystemd, install_release, pack_release, sign_archive, tree, write_site_env)

from ansible_collections.pharos.hpc.plugins.modules import pharos_release

TOKEN = "0123456789abcdef0123456789abcdef01234567"


def run_module(arguments, check=False):
    output = io.StringIO()
    with patch_module_args(dict(arguments, _ansible_check_mode=check, _ansible_diff=True)), \
            contextlib.redirect_stdout(output), pytest.raises(SystemExit):
        pharos_release.main()
    return json.loads(output.getvalue()), output.getvalue()


def test_check_mode_predicts_the_stage_of_an_archive_and_writes_nothing(root, tmp_path):
    archive = pack_release(tmp_path, "r1")
    write_site_env(root)
    before = tree(str(root))
    result, _text = run_module(dict(state="present", archive=str(archive), root=str(root),
                                    signer_key=SIGNER_PUBLIC.decode("ascii")), check=True)
    assert result["changed"] is True and [step["step"] for step in result["steps"]] == ["stage", "record_signer"]
    assert result["release_id"] == "r1" and tree(str(root)) == before


def test_a_tampered_archive_is_refused_in_check_mode_as_in_a_real_run(root, tmp_path):
    archive = pack_release(tmp_path, "r1")
    write_site_env(root)
    tree_root = tmp_path / "tree-r1" / "r1"
    (tree_root / "units" / "pharos-ssh-access-agent.service").write_text("[Service]\nExecStart=/bin/false\n")
    from release_builder import archive as release_archive  # pylint: disable=import-outside-toplevel
    release_archive.pack(str(tree_root), str(archive), "r1")
    sign_archive(archive, "r1")   # the signer signed it all the same: SHA256SUMS refuses it
    result, _text = run_module(dict(state="present", archive=str(archive), root=str(root),
                                    signer_key=SIGNER_PUBLIC.decode("ascii")), check=True)
    assert result["failed"] and "does not match its SHA-256 in SHA256SUMS: it was altered" in result["msg"]


def test_the_waldur_token_never_reaches_the_result_when_the_offering_probe_fails(root, tmp_path, monkeypatch):
    layout = install_release(root, "r1")
    monkeypatch.setattr(pharos_release, "Systemctl", lambda *arguments: RecordingSystemd(layout))
    token_file = tmp_path / "site-agent-token"
    token_file.write_text(TOKEN + "\n")
    result, text = run_module(dict(
        release_id="r1", components=["ssh-access"], root=str(root), probes=["units", "offering"],
        waldur_url="https://127.0.0.1:9/api/" + TOKEN + "/", token_file=str(token_file), offering_uuid="ab" * 16,
        ca_file=certifi.where(),
        health_timeout=0.5, health_settle=0))
    assert result["failed"] and "No release was active before; the host is back to that" in result["msg"]
    assert "offering: the offering could not be read through the Site agent's token: Waldur at 127.0.0.1" in result["msg"]
    assert TOKEN not in text and "********" in result["msg"], "the URL carried the token; it must be masked"


def test_an_unreadable_ca_file_fails_the_probe_and_still_restores(root, tmp_path, monkeypatch):
    layout = install_release(root, "r1")
    monkeypatch.setattr(pharos_release, "Systemctl", lambda *arguments: RecordingSystemd(layout))
    token_file = tmp_path / "site-agent-token"
    token_file.write_text(TOKEN + "\n")
    not_a_ca = tmp_path / "ca.crt"
    not_a_ca.write_text("not a certificate\n")
    result, text = run_module(dict(
        release_id="r1", components=["ssh-access"], root=str(root), probes=["units", "offering"],
        waldur_url="https://127.0.0.1:9/api/", token_file=str(token_file), ca_file=str(not_a_ca),
        offering_uuid="ab" * 16, health_timeout=0.5, health_settle=0))
    assert result["failed"] and "the offering could not be read: SSLError" in result["msg"]
    assert "the host is back to that" in result["msg"] and not (root / "opt" / "pharos-hpc" / "current").exists()
    assert TOKEN not in text
