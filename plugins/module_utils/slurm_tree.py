# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The declared association tree, the plan that makes Slurm match it, and its diff.

``plan(desired, current, ...)`` is a pure function of the declaration and one read of the
tree (``sacctmgr.read_tree``): check mode returns it as it is, a real run hands it to
``slurm_batch`` to write. ``predict(current, plan)`` is the tree after the plan, which is
what the diff shows and what a real run must read back.
"""

from __future__ import annotations

import copy
import re

from ansible_collections.pharos.hpc.plugins.module_utils.sacctmgr import (
    ACCOUNT_ROOT, COUNT_LIMITS, LIMITS, TRES_LIMITS, SlurmValueError, describe_limit, lower_name,
    normalise_fairshare, normalise_limits,
)

NAME_PATTERN = re.compile(r"^[a-z0-9_][a-z0-9_.@-]*$")
ACCOUNT_STATES = ("present", "terminated", "absent")
UNLISTED_POLICIES = ("keep", "remove")
ADMIN_LEVELS = ("administrator", "operator")

COORDINATOR_RULE = (
    "Slurm refuses a coordinator's raise of an existing limit, and an allocation never grows: "
    "order a new allocation for the extra hours and submit to its account; the old allocation "
    "keeps its limit until it is used up or terminated (docs/allocations.md)."
)


class PlanError(ValueError):
    """The declaration cannot be applied; the message names the object, the cause and the fix."""


def _name(value, what):
    name = lower_name(value)
    if not NAME_PATTERN.match(name):
        raise PlanError("%s %r is not a Slurm name: use lower-case letters, digits, '_', '.', '-' or '@'"
                        % (what, value))
    return name


def _text(value, what):
    if value is None:
        return None
    text = str(value).strip().lower()
    if "'" in text or "\n" in text or ":" in text:
        raise PlanError("%s %r may not contain quotes, colons or new lines (sacctmgr load fields)" % (what, value))
    return text


def declare(accounts, users):
    """Normalise the declaration the way Slurm stores it; refuse what Slurm would not take."""
    declared_accounts = {}
    for spec in accounts or []:
        name = _name(spec["name"], "account")
        if name in declared_accounts:
            raise PlanError("account %s is declared twice" % name)
        state = spec.get("state") or "present"
        try:
            declared_accounts[name] = {
                "parent": _name(spec.get("parent") or ACCOUNT_ROOT, "parent of account %s" % name),
                "description": _text(spec.get("description"), "description of %s" % name),
                "organization": _text(spec.get("organization"), "organization of %s" % name),
                "fairshare": normalise_fairshare(spec.get("fairshare")),
                "limits": normalise_limits(spec.get("limits"), "account %s" % name),
                "coordinators": (None if spec.get("coordinators") is None else
                                 {_name(user, "coordinator of %s" % name) for user in spec["coordinators"]}),
                "state": state,
            }
        except SlurmValueError as error:
            raise PlanError(str(error))
    declared_users = {}
    for spec in users or []:
        name = _name(spec["name"], "user")
        if name in declared_users:
            raise PlanError("user %s is declared twice" % name)
        user_accounts = [_name(account, "account of user %s" % name) for account in spec.get("accounts") or []]
        default = _name(spec["default_account"], "default account of user %s" % name)
        if default not in user_accounts:
            user_accounts.insert(0, default)
        try:
            declared_users[name] = {
                "default_account": default,
                "accounts": user_accounts,
                "fairshare": normalise_fairshare(spec.get("fairshare")),
                "limits": normalise_limits(spec.get("limits"), "user %s" % name),
            }
        except SlurmValueError as error:
            raise PlanError(str(error))
    return {"accounts": declared_accounts, "users": declared_users}


def _terminated_limits(current_limits):
    """A soft delete: the account stays, nothing can be submitted or charged to it."""
    node_minutes = dict((tres, 0) for tres in (current_limits.get("GrpTRESMins") or {"node": 0}))
    return {"GrpTRESMins": node_minutes, "MaxSubmitJobs": 0, "GrpSubmitJobs": 0}


def _limit_changes(declared, current):
    return dict((name, (current.get(name), value)) for name, value in sorted(declared.items())
                if current.get(name) != value)


def _check_references(desired, current, removed_accounts):
    existing = set(current["accounts"]) - removed_accounts
    kept = dict((name, spec) for name, spec in desired["accounts"].items() if spec["state"] != "absent")
    for name, spec in sorted(kept.items()):
        parent = spec["parent"]
        if parent not in kept and parent not in existing:
            raise PlanError("account %s names parent %s, which neither exists nor is declared: declare %s "
                            "first (or fix the parent)" % (name, parent, parent))
        seen = {name}
        while parent in kept:
            if parent in seen:
                raise PlanError("accounts %s form a cycle of parents" % ", ".join(sorted(seen)))
            seen.add(parent)
            parent = kept[parent]["parent"]
    for user, spec in sorted(desired["users"].items()):
        for account in spec["accounts"]:
            state = desired["accounts"].get(account, {}).get("state")
            if state in ("terminated", "absent"):
                raise PlanError("user %s lists account %s, which is declared %s: remove it from the user's "
                                "accounts" % (user, account, state))
            if account not in kept and account not in existing:
                raise PlanError("user %s lists account %s, which neither exists nor is declared" % (user, account))


def _subtree(accounts, roots):
    """roots and every account below them, deepest first."""
    children = {}
    for name, spec in accounts.items():
        children.setdefault(spec["parent"], []).append(name)
    ordered = []

    def visit(name):
        for child in sorted(children.get(name, [])):
            visit(child)
        ordered.append(name)

    for root in sorted(roots):
        visit(root)
    return ordered


def direct_coordinators(accounts, name):
    """Coordinators of an account that it does not inherit from its parent."""
    account = accounts[name]
    parent = accounts.get(account["parent"]) if account["parent"] else None
    return account["coordinators"] - (parent["coordinators"] if parent else set())


def plan(desired, current, unlisted="keep"):
    """The changes that make the current tree match the declaration, in the order they apply."""
    accounts = current["accounts"]
    associations = current["associations"]
    declared = desired["accounts"]
    managed = set(name for name, spec in declared.items() if spec["state"] != "absent")

    removed_roots = set(name for name, spec in declared.items() if spec["state"] == "absent" and name in accounts)
    if unlisted == "remove":
        removed_roots |= set(name for name, spec in accounts.items()
                             if spec["parent"] in managed and name not in declared)
    removed_accounts = [name for name in _subtree(accounts, removed_roots) if name != ACCOUNT_ROOT]
    _check_references(desired, current, set(removed_accounts))

    changes = []
    for name in _add_order(declared, managed, accounts):
        spec = declared[name]
        limits = _terminated_limits({}) if spec["state"] == "terminated" else spec["limits"]
        changes.append({"action": "add_account", "account": name, "parent": spec["parent"],
                        "description": spec["description"] or name,
                        "organization": spec["organization"] or _default_organization(name, spec["parent"]),
                        "fairshare": spec["fairshare"], "limits": dict((k, v) for k, v in limits.items())})

    for name in sorted(managed & set(accounts)):
        spec, now = declared[name], accounts[name]
        settings = {}
        for field in ("description", "organization", "fairshare"):
            if spec[field] is not None and spec[field] != now[field]:
                settings[field] = (now[field], spec[field])
        limits = dict(spec["limits"])
        if spec["state"] == "terminated":
            limits.update(_terminated_limits(now["limits"]))
        settings.update(_limit_changes(limits, now["limits"]))
        if settings:
            changes.append({"action": "modify_account", "account": name, "settings": settings})
        if spec["parent"] != now["parent"]:
            changes.append({"action": "move_account", "account": name, "from": now["parent"], "to": spec["parent"]})

    wanted = set()
    for user, spec in sorted(desired["users"].items()):
        for account in spec["accounts"]:
            wanted.add((user, account))
            if (user, account) not in associations:
                changes.append({"action": "add_association", "user": user, "account": account,
                                "default_account": spec["default_account"], "fairshare": spec["fairshare"],
                                "limits": dict(spec["limits"])})
                continue
            now = associations[(user, account)]
            settings = _limit_changes(spec["limits"], now["limits"])
            if spec["fairshare"] is not None and spec["fairshare"] != now["fairshare"]:
                settings["fairshare"] = (now["fairshare"], spec["fairshare"])
            if settings:
                changes.append({"action": "modify_association", "user": user, "account": account,
                                "settings": settings})
        # A user with no association in this cluster has no default here: the load that adds
        # their first association sets it.
        existing_default = current["users"].get(user, {}).get("default_account")
        if existing_default is not None and existing_default != spec["default_account"]:
            changes.append({"action": "set_default_account", "user": user,
                            "from": existing_default, "to": spec["default_account"]})

    terminated = set(name for name in managed if declared[name]["state"] == "terminated")
    gone = set(removed_accounts)
    removed_associations = sorted(
        (user, account) for (user, account) in associations
        if account in gone or account in terminated
        or (unlisted == "remove" and account in managed and (user, account) not in wanted))
    changes.extend(_association_removals(removed_associations, current, desired))
    if removed_accounts:
        changes.append({"action": "remove_accounts", "accounts": removed_accounts})

    for name in sorted(managed):
        wanted_coordinators = declared[name]["coordinators"]
        if wanted_coordinators is None:
            continue
        have = direct_coordinators(accounts, name) if name in accounts else set()
        if wanted_coordinators - have:
            changes.append({"action": "add_coordinators", "account": name, "users": sorted(wanted_coordinators - have)})
        if have - wanted_coordinators:
            changes.append({"action": "remove_coordinators", "account": name, "users": sorted(have - wanted_coordinators)})
    return changes


def _default_organization(name, parent):
    """What sacctmgr gives an account created without one: its parent's name, or its own under root."""
    return name if parent == ACCOUNT_ROOT else parent


