# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""LDAP for the collection's modules: one connection helper over ldap3 and pure planners.

The planners (everything above ``connect``) are plain functions of (desired, current) and
import nothing from ldap3, so check mode is exact and unit tests need no directory.

Connections follow the design's rule: SASL EXTERNAL over ``ldapi:///`` (the local root, or a
Unix user mapped by olcAuthzRegexp) by default; a simple bind only to a loopback address.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import re
import traceback

LDAP3_IMPORT_ERROR = None
try:
    import ldap3
    from ldap3.core.exceptions import LDAPException
    from ldap3.utils.dn import to_dn
except ImportError:
    LDAP3_IMPORT_ERROR = traceback.format_exc()
    ldap3 = None
    LDAPException = Exception

    def to_dn(dn, decompose=False):  # pylint: disable=unused-argument
        raise RuntimeError("ldap3 is required")

DEFAULT_LDAPI_SOCKET = "/run/slapd/ldapi"
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
SECRET_PLACEHOLDER = "<secret, not shown>"
# The attribute the Password Modify operation (RFC 3062) sets, and the scheme of the value an
# entry holds until it has: no password scheme slapd knows.
PASSWORD_ATTRIBUTE = "userPassword"
UNUSABLE_PASSWORD_SCHEME = "{UNSET}"

# slapd prefixes the values (and some RDNs) of X-ORDERED attributes in cn=config with "{n}";
# frontend and config databases use "{-1}" and "{0}".
_ORDER_PREFIX = re.compile(r"^\{(-?\d+)\}")


def ldap_connection_argument_spec():
    """Options every LDAP module shares (documented in the pharos.hpc.ldap doc fragment)."""
    return dict(
        uri=dict(type="str", default="ldapi:///"),
        ldapi_socket=dict(type="path", default=DEFAULT_LDAPI_SOCKET),
        bind_dn=dict(type="str"),
        bind_password=dict(type="str", no_log=True),
    )


# ---------------------------------------------------------------- pure helpers


def strip_order_prefix(value):
    """Split slapd's ``{n}`` ordering prefix from a value: ``"{2}to *"`` -> ``(2, "to *")``."""
    match = _ORDER_PREFIX.match(value)
    if not match:
        return None, value
    return int(match.group(1)), value[match.end():]


def normalise_acl_rule(rule):
    """An olcAccess rule without its index and with runs of white space folded to one."""
    return " ".join(strip_order_prefix(rule.strip())[1].split())


def ordered_values(values):
    """Values of an X-ORDERED attribute in slapd's order, without their ``{n}`` prefixes."""
    indexed = []
    for position, value in enumerate(values):
        index, text = strip_order_prefix(value)
        indexed.append((position if index is None else index, position, text))
    return [text for _index, _position, text in sorted(indexed)]


def with_order_prefixes(values):
    """``["a", "b"]`` -> ``["{0}a", "{1}b"]``: one whole ordered value set."""
    return ["{%d}%s" % (index, value) for index, value in enumerate(values)]


def is_config_dn(dn):
    """cn=config entries hold X-ORDERED attributes and ordered RDNs."""
    return dn.strip().lower().replace(" ", "").endswith("cn=config")


def rdn_matches(current_rdn, wanted_rdn):
    """Whether ``cn={4}openssh-lpk`` is the entry meant by ``cn=openssh-lpk`` (or the same RDN).

    Attribute names compare case-insensitively; an ordering prefix on either side is ignored
    when the wanted RDN has none, and must be equal when it has one.
    """
    current_attr, _sep, current_value = current_rdn.partition("=")
    wanted_attr, _sep, wanted_value = wanted_rdn.partition("=")
    if current_attr.strip().lower() != wanted_attr.strip().lower():
        return False
    wanted_index, wanted_text = strip_order_prefix(wanted_value.strip())
    current_index, current_text = strip_order_prefix(current_value.strip())
    if wanted_index is not None and wanted_index != current_index:
        return False
    return current_text.lower() == wanted_text.lower()


def plan_acl(desired_rules, current_values):
    """Plan a database's whole olcAccess list as one value set.

    Returns a dict with ``changed``, ``before`` and ``after`` (readable text, one indexed rule
    a line) and ``values`` (the list to write with MODIFY_REPLACE).
    """
    desired = [normalise_acl_rule(rule) for rule in desired_rules]
    current = [normalise_acl_rule(rule) for rule in ordered_values(current_values)]
    return dict(
        changed=desired != current,
        before=render_ordered(current),
        after=render_ordered(desired),
        values=with_order_prefixes(desired),
    )


