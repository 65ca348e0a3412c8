#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: ldap_entry
short_description: An LDAP entry present or absent, with exact attributes where asked
version_added: 0.1.0
description:
  - Reads the entry once, plans the difference to the desired attributes, and applies it as one
    add, one modify or one delete, followed for a password by one Password Modify operation.
  - Under C(cn=config), values of ordered attributes are compared without their C({n}) prefix,
    and an RDN without an index finds its ordered entry (V(cn=openssh-lpk,cn=schema,cn=config)
    finds C(cn={4}openssh-lpk,cn=schema,cn=config)).
  - A password is set by slapd itself, through the LDAP Password Modify extended operation
    (RFC 3062), so slapd stores it hashed with its own scheme (C(olcPasswordHash) on the frontend
    database; C({SSHA}) when unset). The module never hashes a password and never compares
    hashes; it checks the password with a bind as the entry, so a run with the same password
    reports no change, whatever the scheme. A password already stored keeps its hash until it
    changes.
  - A new entry with a password is created holding a value no bind matches, then slapd sets the
    password. If a run stops between the two, the next run finds a password that does not bind
    and sets it.
author: Pharos HPC engineering (@pharos-ai-factory)
extends_documentation_fragment:
  - pharos.hpc.ldap
attributes:
  check_mode:
    support: full
    description: Reports the change and its diff without writing.
  diff_mode:
    support: full
    description: The managed attributes before and after, LDIF-like; passwords and their hashes are never shown.
options:
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
      - Attribute names mapped to a value or a list of values.
      - Values of an attribute not named in O(exact) are added when missing; other values are kept.
    type: dict
    default: {}
  exact:
    description:
      - Attributes of O(attributes) that must hold exactly the given values (in order, for
        ordered attributes under C(cn=config)). An empty list removes the attribute.
    type: list
    elements: str
    default: []
  retired:
    description:
      - Attribute names mapped to values this entry's keeper wrote once and no longer wants (an
        earlier form of a rule). Each one present is deleted; the attribute's other values stay.
      - Attributes named in O(exact) need none.
    type: dict
    default: {}
    version_added: 0.2.0
  password:
    description:
      - The entry's password, set in C(userPassword) by slapd, which hashes it. Never logged or shown.
      - The connection's identity needs C(write) access to the entry's C(userPassword); root over
        C(ldapi:///), the default, has it as the database's administrator.
      - The entry's object classes must allow C(userPassword) (for example C(simpleSecurityObject)
        or C(inetOrgPerson)). Must not be empty, and must not be given in O(attributes) as well.
    type: str
seealso:
  - name: The directory
    description: docs/directory.md in this collection, "Service passwords".
    link: https://github.com/pharos-ai-factory/pharos-hpc/blob/main/docs/directory.md
"""

EXAMPLES = r"""
- name: A service account with its password from the vault
  pharos.hpc.ldap_entry:
    dn: cn=pharos-agent,ou=services,ou=pharos,dc=pharos,dc=lab
    attributes:
      objectClass: [organizationalRole, simpleSecurityObject]
      cn: pharos-agent
    password: "{{ openldap_agent_password }}"

- name: No administrator password on the database
  pharos.hpc.ldap_entry:
    dn: olcDatabase={1}mdb,cn=config
    attributes:
      olcRootPW: []
    exact: [olcRootPW]

- name: Remove the package's placeholder suffix
  pharos.hpc.ldap_entry:
    dn: dc=nodomain
    state: absent
"""

RETURN = r"""
dn:
  description: The entry's DN as slapd names it (with the C({n}) index slapd chose).
  returned: always
  type: str
  sample: cn={4}openssh-lpk,cn=schema,cn=config
action:
  description: What the run did or, in check mode, would do.
  returned: always
  type: str
  choices: [add, modify, delete, none]
changed_attributes:
  description: The names of the attributes written (C(userPassword) for a password, never its value).
  returned: always
  type: list
  elements: str
  sample: [olcRootPW]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.pharos.hpc.plugins.module_utils.ldap import (
    LdapError, connect, ldap_connection_argument_spec, require_ldap3)
from ansible_collections.pharos.hpc.plugins.module_utils.ldap_keep import (
    EntryProblem, check_entry, entry_argument_spec, keep_entry)


def main():
    argument_spec = ldap_connection_argument_spec()
    argument_spec.update(entry_argument_spec())
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    require_ldap3(module)
    try:
        check_entry(module.params)
    except EntryProblem as problem:
        module.fail_json(msg=str(problem))

    connection = connect(module)
    try:
        result = keep_entry(connection, module.params, module.params["ldapi_socket"], module.check_mode)
    except (LdapError, EntryProblem) as error:
        module.fail_json(msg=str(error))
    finally:
        connection.unbind()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
