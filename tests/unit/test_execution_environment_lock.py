"""The execution environment (execution-environment/) installs every Python package at one
version, from wheels checked against their SHA-256 (requirements-locked.txt, written by
scripts/ee-lock), and is built only on a base image named by digest."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import PROJECT

EE = PROJECT / "execution-environment"
DEFINITION = yaml.safe_load((EE / "execution-environment.yml").read_text())
# The virtualenv's own, as make runs the tests, or the one on PATH (.venv's, for .venv-newest's run).
BUILDER = shutil.which("ansible-builder", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
ENTRY = re.compile(r"^(?P<name>[a-z0-9][a-z0-9.-]*)==(?P<version>[^\s\\]+)(?P<hashes>(?: \\\n    --hash=sha256:[0-9a-f]{64})+)$",
                   re.MULTILINE)


def locked():
    """{canonical name: version} of requirements-locked.txt, every line of which is an entry or a comment."""
    text = (EE / "requirements-locked.txt").read_text()
    entries = list(ENTRY.finditer(text))
    rest = ENTRY.sub("", text)
    assert all(line.startswith("#") for line in rest.splitlines() if line.strip()), rest
    names = [canonicalize_name(entry["name"]) for entry in entries]
    assert len(names) == len(set(names)), "a package is locked twice"
    return {canonicalize_name(entry["name"]): entry["version"] for entry in entries}


def wanted(path):
    """The requirements of a requirements file, following -r."""
    requirements = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            requirements += wanted(path.parent / line[3:].strip())
        elif line:
            requirements.append(Requirement(line))
    return requirements


def test_every_python_package_of_the_image_is_pinned_to_one_version_with_its_hashes():
    versions = locked()
    assert {"ansible-core", "ansible-runner", "cryptography", "httpx"} <= set(versions)


def test_the_lock_holds_a_version_in_every_range_that_the_image_and_the_collection_ask_for():
    versions = locked()
    requirements = wanted(EE / "requirements.in")
    # The collection's own ranges are among them, read from meta/.
    assert {canonicalize_name(requirement.name) for requirement in wanted(PROJECT / "meta" / "ee-requirements.txt")} \
        <= {canonicalize_name(requirement.name) for requirement in requirements}
    for requirement in requirements:
        version = versions.get(canonicalize_name(requirement.name))
        assert version is not None and requirement.specifier.contains(version, prereleases=True), \
            "%s: the lock has %s; run scripts/ee-lock" % (requirement, version)


@pytest.mark.skipif(BUILDER is None, reason="ansible-builder is the controller virtualenv's (make venv)")
def test_ansible_builder_installs_the_lock_first_and_fetches_nothing_after_it(tmp_path):
    ee = tmp_path / "ee"
    shutil.copytree(EE, ee)
    (ee / "pharos-hpc-0.0.0.tar.gz").write_bytes(b"")
    subprocess.run([BUILDER, "create", "--file", "execution-environment.yml", "--context", str(tmp_path / "context")],
                   cwd=ee, check=True, capture_output=True)
    containerfile = next(path for path in (tmp_path / "context").iterdir() if path.name in ("Containerfile", "Dockerfile"))
    stages = re.split(r"^FROM ", containerfile.read_text(), flags=re.MULTILINE)[1:]
    installs = {stage.split()[2]: re.findall(r"^RUN \$PYCMD -m pip install (.*)$", stage, re.MULTILINE) for stage in stages}
    lock = "--no-cache-dir --ignore-installed --require-hashes --only-binary :all: -r /output/python/requirements-locked.txt"
    assert installs["base"] == [lock]
    versions = locked()
    for stage in ("builder", "final"):
        for install in installs[stage]:
            for argument in install.split()[1:]:
                requirement = Requirement(argument.strip("'"))
                assert requirement.specifier.contains(versions[canonicalize_name(requirement.name)]), install
    builder, final = (next(stage for stage in stages if stage.split()[2] == name) for name in ("builder", "final"))
    assert builder.index("ARG PIP_NO_INDEX=1") < builder.index("/output/scripts/assemble")
    assert final.index("ARG PIP_NO_INDEX=1") < final.index("/output/scripts/install-from-bindep")


def guard(image):
    command = DEFINITION["additional_build_steps"]["prepend_base"][0]
    assert command.startswith("RUN ")
    return subprocess.run(["sh", "-c", command[len("RUN "):]], env={"EE_BASE_IMAGE": image, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, check=False)


DIGEST = hashlib.sha256(b"a base image's manifest").hexdigest()


@pytest.mark.parametrize("image", [DEFINITION["images"]["base_image"]["name"], "debian:trixie", "debian@sha256:" + DIGEST[:12],
                                   "debian:trixie@sha256:" + DIGEST.upper()])
def test_a_base_image_named_by_its_tag_alone_is_refused(image):
    refused = guard(image)
    assert refused.returncode == 1
    assert "the base image %s is named by its tag alone" % image in refused.stderr
    assert "<name>:<tag>@sha256:<digest>" in refused.stderr


@pytest.mark.parametrize("image", ["docker.io/library/debian:trixie@sha256:" + DIGEST, "debian@sha256:" + DIGEST,
                                   "sha256:" + DIGEST])
def test_a_base_image_named_by_digest_or_by_its_id_is_built_on(image):
    assert guard(image).returncode == 0