def render_ordered(values):
    return "".join("{%d}%s\n" % (index, value) for index, value in enumerate(values))


def _attribute_key(name):
    return name.strip().lower()


def _comparable(values, ordered):
    """Ordered values compare as lists (order matters), others as sets."""
    if ordered:
        return [strip_order_prefix(value)[1] for value in values]
    return sorted(set(values))


def plan_entry(dn, desired, current, exact=(), ordered=False, retired=None):
    """Plan the change of one entry's attributes.

    ``desired`` maps attribute names to lists of values, ``current`` is the entry's attributes
    (``None`` when the entry does not exist). Attributes named in ``exact`` are held to exactly
    the desired values (an empty list removes the attribute); the others only get their missing
    values added, and values the role does not name are kept. ``ordered`` treats values as
    X-ORDERED (cn=config): ``{n}`` prefixes are ignored and the order of exact lists matters.

    Returns ``dict(action, changes, before, after)`` where ``action`` is ``add``, ``modify`` or
    ``none`` and ``changes`` is a list of ``(operation, attribute, values)`` with operation
    ``add``, ``replace`` or ``delete``.

    ``retired`` maps attribute names to values the role wrote once and no longer wants: each
    one present is deleted, and the attribute's other values are kept.
    """
    exact_keys = set(_attribute_key(name) for name in exact)
    for name in exact:
        if _attribute_key(name) not in [_attribute_key(key) for key in desired]:
            raise ValueError("%s is named in exact but has no values in attributes" % name)
    if current is None:
        values = dict((name, list(vals)) for name, vals in desired.items() if vals)
        return dict(action="add", changes=[("add", name, vals) for name, vals in values.items()],
                    before={}, after=values)

    current_by_key = dict((_attribute_key(name), (name, list(vals))) for name, vals in current.items())
    changes = []
    before = {}
    after = {}
    for name, wanted in desired.items():
        key = _attribute_key(name)
        present_name, present = current_by_key.get(key, (name, []))
        present_plain = ordered_values(present) if ordered else list(present)
        if present:
            before[present_name] = present_plain
        if key in exact_keys:
            if _comparable(present_plain, ordered) != _comparable(wanted, ordered):
                if wanted:
                    # slapd numbers values written without an index in the order given.
                    changes.append(("replace", present_name, list(wanted)))
                elif present:
                    changes.append(("delete", present_name, []))
            if wanted:
                after[present_name] = list(wanted)
            continue
        missing = [value for value in wanted if value not in present_plain]
        if missing:
            changes.append(("add", present_name, missing))
        merged = present_plain + missing
        if merged:
            after[present_name] = merged
    for name, old_values in (retired or {}).items():
        key = _attribute_key(name)
        present_name, present = current_by_key.get(key, (name, []))
        if key in exact_keys or not present:
            continue
        stale = [raw for raw in present if (strip_order_prefix(raw)[1] if ordered else raw) in old_values]
        if stale:
            changes.insert(0, ("delete", present_name, stale))
            kept = [value for value in after.get(present_name, ordered_values(present) if ordered else present)
                    if value not in old_values]
            before.setdefault(present_name, ordered_values(present) if ordered else list(present))
            after[present_name] = kept
    return dict(action="modify" if changes else "none", changes=changes, before=before, after=after)


def is_secret_attribute(name):
    """Attributes whose values (even hashed) never appear in a diff: userPassword, olcRootPW."""
    key = _attribute_key(name)
    return "password" in key or key.endswith("pw")


def render_entry(dn, attributes, secret_attribute=None, secret_state=None):
    """LDIF-like text of the attributes a module manages, for ``diff``; secrets never shown."""
    if dn is None or attributes is None:
        return ""
    lines = ["dn: %s" % dn]
    for name in sorted(attributes, key=_attribute_key):
        if secret_attribute and _attribute_key(name) == _attribute_key(secret_attribute):
            continue
        for value in attributes[name]:
            lines.append("%s: %s" % (name, SECRET_PLACEHOLDER if is_secret_attribute(name) else value))
    if secret_attribute and secret_state:
        lines.append("%s: %s (%s)" % (secret_attribute, SECRET_PLACEHOLDER, secret_state))
    return "\n".join(lines) + "\n"


def holds_password(attributes):
    """Whether an entry's attributes (``None`` for no entry) hold a userPassword value."""
    return attributes is not None and any(_attribute_key(name) == _attribute_key(PASSWORD_ATTRIBUTE)
                                          for name in attributes)


