# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # How the collection's LDAP modules reach slapd (plugins/module_utils/ldap.py).
    DOCUMENTATION = r"""
options:
  uri:
    description:
      - The directory to talk to.
      - V(ldapi:///) (the default) binds with SASL EXTERNAL as the Unix user the module runs
        as, over slapd's local socket; root is the directory's manager there.
      - An C(ldap://) URI is only accepted for a loopback address (for example
        V(ldap://127.0.0.1/)) and needs O(bind_dn) and O(bind_password) for a simple bind.
    type: str
    default: ldapi:///
  ldapi_socket:
    description:
      - The socket of V(ldapi:///), as slapd of Debian creates it.
    type: path
    default: /run/slapd/ldapi
  bind_dn:
    description:
      - The DN of a simple bind on a loopback O(uri). Leave it out for SASL EXTERNAL.
    type: str
  bind_password:
    description:
      - The password of O(bind_dn). Never logged, never shown in a diff.
    type: str
requirements:
  - ldap3 (Debian package C(python3-ldap3)) on the host the module runs on.
"""
