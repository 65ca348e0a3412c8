"""The release the integration tests build with scripts/pharos-release-build, once, cached."""

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(PROJECT / "collections"), str(PROJECT / "scripts")]

SPEC = PROJECT / "tests" / "integration" / "release" / "components.yml"
BUILDER = PROJECT / "scripts" / "pharos-release-build"
PYTHON_VERSION = "%d.%d" % sys.version_info[:2]
INPUTS = [SPEC, BUILDER, PROJECT / "docs" / "examples" / "site.env.example",
          *sorted((PROJECT / "release" / "units").glob("*")),
          *sorted((PROJECT / "tests" / "fixtures" / "ssh_access_agent").rglob("*.py")),
          PROJECT / "tests" / "fixtures" / "ssh_access_agent" / "pyproject.toml",
          PROJECT / "plugins" / "module_utils" / "release" / "contents.py",
          PROJECT / "plugins" / "module_utils" / "release" / "unit_rules.py",
          *sorted((PROJECT / "scripts" / "release_builder").glob("*.py"))]


@pytest.fixture(scope="session")
def archive():
    digest = hashlib.sha256(PYTHON_VERSION.encode())
    for path in INPUTS:
        digest.update(path.relative_to(PROJECT).as_posix().encode() + b"\0" + path.read_bytes())
    key = digest.hexdigest()[:16]
    directory = PROJECT / ".cache" / "release-test" / key
    path = directory / ("pharos-hpc-test-%s.tar.gz" % key)
    if not path.exists():
        started = time.monotonic()
        completed = subprocess.run(
            [sys.executable, str(BUILDER), "--spec", str(SPEC), "--release-id", path.name[:-7],
             "--output-dir", str(directory), "--python-version", PYTHON_VERSION,
             "--cache-dir", str(PROJECT / ".cache" / "pip")],
            capture_output=True, text=True, timeout=900, check=False)
        assert completed.returncode == 0, completed.stderr
        (directory / "build.json").write_text(json.dumps({
            "seconds": round(time.monotonic() - started, 1), "bytes": path.stat().st_size, "report": completed.stdout}))
    return path