def _add_order(declared, managed, existing):
    """New accounts, each after its parent."""
    ordered, placed = [], set(existing)
    pending = sorted(name for name in managed if name not in existing)
    while pending:
        ready = [name for name in pending if declared[name]["parent"] in placed]
        if not ready:  # parents that are declared absent or missing were refused before
            raise PlanError("accounts %s have no parent to be created under" % ", ".join(pending))
        ordered.extend(ready)
        placed.update(ready)
        pending = [name for name in pending if name not in placed]
    return ordered


def _association_removals(removed, current, desired):
    """Per user: drop some associations, or the whole user when none remains.

    Slurm refuses to remove a user's default association while the user keeps others; a
    declared user gets their new default first, anyone else is refused here, before any write.
    """
    by_user = {}
    for user, account in removed:
        by_user.setdefault(user, []).append(account)
    changes = []
    for user, gone in sorted(by_user.items()):
        remaining = set(account for (name, account) in current["associations"] if name == user) - set(gone)
        remaining |= set(desired["users"].get(user, {}).get("accounts", []))
        if not remaining:
            changes.append({"action": "remove_user", "user": user, "accounts": sorted(gone)})
            continue
        default = desired["users"].get(user, {}).get("default_account") or \
            current["users"].get(user, {}).get("default_account")
        if default in gone:
            raise PlanError("user %s would lose the association with %s, their default account, while keeping %s: "
                            "declare the user with a default account they keep"
                            % (user, default, ", ".join(sorted(remaining))))
        changes.append({"action": "remove_associations", "user": user, "accounts": sorted(gone)})
    return changes


