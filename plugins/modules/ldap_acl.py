#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: ldap_acl
short_description: A slapd database's whole ordered olcAccess list, as one value set
version_added: 0.1.0
description:
  - Holds the C(olcAccess) of one database (or of the frontend) to exactly the given rules, in
    the given order.
  - The list is compared without the C({n}) indices slapd adds and with white space folded,
    and written with one replace of the whole value set, so indices never drift or duplicate
    across runs and a rule changed or inserted by hand is put back.
  - Write each rule as slapd stores it (slapd keeps the text it was given); when slapd reads a
    rule back in another form the module warns, since the next run would report a change.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.ldap
attributes:
  check_mode:
    support: full
    description: Reports the change and its diff without writing.
  diff_mode:
    support: full
    description: The indexed rules before and after, one a line.
options:
  dn:
    description:
      - The database's entry under C(cn=config), for example V(olcDatabase={1}mdb,cn=config).
        The index may be left out when the database type is unique (V(olcDatabase=mdb,cn=config)).
    type: str
    required: true
  rules:
    description:
      - The rules, without indices, first match first. At least one.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: The directory's access rules
  pharos.hpc.ldap_acl:
    dn: olcDatabase={1}mdb,cn=config
    rules:
      - to * by dn.exact="gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth" manage by * break
      - to attrs=userPassword by anonymous auth by * none
      - to * by users read by * none
"""

RETURN = r"""
dn:
  description: The database's entry as slapd names it.
  returned: always
  type: str
  sample: olcDatabase={1}mdb,cn=config
rules:
  description: The rules in force after the run (or, in check mode, after a real run).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.ldap import (
    LdapError, apply_changes, connect, ldap_connection_argument_spec, normalise_acl_rule,
    ordered_values, plan_acl, read_entry, require_ldap3)


def current_rules(attributes):
    for name, values in attributes.items():
        if name.lower() == "olcaccess":
            return values
    return []


def main():
    argument_spec = ldap_connection_argument_spec()
    argument_spec.update(
        dn=dict(type="str", required=True),
        rules=dict(type="list", elements="str", required=True),
    )
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    require_ldap3(module)
    dn = module.params["dn"]
    if not module.params["rules"]:
        module.fail_json(msg="%s: rules is empty, which would leave the database to slapd's default access "
                             "(read for everyone). Give the whole ordered list." % dn)

    connection = connect(module)
    try:
        actual_dn, attributes = read_entry(connection, dn)
        if attributes is None:
            module.fail_json(msg="The database entry %s does not exist. List the databases with "
                                 "'ldapsearch -Q -Y EXTERNAL -H ldapi:/// -b cn=config (olcDatabase=*) dn' "
                                 "and give one of them as dn." % dn)
        plan = plan_acl(module.params["rules"], current_rules(attributes))
        if plan["changed"] and not module.check_mode:
            apply_changes(connection, actual_dn, "modify", [("replace", "olcAccess", plan["values"])])
            _unused, stored = read_entry(connection, actual_dn)
            stored_rules = [normalise_acl_rule(rule) for rule in ordered_values(current_rules(stored))]
            wanted = [normalise_acl_rule(rule) for rule in module.params["rules"]]
            for written, kept in zip(wanted, stored_rules):
                if written != kept:
                    module.warn("slapd stores the rule %r as %r: write it that way, or every run will "
                                "report a change." % (written, kept))
    except LdapError as error:
        module.fail_json(msg=str(error))
    finally:
        connection.unbind()
    module.exit_json(changed=plan["changed"], dn=actual_dn,
                     rules=[normalise_acl_rule(rule) for rule in module.params["rules"]],
                     diff=dict(before=plan["before"], after=plan["after"]))


if __name__ == "__main__":
    main()
