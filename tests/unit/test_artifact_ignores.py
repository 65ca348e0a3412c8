"""What `make lab`, `make test` and the benchmarks write into the checkout (each listed in
.gitignore) stays out of the built collection: the laboratory's tokens, CA and release signer's
key under .lab among them. Planted in a copy of the checkout's top, then built with
ansible-galaxy as a user builds it."""

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
PLANTED = "planted-secret"


def ignored_paths():
    """Each .gitignore entry as a path to plant: `/x/` at the top, `x/` also one level down."""
    for line in (PROJECT / ".gitignore").read_text().splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        path = entry.strip("/").replace("*", "planted")
        yield path
        if not entry.startswith("/"):
            yield "plugins/" + path


def plant(top, path):
    if path.endswith((".pyc", ".tar.gz")):
        (top / path).parent.mkdir(parents=True, exist_ok=True)
        (top / path).write_text(PLANTED)
    else:
        (top / path).mkdir(parents=True, exist_ok=True)
        (top / path / PLANTED).write_text(PLANTED)


def test_every_path_the_tools_write_into_the_checkout_stays_out_of_the_artifact(tmp_path):
    top = tmp_path / "checkout"
    top.mkdir()
    for name in ("galaxy.yml", "README.md", "COPYING"):
        shutil.copy(PROJECT / name, top / name)
    (top / "plugins").mkdir()
    planted = sorted(set(ignored_paths()))
    for path in planted:
        plant(top, path)
    assert ".lab" in planted and "tests/output" in planted

    ansible_galaxy = Path(sys.executable).parent / "ansible-galaxy"
    completed = subprocess.run([str(ansible_galaxy), "collection", "build", "--output-path", str(tmp_path), str(top)],
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr

    with tarfile.open(next(tmp_path.glob("pharos-hpc-*.tar.gz"))) as artifact:
        names = artifact.getnames()
    assert "README.md" in names  # the build read the tree
    shipped = [name for name in names if any(name == path or name.startswith(path + "/") for path in planted)]
    assert shipped == [], "add these to build_ignore in galaxy.yml: %s" % shipped
