# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health of an activated release: three probes, none follows a redirect (docs/release.md).

- units: every selected unit is active after a settle time, polled until the timeout, so a
  unit that starts and exits (auto-restart shows as activating, then failed) is caught.
- offering: the Site's offering reads Active in Waldur through the agent's own token and CA,
  with module_utils.waldur's client (TLS verified, redirects refused, token scrubbed).
- site_api: the Site API origin answers over TLS verified against its CA. "Answers" means a
  2xx or 4xx response to an unauthenticated GET of the origin: the edge routed the request
  to a backend that judged it (401/404 are expected for a bare origin). A 3xx fails: it is
  not followed (a web page or a browser-login redirect means the edge routes the Site API's
  host to another service), and nothing is sent to its target. A 5xx fails after the
  retries: the edge is up, the backend is not. The probe sends no credential: TLS proves the
  endpoint, never authority.
"""

from __future__ import annotations

import os
import ssl
import time

from ansible_collections.pharos.hpc.plugins.module_utils.waldur import (
    HAS_HTTPX, WaldurClient, WaldurError)
from ansible_collections.pharos.hpc.plugins.module_utils.waldur_offering import PlanError, read_offering

if HAS_HTTPX:
    import httpx

SETTLE_SECONDS = 3.0
POLL_SECONDS = 1.0
RUNNING = "active"


class HealthError(Exception):
    """The activated release did not become healthy; failures lists each failed probe's message."""

    def __init__(self, messages):
        self.failures = list(messages)
        super().__init__("health did not hold: " + " | ".join(self.failures))


def _probe(name, failure):
    return {"probe": name, "ok": failure is None, "message": failure or "holds"}


def units_active(systemd, units, timeout, settle=SETTLE_SECONDS, clock=time.monotonic, sleep=time.sleep):
    """None when every unit is active after settle seconds (polling until timeout); else why not."""
    deadline = clock() + max(timeout, settle)
    sleep(settle)
    while True:
        states = systemd.states(units)
        down = ["%s is %s" % (unit, states[unit]["active"]) for unit in units if states[unit]["active"] != RUNNING]
        if not down or clock() >= deadline:
            break
        sleep(POLL_SECONDS)
    if not down:
        return None
    journal = " ".join("-u " + unit for unit in units if states[unit]["active"] != RUNNING)
    return ("%s after %.0f seconds. Fix: read `journalctl %s` on the host; a unit that exits at once usually lacks "
            "its configuration (/etc/pharos-hpc/<component>.env) or its credential under /etc/pharos-hpc/secrets."
            % ("; ".join(down), max(timeout, settle), journal))


def offering_active(api_url, token, ca_file, offering_uuid, timeout, retries=2, sleep=time.sleep):
    """None when the offering reads Active through this token and CA; else why not (never the token)."""
    client = None
    try:
        client = WaldurClient(api_url, token, ca_file, timeout=timeout, retries=retries, sleep=sleep)
        offering = read_offering(client, offering_uuid)
    except (WaldurError, PlanError) as error:
        return "the offering could not be read through the Site agent's token: %s" % error
    except (ssl.SSLError, OSError, ValueError) as error:
        return ("the offering could not be read: %s (%s). Fix: point ca_file at the PEM file of Waldur's CA."
                % (type(error).__name__, getattr(error, "strerror", None) or error))
    finally:
        if client is not None:
            client.close()
    if offering.get("state") != "Active":
        return ("offering %s (%s) is %s, not Active: the Site agent receives no orders for it. Fix: activate it with "
                "pharos.hpc.waldur_offering state: active." % (offering.get("name"), offering_uuid, offering.get("state")))
    return None


def site_api_answers(url, ca_file, timeout, retries=2, backoff=0.5, sleep=time.sleep):
    """None when the Site API origin answers 2xx or 4xx over verified TLS without a redirect; else why not."""
    if not url.startswith("https://"):
        return "site_api_url %s is not https://. Fix: give the Site API origin, https://host[:port]." % url
    if ca_file and not os.path.isfile(ca_file):
        return "site_api_ca_file %s does not exist. Fix: point it at the Site API edge's CA (PEM)." % ca_file
    try:
        context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
    except (ssl.SSLError, OSError) as error:
        return "site_api_ca_file %s is not a PEM CA file (%s). Fix: give the Site API edge's CA." % (ca_file, error)
    origin = url.rstrip("/") + "/"
    problem = None
    with httpx.Client(verify=context, timeout=httpx.Timeout(timeout), follow_redirects=False, trust_env=False,
                      headers={"User-Agent": "pharos.hpc pharos_release health"}) as http:
        for attempt in range(1 + max(0, retries)):
            if attempt:
                sleep(backoff * (2 ** (attempt - 1)))
            try:
                response = http.get(origin)
            except httpx.TransportError as error:
                problem = "the Site API at %s could not be reached over verified TLS (%s)" % (
                    origin, str(error) or type(error).__name__)
                continue
            if 300 <= response.status_code < 400:
                location = response.headers.get("Location", "")
                target = httpx.URL(origin).join(location).host if location else "(no Location header)"
                return ("the Site API at %s answered HTTP %d, a redirect to %s; it was not followed. A Site API route "
                        "answers its agents directly, so the edge sends this host to another service (a browser "
                        "login?). Fix: route the Site API's host to the Site API backend, or correct "
                        "CENTRAL_SITE_API_URL." % (origin, response.status_code, target))
            if response.status_code >= 500:
                problem = "the Site API at %s answered HTTP %d: the edge is up, its backend is not" % (
                    origin, response.status_code)
                continue
            return None
    return "%s (tried %d times). Fix: check the Site API edge and this host's route to it." % (problem, 1 + max(0, retries))


def run_probes(config, systemd, units, sleep=time.sleep, clock=time.monotonic):
    """Every configured probe as {probe, ok, message}; config holds the module's health options."""
    results = [_probe("units", units_active(systemd, units, config["health_timeout"], config.get("health_settle", SETTLE_SECONDS),
                                            clock=clock, sleep=sleep))]
    if config.get("offering_uuid"):
        results.append(_probe("offering", offering_active(config["waldur_url"], config["waldur_token"], config.get("ca_file"),
                                                          config["offering_uuid"], config["health_timeout"], sleep=sleep)))
    if config.get("site_api_url"):
        results.append(_probe("site_api", site_api_answers(config["site_api_url"], config.get("site_api_ca_file"),
                                                           config["health_timeout"], sleep=sleep)))
    return results


def failures(results):
    return ["%s: %s" % (result["probe"], result["message"]) for result in results if not result["ok"]]
