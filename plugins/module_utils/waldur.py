# -*- coding: utf-8 -*-
# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small Waldur REST client on httpx, and the connection options every Waldur module shares.

The rules it keeps, as every module of this collection does:
- TLS is always verified, against ca_file when one is given, else the system trust store.
- Every request has a timeout.
- A redirect is never followed: the token would travel to whatever host the Location names.
  A 3xx is an error that names that host and says the token was not sent there.
- 5xx answers and connection errors or timeouts are retried a bounded number of times with
  exponential backoff, then reported as one clear error. A create (POST to a collection) is
  retried only when the connection failed before the request was sent, so a retry can never
  make a second offering.
- The token never appears in an error message: every message passes through _scrub().
"""

from __future__ import annotations

import json
import os
import ssl
import time
import traceback

try:
    import httpx
except ImportError:
    HAS_HTTPX = False
    HTTPX_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_HTTPX = True
    HTTPX_IMPORT_ERROR = None

DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 3
BACKOFF_SECONDS = 0.5


def waldur_argument_spec():
    """The options of plugins/doc_fragments/waldur.py, for a module's argument_spec."""
    return dict(
        api_url=dict(type="str", required=True),
        token=dict(type="str", no_log=True),
        token_file=dict(type="path"),
        ca_file=dict(type="path"),
        timeout=dict(type="float", default=DEFAULT_TIMEOUT),
        retries=dict(type="int", default=DEFAULT_RETRIES),
    )


WALDUR_MUTUALLY_EXCLUSIVE = [("token", "token_file")]
WALDUR_REQUIRED_ONE_OF = [("token", "token_file")]


class WaldurError(Exception):
    """An answer or a failure the caller cannot go on from. str() is safe to show."""

    def __init__(self, message, status=None, body=None):
        super().__init__(message)
        self.status = status
        self.body = body


def read_token(token, token_file):
    """The token from the option or from its file (first line, stripped)."""
    if token:
        return token.strip()
    try:
        with open(token_file, encoding="utf-8") as handle:
            value = handle.readline().strip()
    except OSError as error:
        raise WaldurError("Cannot read the Waldur token file %s: %s. Fix: point token_file at a readable "
                          "file that holds the API token on its first line." % (token_file, error.strerror)) from None
    if not value:
        raise WaldurError("The Waldur token file %s is empty. Fix: write the API token on its first line." % token_file)
    return value


def _origin(url):
    parsed = httpx.URL(url)
    return (parsed.scheme, parsed.host, parsed.port)


def _describe(body):
    """A short text of a Waldur error body: {"detail": ...} or DRF's field errors."""
    if isinstance(body, dict):
        if set(body) == {"detail"}:
            return str(body["detail"])
        return "; ".join("%s: %s" % (name, " ".join(map(str, value)) if isinstance(value, list) else value)
                         for name, value in body.items())
    if isinstance(body, list):
        return " ".join(map(str, body))
    return str(body)[:300]


