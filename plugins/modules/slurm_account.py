#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: slurm_account
short_description: Keep Slurm's association tree as declared, in a batched write
description:
  - Reads the association tree once (associations with their own limits, accounts with
    coordinators, users), plans the difference to the declaration, and writes it in at most
    two C(sacctmgr load) runs and one C(sacctmgr) session, however many objects change.
  - Values are compared the way Slurm stores them - names, descriptions and organisations in
    lower case, memory TRES in MiB, wall limits in minutes, an unset limit as C(-1).
  - Run as a coordinator rather than a Slurm administrator, the module refuses, before any
    write, a change that raises an existing limit, since Slurm refuses it too; an allocation
    that needs more hours is a new allocation (see C(docs/allocations.md), "More hours mean a new
    allocation, never a raised limit").
  - What the plan wrote is read back (only the accounts and users it touched); a change Slurm
    dropped is written once more, and a change that still does not hold fails the task with its name.
version_added: 0.1.0
author:
  - Pharos HPC engineering (@pharos-ai-factory)
attributes:
  check_mode:
    support: full
    description: Returns the exact plan as O(ignore:changes) and the diff, and writes nothing.
  diff_mode:
    support: full
    description: The declared subtrees before and after, one line per account and per user association.
options:
  cluster:
    description: The Slurm cluster whose associations are managed.
    type: str
    required: true
  accounts:
    description:
      - Accounts to keep. Each is managed in the fields it gives; a field left out is left as it is.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The account, in lower case as Slurm stores it.
        type: str
        required: true
      parent:
        description: The parent account.
        type: str
        default: root
      description:
        description: Slurm's description of the account.
        type: str
      organization:
        description: Slurm's organisation of the account.
        type: str
      fairshare:
        description: The association's fairshare, a positive integer or C(parent).
        type: raw
      limits:
        description:
          - Limits of the account's association, by Slurm's names - C(GrpTRESMins) and C(GrpTRES)
            (C(node=600) or a mapping), C(MaxSubmitJobs), C(GrpSubmitJobs), C(MaxWall)
            (minutes or C([days-]hours:minutes:seconds)) and C(QOS) (a list). C(-1) clears a limit.
        type: dict
        default: {}
      coordinators:
        description:
          - The users who coordinate this account directly (coordinators of its parent coordinate it
            too and are not listed here). Left out, coordinators are not managed.
        type: list
        elements: str
      state:
        description:
          - V(present) keeps the account as declared.
          - V(terminated) is a soft delete, as the Site agent's own - the account stays, its user associations are
            removed and its limits zeroed (C(GrpTRESMins) of every TRES, C(MaxSubmitJobs) and
            C(GrpSubmitJobs) to 0), so no job can be submitted or charged to it.
          - V(absent) removes the account and everything below it.
        type: str
        choices: [present, terminated, absent]
        default: present
  users:
    description: Users and the accounts they have an association with.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The user, in lower case as Slurm stores it.
        type: str
        required: true
      default_account:
        description: The user's default account; it is one of their associations.
        type: str
        required: true
      accounts:
        description: Every account the user has an association with (the default account is added).
        type: list
        elements: str
        default: []
      fairshare:
        description: The fairshare of each of the user's associations.
        type: raw
      limits:
        description: Limits of each of the user's associations, as for accounts.
        type: dict
        default: {}
  unlisted:
    description:
      - What happens to an account or user association that is not declared but hangs directly
        below a declared account. V(keep) leaves it; V(remove) removes it.
    type: str
    choices: [keep, remove]
    default: keep
  force:
    description:
      - Remove accounts and user associations that still have pending or running jobs, cancelling
        those jobs. Without it such a removal is refused before any write.
    type: bool
    default: false
  cancel_jobs:
    description:
      - Cancel the pending and running jobs of accounts that are V(terminated). Without it a
        termination that meets such jobs is refused before any write, since Slurm keeps an
        association with jobs.
    type: bool
    default: false
  command_timeout:
    description:
      - The longest, in seconds, that any one Slurm command of the task may run. A command that
        takes longer is stopped and the task fails, naming the step; nothing after that step is
        written, and a re-run finishes the work.
      - A first write of 5,000 associations takes under a minute on a healthy slurmdbd; raise
        this for trees of tens of thousands.
    type: int
    default: 600
notes:
  - Needs C(sacctmgr) and, when accounts are removed or terminated, C(squeue) and C(scancel) on the
    host, run as a Slurm administrator (root, SlurmUser or AdminLevel) or as a coordinator.
seealso:
  - name: The association tree as declared state
    description: docs/slurm_account.md in this collection.
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/slurm_account.md
  - name: Node-hour allocations
    description: docs/allocations.md in this collection.
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/allocations.md
"""

EXAMPLES = r"""
- name: Keep the Site's pharos tree
  pharos.hpc.slurm_account:
    cluster: icarus
    unlisted: remove
    accounts:
      - name: pharos
        description: Pharos platform
        coordinators: [pharos-agent, pharos-runtime]
      - name: pharos_default
        parent: pharos
        limits: {MaxSubmitJobs: 0}
      - name: pharos_a_hpc
        parent: pharos
        limits: {GrpTRESMins: node=600}  # an order of 10 node-hours
      - name: pharos_a_old
        parent: pharos
        state: terminated
    users:
      - name: pharos-runtime
        default_account: pharos
        limits: {MaxSubmitJobs: 0}
      - name: pharosalice
        default_account: pharos_default
        accounts: [pharos_a_hpc]
"""

RETURN = r"""
changes:
  description: The plan, in the order it is written; empty when the tree already holds.
  returned: always
  type: list
  elements: dict
  sample: [{"action": "add_account", "account": "pharos_a_hpc", "parent": "pharos", "limits": {"GrpTRESMins": {"node": 600}}}]
cancelled_jobs:
  description: Jobs cancelled (or, in check mode, to be cancelled) because their account is removed or terminated.
  returned: always
  type: list
  elements: str
slurm_processes:
  description: How many Slurm commands the task ran, reads included.
  returned: always
  type: int
"""

import os
import pwd

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.pharos.hpc.plugins.module_utils.bounded_command import run_bounded
from ansible_collections.pharos.hpc.plugins.module_utils.sacctmgr import SacctmgrError, SlurmClient
from ansible_collections.pharos.hpc.plugins.module_utils.slurm_jobs import JobsInTheWay, accounts_to_watch, jobs_to_cancel
from ansible_collections.pharos.hpc.plugins.module_utils.slurm_tree import (
    COORDINATOR_RULE, PlanError, coordinator_refusals, declare, diff, plan,
)
from ansible_collections.pharos.hpc.plugins.module_utils.slurm_write import write_and_confirm

LIMITS_SPEC = dict(type="dict", default={})
ACCOUNT_SPEC = dict(
    name=dict(type="str", required=True),
    parent=dict(type="str", default="root"),
    description=dict(type="str"),
    organization=dict(type="str"),
    fairshare=dict(type="raw"),
    limits=LIMITS_SPEC,
    coordinators=dict(type="list", elements="str"),
    state=dict(type="str", choices=["present", "terminated", "absent"], default="present"),
)
USER_SPEC = dict(
    name=dict(type="str", required=True),
    default_account=dict(type="str", required=True),
    accounts=dict(type="list", elements="str", default=[]),
    fairshare=dict(type="raw"),
    limits=LIMITS_SPEC,
)


def cancellations(module, client, desired, changes):
    """Jobs the plan must cancel before it writes; fails when jobs are in its way."""
    terminated = set(name for name, spec in desired["accounts"].items() if spec["state"] == "terminated")
    watched = accounts_to_watch(changes, terminated)
    if not watched:
        return []
    try:
        return jobs_to_cancel(changes, terminated, client.active_jobs(watched),
                              module.params["force"], module.params["cancel_jobs"])
    except JobsInTheWay as error:
        module.fail_json(msg=str(error), changes=changes)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            cluster=dict(type="str", required=True),
            accounts=dict(type="list", elements="dict", options=ACCOUNT_SPEC, default=[]),
            users=dict(type="list", elements="dict", options=USER_SPEC, default=[]),
            unlisted=dict(type="str", choices=["keep", "remove"], default="keep"),
            force=dict(type="bool", default=False),
            cancel_jobs=dict(type="bool", default=False),
            command_timeout=dict(type="int", default=600),
        ),
        supports_check_mode=True,
    )
    unlisted = module.params["unlisted"]
    if module.params["command_timeout"] < 1:
        module.fail_json(msg="command_timeout is %d: it is the seconds any one Slurm command may run, "
                             "so it must be 1 or more (the default is 600)" % module.params["command_timeout"])
    # Not module.run_command: it writes a load file whole before reading sacctmgr's report, and
    # a report larger than a pipe then blocks both processes for ever.
    client = SlurmClient(run_bounded, module.params["cluster"].lower(),
                         sacctmgr=module.get_bin_path("sacctmgr", required=True),
                         squeue=module.get_bin_path("squeue") or "squeue", scancel=module.get_bin_path("scancel") or "scancel",
                         timeout=module.params["command_timeout"])
    try:
        desired = declare(module.params["accounts"], module.params["users"])
        current = client.read()
        changes = plan(desired, current, unlisted)
    except PlanError as error:
        module.fail_json(msg=str(error))
    except SacctmgrError as error:
        module.fail_json(msg="%s. Nothing was written." % error)

    refusals = coordinator_refusals(changes, pwd.getpwuid(os.geteuid()).pw_name, current)
    if refusals:
        module.fail_json(msg="; ".join(refusals) + ". " + COORDINATOR_RULE, refusals=refusals, changes=changes)

    try:
        cancelled = cancellations(module, client, desired, changes)
    except SacctmgrError as error:
        module.fail_json(msg=str(error), changes=changes)
    result = dict(changed=bool(changes or cancelled), changes=changes, cancelled_jobs=cancelled)
    if module._diff:
        # Rendering both subtrees costs a large tree more than its repair: only when asked.
        result["diff"] = diff(desired, current, changes)
    if module.check_mode or not result["changed"]:
        module.exit_json(slurm_processes=client.processes, **result)

    try:
        remaining = write_and_confirm(client, desired, current, changes, cancelled, unlisted)
    except (PlanError, SacctmgrError) as error:
        module.fail_json(msg="%s. Nothing after this step was written, and what was written stays: "
                             "run the task again to finish." % error, changes=changes)
    if remaining:
        module.fail_json(msg="Slurm did not keep %d planned change(s) after two writes: %s"
                             % (len(remaining), "; ".join(str(change) for change in remaining)),
                         changes=changes, remaining=remaining)
    module.exit_json(slurm_processes=client.processes, **result)


if __name__ == "__main__":
    main()
