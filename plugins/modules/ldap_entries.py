#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: ldap_entries
short_description: Several LDAP entries kept in order over one connection, each as ldap_entry keeps one
version_added: 0.3.0
description:
  - Keeps each entry of O(entries) in the order given, exactly as M(pharos.hpc.ldap_entry) keeps
    one (read once, one add, modify or delete, a password set by slapd), over one connection and
    in one module run on the host. A role's many small entries cost one round trip instead of one
    each.
  - Every entry's options are checked before the first one is read, so a bad value changes
    nothing. Where slapd refuses an entry, the module stops there and names it; the entries
    before it stay written, and the next run finds them as wanted and goes on.
  - In check mode nothing is written. An entry whose parent an earlier entry of the list would
    add is predicted as an add, as the real run makes it.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.ldap
attributes:
  check_mode:
    support: full
    description: Reports each entry's change and its diff without writing.
  diff_mode:
    support: full
    description: One diff per changed entry, LDIF-like; passwords and their hashes are never shown.
options:
  entries:
    description:
      - The entries, kept in this order (a parent before its children).
    type: list
    elements: dict
    required: true
    suboptions:
      dn:
        description:
          - The entry's DN.
        type: str
        required: true
      state:
        description:
          - V(present) creates or updates the entry, V(absent) deletes it (it must have no children).
        type: str
        choices: [present, absent]
        default: present
      attributes:
        description:
          - Attribute names mapped to a value or a list of values, as in M(pharos.hpc.ldap_entry).
        type: dict
        default: {}
      exact:
        description:
          - Attributes of O(entries[].attributes) that must hold exactly the given values.
        type: list
        elements: str
        default: []
      retired:
        description:
          - Attribute names mapped to values once written and no longer wanted; each one present is deleted.
        type: dict
        default: {}
      password:
        description:
          - The entry's password, set in C(userPassword) by slapd, which hashes it. Never logged or shown.
        type: str
      when:
        description:
          - Whether the entry is kept. A boolean, such as the result of a template like
            C("{{ moving }}"); an entry whose V(when) is false is passed over and has no result.
        type: bool
        default: true
seealso:
  - module: pharos.hpc.ldap_entry
  - name: The directory
    description: docs/directory.md in this collection.
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/directory.md
"""

EXAMPLES = r"""
- name: The Pharos subtree and a service account, in one step
  pharos.hpc.ldap_entries:
    entries:
      - dn: ou=pharos,dc=pharos,dc=lab
        attributes:
          objectClass: organizationalUnit
          ou: pharos
      - dn: ou=services,ou=pharos,dc=pharos,dc=lab
        attributes:
          objectClass: organizationalUnit
          ou: services
      - dn: cn=pharos-agent,ou=services,ou=pharos,dc=pharos,dc=lab
        attributes:
          objectClass: [organizationalRole, simpleSecurityObject]
          cn: pharos-agent
        password: "{{ openldap_agent_password }}"
"""

RETURN = r"""
results:
  description: Each kept entry's result, in the order of O(entries), up to the one slapd refused.
  returned: always
  type: list
  elements: dict
  contains:
    dn:
      description: The entry's DN as slapd names it.
      type: str
    action:
      description: What the run did or, in check mode, would do.
      type: str
      choices: [add, modify, delete, none]
    changed:
      description: Whether the entry changed or, in check mode, would.
      type: bool
    changed_attributes:
      description: The names of the attributes written (C(userPassword) for a password, never its value).
      type: list
      elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.ldap import (
    LdapError, connect, ldap_connection_argument_spec, require_ldap3)
from ansible_collections.pharos.hpc.plugins.module_utils.ldap_keep import (
    EntryProblem, check_entry, entry_argument_spec, keep_entry)


def outcome(results):
    changed = [result for result in results if result["changed"]]
    return dict(changed=bool(changed), results=results, diff=[result["diff"] for result in changed])


def what_was_written(results, check_mode):
    written = [result["dn"] for result in results if result["changed"]]
    if check_mode or not written:
        return "Nothing was written."
    return "Written before it: %s; the next run finds them as wanted and goes on." % "; ".join(written)


def main():
    argument_spec = ldap_connection_argument_spec()
    entry_options = dict(entry_argument_spec(), when=dict(type="bool", default=True))
    argument_spec.update(entries=dict(type="list", elements="dict", required=True, options=entry_options))
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    require_ldap3(module)
    entries = [entry for entry in module.params["entries"] if entry["when"]]
    problems = []
    for entry in entries:
        try:
            check_entry(entry)
        except EntryProblem as problem:
            problems.append(str(problem))
    if problems:
        module.fail_json(msg="Nothing was written: " + " ".join(problems))

    connection = connect(module)
    results = []
    try:
        for entry in entries:
            results.append(keep_entry(connection, entry, module.params["ldapi_socket"], module.check_mode))
    except (LdapError, EntryProblem) as error:
        module.fail_json(msg="%s %s" % (error, what_was_written(results, module.check_mode)), **outcome(results))
    finally:
        connection.unbind()
    module.exit_json(**outcome(results))


if __name__ == "__main__":
    main()
