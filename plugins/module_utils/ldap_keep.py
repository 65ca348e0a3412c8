# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One entry kept as ``ldap_entry`` and ``ldap_entries`` keep it: read once, planned, written
as one add, modify or delete, then its password set by slapd."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.pharos.hpc.plugins.module_utils.ldap import (
    PASSWORD_ATTRIBUTE, apply_changes, holds_password, is_config_dn, password_matches, plan_entry,
    plan_password, read_entry, render_entry, set_password, unusable_password)


class EntryProblem(ValueError):
    """A given entry breaks a rule of the module: the message names the entry, the rule and the fix."""


def entry_argument_spec():
    """One entry's options, shared by ldap_entry (top level) and ldap_entries (each of entries)."""
    return dict(
        dn=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        attributes=dict(type="dict", default={}),
        exact=dict(type="list", elements="str", default=[]),
        retired=dict(type="dict", default={}),
        password=dict(type="str", no_log=True),
    )


def as_value_lists(attributes):
    values = {}
    for name, given in attributes.items():
        given = given if isinstance(given, list) else [given]
        values[name] = [str(value) for value in given if value is not None]
    return values


def check_entry(entry):
    """Refuse, before any connection, what no directory could make right."""
    dn, password = entry["dn"], entry["password"]
    if password is not None and PASSWORD_ATTRIBUTE.lower() in [name.lower() for name in entry["attributes"]]:
        raise EntryProblem("%s: give %s through the password option, which slapd hashes and which is never "
                           "shown, not in attributes." % (dn, PASSWORD_ATTRIBUTE))
    if password == "":
        raise EntryProblem("%s: the password is empty; give one, or leave the password option out to keep "
                           "the entry's own." % dn)


def keep_entry(connection, entry, ldapi_socket, check_mode):
    """The entry's result (dn, action, changed, changed_attributes, diff), written unless check_mode.

    Raises LdapError where slapd refuses, EntryProblem where the given values contradict."""
    dn, password = entry["dn"], entry["password"]
    actual_dn, current = read_entry(connection, dn)
    if entry["state"] == "absent":
        result = dict(dn=actual_dn or dn, action="delete" if current is not None else "none",
                      changed_attributes=[], changed=current is not None,
                      diff=dict(before=render_entry(actual_dn, current), after=""))
        if result["changed"] and not check_mode:
            apply_changes(connection, actual_dn, "delete", [])
        return result

    try:
        plan = plan_entry(dn, as_value_lists(entry["attributes"]), current, exact=entry["exact"],
                          ordered=is_config_dn(dn), retired=as_value_lists(entry["retired"]))
    except ValueError as error:
        raise EntryProblem("%s: %s. Give the values in attributes (an empty list removes it)." % (dn, error))
    changes = list(plan["changes"])
    held = holds_password(current)
    password_change = None
    if password is not None:
        password_change = plan_password(held, held and password_matches(ldapi_socket, actual_dn, password))
        if password_change == "set":
            changes.append(("add", PASSWORD_ATTRIBUTE, [unusable_password()]))
    sets_password = password_change in ("set", "changed")
    action = "add" if current is None else ("modify" if changes or sets_password else "none")
    target = actual_dn or dn
    changed_attributes = [name for _operation, name, _values in changes]
    if password_change == "changed":
        changed_attributes.append(PASSWORD_ATTRIBUTE)
    result = dict(
        dn=target, action=action, changed=action != "none", changed_attributes=changed_attributes,
        diff=dict(
            before=render_entry(actual_dn, plan["before"], PASSWORD_ATTRIBUTE,
                                "held" if password is not None and held else None),
            after=render_entry(target, plan["after"], PASSWORD_ATTRIBUTE,
                               password_change and ("unchanged" if password_change == "unchanged" else "new"))),
    )
    if result["changed"] and not check_mode:
        if changes:
            apply_changes(connection, target, action, changes)
        if sets_password:
            set_password(connection, target, password)
    return result
