import importlib.machinery
import importlib.util
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
# collections/ links this checkout as ansible_collections/pharos/hpc: module_utils import as Ansible imports them.
# scripts/ holds the release builder's own code (release_builder), which does not ship.
sys.path[:0] = [str(PROJECT / "collections"), str(PROJECT / "scripts")]


@pytest.fixture(scope="session")
def project():
    return PROJECT


@pytest.fixture(scope="session")
def lab_engine():
    """scripts/lab-engine, imported as a module (it has no .py suffix: it is a command)."""
    path = PROJECT / "scripts" / "lab-engine"
    loader = importlib.machinery.SourceFileLoader("lab_engine", str(path))
    spec = importlib.util.spec_from_loader("lab_engine", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture
def root(tmp_path):
    """An empty directory that stands for a host's /, for the release tests; removed afterwards
    even where the release made its tree read-only."""
    from release_host_support import remove  # pylint: disable=import-outside-toplevel
    root = tmp_path / "root"
    root.mkdir()
    yield root
    remove(root)