def _is_raise(name, old, new):
    """Whether new is more permissive than old; unset is unlimited."""
    if old is None:
        return False  # a first limit is not a raise
    if new is None:
        return True
    if name in TRES_LIMITS:
        return any(tres not in new or new[tres] > amount for tres, amount in old.items())
    if name in COUNT_LIMITS or name == "MaxWall":
        return new > old
    return False


def coordinator_refusals(changes, actor, current):
    """The raises Slurm would refuse when the actor is a coordinator, not an administrator."""
    if actor == "root" or current["users"].get(actor, {}).get("admin_level") in ADMIN_LEVELS:
        return []
    refusals = []
    for change in changes:
        if change["action"] not in ("modify_account", "modify_association"):
            continue
        owner = change["account"] if change["action"] == "modify_account" else \
            "user %s in %s" % (change["user"], change["account"])
        for name, (old, new) in sorted(change["settings"].items()):
            if name in LIMITS and _is_raise(name, old, new):
                refusals.append("coordinator %s cannot raise %s of %s from %s to %s"
                                % (actor, name, owner, describe_limit(name, old), describe_limit(name, new)))
    return refusals


def predict(current, changes):
    """The tree after the changes: what the diff shows and what a real run must read back."""
    tree = copy.deepcopy(current)
    accounts, associations, users = tree["accounts"], tree["associations"], tree["users"]
    empty_limits = dict((name, None) for name in LIMITS)
    for change in changes:
        action = change["action"]
        if action == "add_account":
            parent = accounts.get(change["parent"], {}).get("coordinators", set())
            limits = dict(empty_limits, **change["limits"])
            accounts[change["account"]] = {
                "parent": change["parent"], "description": change["description"],
                "organization": change["organization"], "fairshare": change["fairshare"] or 1,
                "limits": limits, "coordinators": set(parent)}
        elif action == "modify_account":
            _apply_settings(accounts[change["account"]], change["settings"])
        elif action == "move_account":
            accounts[change["account"]]["parent"] = change["to"]
        elif action == "add_association":
            associations[(change["user"], change["account"])] = {
                "fairshare": change["fairshare"] or 1, "limits": dict(empty_limits, **change["limits"])}
            user = users.setdefault(change["user"], {"default_account": None, "admin_level": "none"})
            user["default_account"] = user["default_account"] or change["default_account"]
        elif action == "modify_association":
            _apply_settings(associations[(change["user"], change["account"])], change["settings"])
        elif action == "set_default_account":
            users[change["user"]]["default_account"] = change["to"]
        elif action in ("remove_associations", "remove_user"):
            for account in change["accounts"]:
                associations.pop((change["user"], account), None)
            if action == "remove_user":
                users.pop(change["user"], None)
        elif action == "remove_accounts":
            for account in change["accounts"]:
                accounts.pop(account, None)
        elif action in ("add_coordinators", "remove_coordinators"):
            for name in _subtree(accounts, [change["account"]]):
                coordinators = accounts[name]["coordinators"]
                if action == "add_coordinators":
                    coordinators.update(change["users"])
                else:
                    coordinators.difference_update(change["users"])
    return tree