class WaldurClient:
    """Talks to one Waldur API (api_url ends in /api/) with one token."""

    def __init__(self, api_url, token, ca_file=None, timeout=DEFAULT_TIMEOUT, retries=DEFAULT_RETRIES,
                 backoff=BACKOFF_SECONDS, sleep=time.sleep):
        if not api_url.startswith("https://"):
            raise WaldurError("api_url %s is not https: the token must not travel in clear. Fix: use the "
                              "https:// address of the Waldur API, ending in /api/." % api_url)
        self.api_url = api_url if api_url.endswith("/") else api_url + "/"
        self._token = token
        self.retries = max(0, retries)
        self.backoff = backoff
        self._sleep = sleep
        self.requests_sent = 0
        if ca_file:
            if not os.path.isfile(ca_file):
                raise WaldurError("ca_file %s does not exist. Fix: point ca_file at the PEM file of the CA that "
                                  "signed the Waldur server's certificate." % ca_file)
            context = ssl.create_default_context(cafile=ca_file)
        else:
            context = ssl.create_default_context()
        self._http = httpx.Client(
            verify=context, timeout=httpx.Timeout(timeout), follow_redirects=False, trust_env=False,
            headers={"Authorization": "Token " + token, "Accept": "application/json",
                     "User-Agent": "pharos.hpc waldur_offering"})

    def close(self):
        self._http.close()

    def _scrub(self, text):
        return text.replace(self._token, "********") if self._token else text

    def url(self, path):
        return path if path.startswith("https://") else self.api_url + path.lstrip("/")

    def request(self, method, path, params=None, body=None, creates=False):
        """One API call with the retry policy; returns the httpx.Response of a 2xx answer."""
        url = self.url(path)
        if _origin(url) != _origin(self.api_url):
            raise WaldurError("Refusing to send the Waldur token to %s, which is not the configured API host %s. "
                              "Fix: check api_url." % (httpx.URL(url).host, httpx.URL(self.api_url).host))
        what = "%s %s" % (method, httpx.URL(url).raw_path.decode("ascii", "replace"))
        attempts = 1 + self.retries
        last_problem = None
        for attempt in range(attempts):
            if attempt:
                self._sleep(self.backoff * (2 ** (attempt - 1)))
            try:
                self.requests_sent += 1
                response = self._http.request(method, url, params=params, json=body)
            except httpx.ConnectError as error:
                last_problem = "could not connect (%s)" % self._scrub(str(error) or type(error).__name__)
                continue
            except httpx.TimeoutException as error:
                last_problem = "no answer within the timeout (%s)" % type(error).__name__
                if creates:
                    break
                continue
            except httpx.TransportError as error:
                last_problem = "the connection failed (%s)" % self._scrub(str(error) or type(error).__name__)
                if creates:
                    break
                continue
            if response.is_redirect or 300 <= response.status_code < 400:
                location = response.headers.get("Location", "")
                target = httpx.URL(url).join(location).host if location else "(no Location header)"
                raise WaldurError(
                    "Waldur answered %s with HTTP %d, a redirect to %s. The redirect was not followed and the token "
                    "was not sent there. Fix: set api_url to the address the API really answers on, if %s is "
                    "trusted." % (what, response.status_code, target, target), status=response.status_code)
            if response.status_code >= 500:
                last_problem = "HTTP %d (%s)" % (response.status_code, self._scrub(_describe(_json(response))))
                if creates:
                    break
                continue
            if response.status_code >= 400:
                body_json = _json(response)
                raise WaldurError(self._client_error(what, response.status_code, body_json),
                                  status=response.status_code, body=body_json)
            return response
        tried = "once (a create is not repeated, so it cannot make two offerings)" if creates and attempt == 0 \
            else "%d times" % (attempt + 1)
        raise WaldurError("Waldur at %s failed %s: %s, tried %s. Fix: check that Waldur is up and reachable from "
                          "this host, then re-run; nothing after the failed call was applied."
                          % (httpx.URL(self.api_url).host, what, last_problem, tried))

    def _client_error(self, what, status, body):
        cause = self._scrub(_describe(body))
        if status == 401:
            return ("Waldur refused the token for %s (HTTP 401: %s). Fix: give a valid API token of the provider's "
                    "service account in token or token_file." % (what, cause))
        if status == 403:
            return ("The token's user may not %s (HTTP 403: %s). Fix: grant that user CUSTOMER.OWNER on the provider "
                    "organisation." % (what, cause))
        return "Waldur refused %s with HTTP %d: %s" % (what, status, cause)

    def get(self, path, params=None):
        return _json(self.request("GET", path, params=params))

    def post(self, path, body=None, creates=False):
        response = self.request("POST", path, body=body if body is not None else {}, creates=creates)
        return _json(response)

    def list_all(self, path, params=None, page_size=50):
        """Every item of a paged list, following Link rel="next" on the same host only."""
        items = []
        url, query = self.url(path), dict(params or {}, page_size=page_size)
        while url:
            response = self.request("GET", url, params=query)
            page = _json(response)
            if not isinstance(page, list):
                raise WaldurError("Waldur answered GET %s with %s where a list was expected. Fix: check that api_url "
                                  "points at the Waldur API (.../api/)." % (path, type(page).__name__))
            items.extend(page)
            url = response.links.get("next", {}).get("url")
            query = None
        return items


def _json(response):
    if not response.content:
        return None
    try:
        return response.json()
    except (ValueError, json.JSONDecodeError):
        return response.text[:300]
