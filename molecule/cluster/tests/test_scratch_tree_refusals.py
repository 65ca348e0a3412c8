"""The scratch role refuses a tree it cannot trust before it writes anything there: a root that
someone else made first, or one reached through a link (docs/scratch.md). Root on the compute
node sets each case up and puts the real tree back afterwards."""

import os

import pytest
import testinfra

from scenario_playbooks import SITE, run_playbook

testinfra_hosts = ["ansible://pharos-cluster-login"]

NODE = "pharos-cluster-compute"
SCRATCH = "/scratch/pharos"
BOB = 5000002

CASES = {
    "a root a member made first": (
        f"mkdir -m 0777 {SCRATCH} && chown {BOB}:{BOB} {SCRATCH} && touch {SCRATCH}/planted",
        SCRATCH),
    "a root that is a link to a member's directory": (
        f"mkdir -m 0755 /var/tmp/elsewhere && chown {BOB}:{BOB} /var/tmp/elsewhere && ln -s /var/tmp/elsewhere {SCRATCH}",
        "/var/tmp/elsewhere"),
}


@pytest.fixture(scope="module")
def compute():
    return testinfra.get_host(f"ansible://{NODE}", ansible_inventory=os.environ["MOLECULE_INVENTORY_FILE"])


def converge_the_node():
    """site.yml on the node alone, as its administrator runs it: (return code, output)."""
    return run_playbook(SITE, "--limit", NODE, succeed=False)


def converge_over(compute, real, plant, planted, extra_cleanup):
    """Converge the node with the real path moved aside and the plant in its place; the real
    path is put back afterwards. Returns the failed run's words in one line, and the planted
    entry's owner, mode and listing before and after."""
    assert compute.run(f"mv {real} {real}.kept && {plant}").rc == 0
    try:
        before = compute.run(f"stat -c %u:%g:%a {planted} && ls -A {planted}").stdout
        returncode, output = converge_the_node()
        after = compute.run(f"stat -c %u:%g:%a {planted} && ls -A {planted}").stdout
    finally:
        restored = compute.run(f"rm -rf {real} {extra_cleanup} && mv {real}.kept {real}")
    assert restored.rc == 0, restored.stderr
    assert returncode != 0, output[-3000:]
    return " ".join(output.split()), before, after


@pytest.mark.parametrize("case", sorted(CASES))
def test_untrusted_tree_is_refused_and_nothing_is_written_there(compute, case):
    plant, planted = CASES[case]
    message, before, after = converge_over(compute, SCRATCH, plant, planted, "/var/tmp/elsewhere")
    assert "is not safe to take over, so nothing was written" in message
    assert after == before
    assert f"{BOB}:{BOB}:" in after


# The Runtime's box: a .runtime that a member made, or a link in its place, is refused by name
# and nothing is written or followed. Root sets each case up on the real tree and puts the
# role's box back afterwards.
RUNTIME_BOX = f"{SCRATCH}/.runtime"
TARGET = "/var/tmp/bobs-target"
BOX_CASES = {
    # A member's box keeps a world-writable folder of theirs inside the Runtime's box.
    "a .runtime a member made first": (
        f"mkdir -m 0777 {RUNTIME_BOX} && mkdir -m 0777 {RUNTIME_BOX}/bobs-folder && "
        f"chown -R {BOB}:{BOB} {RUNTIME_BOX}", RUNTIME_BOX, "a directory of UID 5000002"),
    # Followed, the role would hand the link's target to pharos-runtime.
    "a .runtime that is a link to a member's directory": (
        f"mkdir -m 0755 {TARGET} && chown {BOB}:{BOB} {TARGET} && ln -s {TARGET} {RUNTIME_BOX} && "
        f"chown -h {BOB}:{BOB} {RUNTIME_BOX}", TARGET, "a symbolic link of UID 5000002"),
}


@pytest.mark.parametrize("case", sorted(BOX_CASES))
def test_a_runtime_box_the_role_did_not_make_is_refused_and_nothing_is_followed(compute, case):
    plant, planted, described = BOX_CASES[case]
    message, before, after = converge_over(compute, RUNTIME_BOX, plant, planted, TARGET)
    assert f"{RUNTIME_BOX} on {NODE} is {described}, not a real directory of pharos-runtime" in message
    assert "nothing was written and nothing was followed" in message
    assert after == before
    assert f"{BOB}:{BOB}:" in after
