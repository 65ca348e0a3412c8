"""The shell that ships passes shellcheck: the root Prologs and the job-side scratch check as
the roles render them for the lab Site, and the project's own shell scripts."""

import shutil
import subprocess

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from conftest import PROJECT

TEMPLATES = [
    "roles/scratch/templates/scratch-prolog.sh.j2",
    "roles/scratch/templates/scratch-attempt.sh.j2",
    "roles/job_identity/templates/job-identity-prolog.sh.j2",
]
SCRIPTS = ["scripts/sanity", "scripts/docs-lint", "scripts/artifact-check", "scripts/installed-check",
           "scripts/installed-artifact.sh",
           "scripts/lab-member-key", "roles/slurm/files/pharos-slurm-resolve-users"]


def shellcheck(path):
    if not shutil.which("shellcheck"):
        pytest.fail("shellcheck is not installed: `make test` installs Debian's shellcheck package")
    # -x, from the project's top: the files a script sources are checked with it.
    return subprocess.run(["shellcheck", "-x", "--format=gcc", str(path)], cwd=PROJECT, capture_output=True, text=True,
                          check=False)


def lab_variables():
    """The values playbooks/site.yml passes the roles for the lab Site, over the roles' defaults."""
    site = yaml.safe_load((PROJECT / "inventories/lab/group_vars/all/site.yml").read_text())
    variables = {"ansible_managed": "Managed by Ansible (pharos.hpc)", "groups": {"login": ["pharos-lab-login"]}}
    for role in ("scratch", "job_identity"):
        variables.update(yaml.safe_load((PROJECT / "roles" / role / "defaults/main.yml").read_text()))
    variables.update(
        scratch_root=site["pharos_scratch_root"],
        scratch_member_uid_min=site["pharos_member_uid_min"],
        scratch_member_uid_max=site["pharos_member_uid_max"],
        job_identity_member_uid_min=site["pharos_member_uid_min"],
        job_identity_member_uid_max=site["pharos_member_uid_max"],
        job_identity_member_gid_min=site["pharos_member_gid_min"],
        job_identity_member_gid_max=site["pharos_member_gid_max"],
    )
    return variables


@pytest.mark.parametrize("template", TEMPLATES)
def test_rendered_prolog_passes_shellcheck(template, tmp_path):
    templar = Templar(loader=DataLoader(), variables=lab_variables())
    rendered = templar.template(trust_as_template((PROJECT / template).read_text()))
    assert rendered.startswith("#!/bin/sh\n"), "shellcheck picks the dialect from the shebang"
    assert "{{" not in rendered and "{%" not in rendered
    script = tmp_path / template.rsplit("/", 1)[1].removesuffix(".j2")
    script.write_text(rendered)

    result = shellcheck(script)

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("script", SCRIPTS)
def test_project_script_passes_shellcheck(script):
    result = shellcheck(PROJECT / script)
    assert result.returncode == 0, result.stdout + result.stderr


def test_shellcheck_finds_what_it_is_asked_to_find(tmp_path):
    """The check above can fail: an unquoted expansion in a POSIX script is reported."""
    script = tmp_path / "unsafe.sh"
    script.write_text('#!/bin/sh\nrm -rf $1/scratch\n')
    result = shellcheck(script)
    assert result.returncode != 0 and "SC2086" in result.stdout