def touched_names(current, changes):
    """(accounts, users) whose records in Slurm the changes write: what a read-back must read.

    A change to an account's values, parent or coordinators can reach every account below it
    (Slurm hands some limits and every coordinator down), so the subtree is read back too.
    """
    accounts, users, roots = set(), set(), set()
    for change in changes:
        if "account" in change:
            accounts.add(change["account"])
        accounts.update(change.get("accounts", []))
        if "user" in change:
            users.add(change["user"])
        if change["action"] in ("modify_account", "move_account", "add_coordinators", "remove_coordinators"):
            roots.add(change["account"])
    # Accounts the plan adds are touched already, and a move keeps an account's subtree.
    existing = set(roots) & set(current["accounts"])
    accounts.update(_subtree(current["accounts"], existing) if existing else ())
    return accounts, users


def _apply_settings(target, settings):
    for name, (_old, new) in settings.items():
        if name in LIMITS:
            target["limits"][name] = new
        else:
            target[name] = new


def _describe_settings(fairshare, description, organization, limits, coordinators):
    words = []
    if description:
        words.append('description="%s"' % description)
    if organization:
        words.append('organization="%s"' % organization)
    if fairshare not in (None, 1):
        words.append("fairshare=%s" % fairshare)
    for name in LIMITS:
        if limits.get(name) is not None:
            words.append("%s=%s" % (name, describe_limit(name, limits[name]).replace(" minutes", "min")))
    if coordinators:
        words.append("coordinators=%s" % ",".join(sorted(coordinators)))
    return words


def render(tree, roots):
    """The subtrees under roots as indented text, one line per account and per user association."""
    accounts, associations, users = tree["accounts"], tree["associations"], tree["users"]
    users_by_account, children = {}, {}
    for user, account in sorted(associations):
        users_by_account.setdefault(account, []).append(user)
    for name in sorted(accounts):
        children.setdefault(accounts[name]["parent"], []).append(name)
    lines = []

    def account_line(name, depth):
        spec = accounts[name]
        parent = accounts.get(spec["parent"])
        inherited = parent["coordinators"] if parent else set()
        words = _describe_settings(spec["fairshare"], spec["description"], spec["organization"],
                                   spec["limits"], spec["coordinators"] - inherited)
        lines.append("%saccount %s %s" % ("  " * depth, name, " ".join(words)))
        for user in users_by_account.get(name, []):
            association = associations[(user, name)]
            words = _describe_settings(association["fairshare"], None, None, association["limits"], None)
            if users.get(user, {}).get("default_account") == name:
                words.insert(0, "(default)")
            lines.append("%s  user %s %s" % ("  " * depth, user, " ".join(words)))
        for child in children.get(name, []):
            account_line(child, depth + 1)

    for root in sorted(roots):
        if root in accounts:
            account_line(root, 0)
    return "\n".join(line.rstrip() for line in lines) + "\n"


def diff(desired, current, changes):
    """Before and after of every declared subtree, as Ansible's diff shows them."""
    declared = desired["accounts"]
    roots = set(name for name, spec in declared.items() if spec["parent"] not in declared)
    after = predict(current, changes)
    return {"before": render(current, roots), "after": render(after, roots),
            "before_header": "slurm associations (now)", "after_header": "slurm associations (declared)"}
