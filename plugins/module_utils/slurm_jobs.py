# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Jobs that stand in a plan's way: Slurm refuses to remove an association, or an account,
while jobs are pending or running there, so they are found and dealt with before any write."""

from __future__ import annotations


class JobsInTheWay(Exception):
    """A removal or termination would meet active jobs that nobody asked to cancel."""


def _removals(changes):
    accounts, associations = set(), set()
    for change in changes:
        if change["action"] == "remove_accounts":
            accounts.update(change["accounts"])
        elif change["action"] in ("remove_associations", "remove_user"):
            associations.update((change["user"], account) for account in change["accounts"])
    return accounts, associations


def accounts_to_watch(changes, terminated):
    """The accounts whose active jobs the plan must know about."""
    accounts, associations = _removals(changes)
    return accounts | set(terminated) | set(account for _user, account in associations)


def jobs_to_cancel(changes, terminated, jobs, force, cancel_jobs):
    """Sorted ids of the jobs to cancel before the write, or JobsInTheWay with the fix.

    jobs: (account, user, job id) of every pending or running job in accounts_to_watch().
    A terminated account's jobs are cancelled with cancel_jobs; a removal's with force.
    """
    accounts, associations = _removals(changes)
    removing, terminating = {}, {}
    for account, user, job in jobs:
        if account in accounts or (user, account) in associations and account not in terminated:
            removing.setdefault(account, []).append(job)
        elif account in terminated:
            terminating.setdefault(account, []).append(job)
    if removing and not force:
        raise JobsInTheWay("Refusing to remove %s: jobs are pending or running there (%s). Let them finish, "
                           "cancel them, or set force: true to cancel them with the removal."
                           % (", ".join(sorted(removing)), _listed(removing)))
    if terminating and not cancel_jobs:
        raise JobsInTheWay("Refusing to terminate %s: jobs are pending or running there (%s), and Slurm keeps "
                           "an association with jobs. Let them finish, or set cancel_jobs: true to cancel them "
                           "with the termination." % (", ".join(sorted(terminating)), _listed(terminating)))
    return sorted(set(job for ids in list(removing.values()) + list(terminating.values()) for job in ids))


def _listed(jobs):
    return "; ".join("%s: %s" % (account, ", ".join(sorted(ids))) for account, ids in sorted(jobs.items()))