def plan_password(held, accepted):
    """What the password option needs: ``set`` (the entry holds none, or does not exist yet),
    ``changed`` (slapd refused a bind with it) or ``unchanged``."""
    if not held:
        return "set"
    return "unchanged" if accepted else "changed"


def unusable_password():
    """A userPassword that no bind matches, held only between creating an entry and slapd setting
    its password (simpleSecurityObject requires a value from the start).

    slapd refuses a bind against a value under a scheme it does not know; the random rest keeps
    the value unguessable even where it would be compared as clear text.
    """
    return UNUSABLE_PASSWORD_SCHEME + base64.b64encode(os.urandom(24)).decode("ascii")


def connection_problem(uri, bind_dn, bind_password):
    """Why these connection options break the design's rule, or ``None`` when they are fine."""
    scheme, _sep, rest = uri.partition("://")
    scheme = scheme.lower()
    if scheme not in ("ldapi", "ldap"):
        return ("uri %s: only ldapi:/// (SASL EXTERNAL) and ldap:// to a loopback address are "
                "supported; the Site's directory listens on nothing else" % uri)
    if (bind_dn is None) != (bind_password is None):
        return "bind_dn and bind_password go together: give both for a simple bind, or neither for SASL EXTERNAL"
    if scheme == "ldap":
        host = rest.split("/", 1)[0]
        if host.startswith("["):
            host = host[1:host.find("]")]
        elif host.count(":") == 1:
            host = host.split(":", 1)[0]
        if host.lower() not in LOOPBACK_HOSTS:
            return ("uri %s: a simple bind sends its password in clear, so it is only allowed to a "
                    "loopback address (ldap://127.0.0.1/); use ldapi:/// on the directory host" % uri)
        if bind_dn is None:
            return "uri %s: SASL EXTERNAL needs ldapi:///; give bind_dn and bind_password for ldap://" % uri
    return None


def ldap3_url(uri, socket_path):
    """The URI as ldap3's Server parses it.

    ldapi wants the socket path inside the URL (``ldapi:///`` -> ``ldapi://%2Frun%2F...``), and an
    ldap URL must end at the host and port: ldap3 takes ``127.0.0.1/`` for the host otherwise.
    """
    scheme, _sep, rest = uri.partition("://")
    if scheme.lower() == "ldapi":
        path = rest.rstrip("/") or socket_path
        return "ldapi://" + path.replace("/", "%2F")
    return scheme + "://" + rest.split("/", 1)[0]


# ---------------------------------------------------------------- over ldap3


class LdapError(Exception):
    """A failure already phrased for the administrator: object, cause, fix."""


def require_ldap3(module):
    if LDAP3_IMPORT_ERROR is not None:
        from ansible.module_utils.basic import missing_required_lib
        module.fail_json(msg=missing_required_lib("ldap3 (Debian: python3-ldap3)"), exception=LDAP3_IMPORT_ERROR)


def connect(module):
    """Open the connection the module's options ask for, or fail with what to change."""
    params = module.params
    problem = connection_problem(params["uri"], params["bind_dn"], params["bind_password"])
    if problem:
        module.fail_json(msg=problem)
    url = ldap3_url(params["uri"], params["ldapi_socket"])
    try:
        if params["bind_dn"] is None:
            connection = ldap3.Connection(ldap3.Server(url, get_info=ldap3.NONE), authentication=ldap3.SASL,
                                          sasl_mechanism=ldap3.EXTERNAL, sasl_credentials="",
                                          raise_exceptions=True, auto_bind=True)
        else:
            connection = ldap3.Connection(ldap3.Server(url, get_info=ldap3.NONE), user=params["bind_dn"],
                                          password=params["bind_password"], authentication=ldap3.SIMPLE,
                                          raise_exceptions=True, auto_bind=True)
    except LDAPException as error:
        who = params["bind_dn"] or "SASL EXTERNAL (this Unix user)"
        module.fail_json(msg="Cannot bind to %s as %s: %s. Check that slapd runs and listens there "
                             "(systemctl status slapd) and that this identity may bind."
                             % (params["uri"], who, _describe(error)))
    return connection


def _describe(error):
    result = getattr(error, "description", None) or type(error).__name__
    message = getattr(error, "message", None)
    return "%s (%s)" % (result, message) if message else str(result)


