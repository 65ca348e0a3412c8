# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # The Waldur connection every pharos.hpc module that talks to Waldur takes.
    DOCUMENTATION = r"""
options:
  api_url:
    description:
      - Address of the Waldur API, ending in C(/api/), for example C(https://waldur.example.org/api/).
      - Must be C(https://); the module never sends the token in clear.
    type: str
    required: true
  token:
    description:
      - "API token of the provider's service account, sent as C(Authorization: Token ...)."
      - Never logged, never shown in a diff or an error. Prefer O(token_file) so it stays out of task arguments.
      - Exactly one of O(token) and O(token_file) is required.
    type: str
  token_file:
    description:
      - File on the host the module runs on whose first line is the API token.
    type: path
  ca_file:
    description:
      - PEM file of the CA that signed the Waldur server's certificate.
      - When omitted, the system trust store is used. TLS verification cannot be turned off.
    type: path
  timeout:
    description:
      - Seconds to wait for connecting to Waldur and for each answer.
    type: float
    default: 30
  retries:
    description:
      - How many times a request is repeated after a 5xx answer, a connection error or a timeout, with a backoff
        of 0.5, 1, 2 ... seconds, before the module fails with the last cause.
      - A create is repeated only when the connection failed before the request was sent, so a retry never makes a
        second object.
      - Redirects are never followed, so the token never reaches another host; a 3xx answer is an error.
    type: int
    default: 3
requirements:
  - "httpx >= 0.27 on the host the module runs on (usually the controller, with C(delegate_to: localhost))"
"""
