# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing a plan to Slurm and reading back what it touched.

A load can report a change that slurmdbd then drops, so every write is read back. The read
covers only the accounts and users the plan wrote: a one-line repair in a tree of thousands
costs one small read, not the three reads of the whole tree. A plan that touches more names
than TARGETED_READ_LIMIT is read back whole, which is then cheaper than long name lists.
"""

from __future__ import annotations

from ansible_collections.pharos.hpc.plugins.module_utils.sacctmgr import merge_tree
from ansible_collections.pharos.hpc.plugins.module_utils.slurm_batch import batches
from ansible_collections.pharos.hpc.plugins.module_utils.slurm_tree import plan, touched_names

TARGETED_READ_LIMIT = 200


def write(client, changes, current, cancelled):
    """The plan's writes in order: additions, modifications, cancelled jobs, then the session."""
    written = batches(client.cluster, changes, current)
    if written["additions"]:
        client.load(written["additions"], "adding accounts and user associations")
    if written["modifications"]:
        client.load(written["modifications"], "changing accounts and user associations")
    if written["modification_commands"]:
        client.session(written["modification_commands"], "changing accounts and user associations")
    if cancelled:
        client.cancel(cancelled)
    if written["session"]:
        client.session(written["session"], "moving and removing associations and setting coordinators")


def read_back(client, current, changes):
    """The tree as Slurm holds it after the changes were written."""
    accounts, users = touched_names(current, changes)
    if len(accounts) + len(users) > TARGETED_READ_LIMIT:
        return client.read()
    return merge_tree(current, client.read(accounts, users), accounts, users)


def write_and_confirm(client, desired, current, changes, cancelled, unlisted):
    """Write the plan, read back what it touched, write once more what Slurm dropped.

    Returns the changes Slurm still lacks after that second write (empty when all held).
    """
    write(client, changes, current, cancelled)
    current = read_back(client, current, changes)
    remaining = plan(desired, current, unlisted)
    if remaining:
        write(client, remaining, current, [])
        current = read_back(client, current, remaining)
        remaining = plan(desired, current, unlisted)
    return remaining