def _decode(values):
    decoded = []
    for value in values:
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                value = "base64:" + base64.b64encode(value).decode("ascii")
        decoded.append(value)
    return decoded


def _search(connection, base, scope, attributes):
    try:
        connection.search(base, "(objectClass=*)", search_scope=scope, attributes=attributes)
    except LDAPException as error:
        if getattr(error, "result", None) == 32:  # noSuchObject
            return []
        raise LdapError("Cannot read %s: %s. Check that this identity may read it." % (base, _describe(error)))
    return [entry for entry in connection.response if entry.get("type") == "searchResEntry"]


def read_entry(connection, dn):
    """``(actual_dn, attributes)`` of the entry, or ``(None, None)`` when it does not exist.

    Under cn=config an RDN without ``{n}`` finds its ordered entry (``cn=openssh-lpk`` finds
    ``cn={4}openssh-lpk``), so a caller never needs to know the index slapd chose.
    """
    found = _search(connection, dn, ldap3.BASE, ["*"])
    if not found and is_config_dn(dn):
        actual = _resolve_ordered_dn(connection, dn)
        found = _search(connection, actual, ldap3.BASE, ["*"]) if actual else []
    if not found:
        return None, None
    entry = found[0]
    attributes = dict((name, _decode(values)) for name, values in entry["raw_attributes"].items())
    return entry["dn"], attributes


def _resolve_ordered_dn(connection, dn):
    components = to_dn(dn)
    current = ""
    for component in reversed(components):
        candidate = component + ("," + current if current else "")
        if _search(connection, candidate, ldap3.BASE, ["1.1"]):
            current = candidate
            continue
        if not current:
            return None
        matches = [child["dn"] for child in _search(connection, current, ldap3.LEVEL, ["1.1"])
                   if rdn_matches(to_dn(child["dn"])[0], component)]
        if len(matches) != 1:
            return None
        current = matches[0]
    return current


def password_matches(ldapi_socket, dn, password):
    """Whether the entry accepts this password: a simple bind over the local socket.

    The stored value is slapd's own hash, salted and in whatever scheme it was set with; a bind
    lets slapd compare, so the same password is no change whatever the scheme.
    """
    url = ldap3_url("ldapi:///", ldapi_socket)
    try:
        probe = ldap3.Connection(ldap3.Server(url, get_info=ldap3.NONE), user=dn, password=password,
                                 authentication=ldap3.SIMPLE, raise_exceptions=False)
        accepted = probe.bind()
        probe.unbind()
    except LDAPException:
        return False
    return bool(accepted)


def apply_changes(connection, dn, action, changes):
    """Write a plan of ``plan_entry``: one add, or one modify with every change."""
    try:
        if action == "add":
            connection.add(dn, attributes=dict((name, values) for _op, name, values in changes))
        elif action == "modify":
            operations = {"add": ldap3.MODIFY_ADD, "replace": ldap3.MODIFY_REPLACE, "delete": ldap3.MODIFY_DELETE}
            modification = {}
            for operation, name, values in changes:
                modification.setdefault(name, []).append((operations[operation], values))
            connection.modify(dn, modification)
        elif action == "delete":
            connection.delete(dn)
    except LDAPException as error:
        raise LdapError("slapd refused to %s %s: %s. %s" % (action, dn, _describe(error), _fix_for(error)))


def set_password(connection, dn, password):
    """Have slapd hash and store the entry's userPassword with its own scheme (olcPasswordHash),
    through the Password Modify extended operation (RFC 3062)."""
    try:
        done = connection.extend.standard.modify_password(user=dn, new_password=password)
    except LDAPException as error:
        raise LdapError("slapd refused to set the password of %s: %s. %s" % (dn, _describe(error), _fix_for(error)))
    if done is not True:
        raise LdapError("slapd did not confirm the password of %s. Check slapd's log (journalctl -u slapd)." % dn)


def _fix_for(error):
    result = getattr(error, "result", None)
    fixes = {
        50: "This identity lacks the access: run as root over ldapi:/// or fix the database's olcAccess.",
        19: "A constraint (slapo-constraint ranges or schema) refused a value: correct the value.",
        21: "A value has the wrong syntax for its attribute: correct the value.",
        32: "The parent entry does not exist: create it first.",
        65: "The object classes do not allow these attributes: add the object class that does.",
        66: "The entry still has children: remove them first.",
        80: "slapd could not apply the configuration (see journalctl -u slapd): check the value.",
    }
    return fixes.get(result, "Check the value and slapd's log (journalctl -u slapd).")
