# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The service accounts and groups Pharos keeps, checked against a host's own before any change.

Ansible's user and group modules renumber an account that exists with another ID, and fail
half-way when another name holds the ID. Files the account owns keep the old number, so either
is a change no administrator asked for. Each planned identity must be absent, or present with
exactly the planned ID, and its ID must be free or its own.
"""

from __future__ import annotations

import grp
import pwd
from dataclasses import dataclass
from typing import Callable, Optional


# The identities option, as the module and its action plugin both validate it.
ARGUMENT_SPEC = dict(
    identities=dict(type="list", elements="dict", required=True, options=dict(
        kind=dict(type="str", choices=["user", "group"], required=True),
        name=dict(type="str", required=True),
        id=dict(type="int", required=True),
        setting=dict(type="str", required=True),
    )),
)


@dataclass(frozen=True)
class Planned:
    kind: str  # "user" or "group"
    name: str
    id: int
    setting: str  # the Site value that chose the ID, named in the fix


@dataclass(frozen=True)
class Lookups:
    """id_of(kind, name) -> the ID that name has, or None; name_of(kind, id) -> who holds the ID, or None."""

    id_of: Callable[[str, str], Optional[int]]
    name_of: Callable[[str, int], Optional[str]]


def _nss_id(kind, name):
    try:
        return pwd.getpwnam(name).pw_uid if kind == "user" else grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def _nss_name(kind, number):
    try:
        return pwd.getpwuid(number).pw_name if kind == "user" else grp.getgrgid(number).gr_name
    except KeyError:
        return None


NSS = Lookups(_nss_id, _nss_name)

_WORDS = {"user": ("account", "UID", "usermod -u"), "group": ("group", "GID", "groupmod -g")}


def conflicts(planned: list[Planned], lookups: Lookups = NSS) -> list[str]:
    """Each planned identity that the host holds otherwise, with the fix."""
    found = []
    for item in planned:
        noun, label, renumber = _WORDS[item.kind]
        present = lookups.id_of(item.kind, item.name)
        if present is not None and present != item.id:
            found.append(
                f"the {noun} {item.name} exists with {label} {present}, but the Site plans "
                f"{label} {item.id} for it ({item.setting}); the run would renumber it, and the files "
                f"it owns would keep {present}. Set {item.setting}: {present}, or renumber it yourself "
                f"({renumber} {item.id} {item.name}) and give its files the new number."
            )
        holder = lookups.name_of(item.kind, item.id)
        if holder is not None and holder != item.name:
            found.append(
                f"{label} {item.id}, which the Site plans for the {noun} {item.name} ({item.setting}), "
                f"belongs to {holder} already; two names would share it. Choose a free {label} for "
                f"{item.setting}, or move {holder} to another {label}."
            )
    return found
