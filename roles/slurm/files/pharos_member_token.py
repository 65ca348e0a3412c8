"""The Site's Slurm token issuer: it turns a member token from the Pharos issuer into a Slurm
token for that member, and for nobody else.

Slurm 24.11 checks only a token's signature and expiry, and acts as whatever name the token
carries: root, SlurmUser, a service account or a bare UID. So Slurm trusts one key alone, the
controller's HS256 key, and this program is the only holder of that key that signs for
others. It signs only after it has verified, for each request:

- the member token's RS256 signature against the Pharos issuer's pinned public keys, its
  issuer, its audience (this Site's Slurm), its expiry and a lifetime no longer than allowed;
- that the token names the member in `sun`, and that `username` and `preferred_username`,
  when present, name the same member;
- that the member is a directory account (no local account of that name) whose UID is in the
  Site's member range.

systemd starts one instance per connection (pharos-member-token.socket, Accept=yes), with the
connection on stdin and stdout: the request is the member token, the answer one JSON line,
{"user", "token", "expires"} or {"error"}. Each request is logged without any token.

Usage: pharos_member_token.py serve SETTINGS.json
       pharos_member_token.py request [SOCKET] < member-token   (prints the Slurm token)
"""

import json
import os
import pwd
import re
import socket
import sys
import time

import jwt

MAX_REQUEST_BYTES = 16384
LEEWAY_SECONDS = 30
NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
NAME_CLAIMS = ("sun", "username", "preferred_username")
DEFAULT_SOCKET = "/run/pharos-member-token.socket"


class Refused(Exception):
    """A request this issuer will not sign for; the message says why and names no secret."""


def local_accounts(passwd_path="/etc/passwd"):
    """{name: UID} of the host's own accounts: root, SlurmUser, the service accounts."""
    accounts = {}
    with open(passwd_path, encoding="utf-8", errors="replace") as passwd:
        for line in passwd:
            fields = line.split(":")
            if len(fields) > 2 and fields[2].isdigit():
                accounts.setdefault(fields[0], int(fields[2]))
    return accounts


def named_member(claims):
    """The one name the token's name claims agree on."""
    name = claims.get("sun")
    if not isinstance(name, str) or not name:
        raise Refused("the token names no member in 'sun'")
    for claim in NAME_CLAIMS[1:]:
        if claim in claims and claims[claim] != name:
            raise Refused(f"the token's '{claim}' names someone other than its 'sun' ({name!r})")
    return name


def check_member(name, settings, host_accounts, lookup=pwd.getpwnam):
    """Refuse any name that is not a directory member in the member UID range, and any whose
    UID a local account holds: Slurm runs the job as the UID, so it would be that account's."""
    if not NAME.fullmatch(name):
        raise Refused(f"{name!r} is not a member's name (a numeric name would be read as a UID)")
    if name in host_accounts:
        raise Refused(f"{name!r} is an account of this host, not a member")
    try:
        uid = lookup(name).pw_uid
    except KeyError:
        raise Refused(f"{name!r} is no account known here") from None
    if not settings["member_uid_min"] <= uid <= settings["member_uid_max"]:
        raise Refused(f"{name!r} has UID {uid}, outside the member range "
                      f"{settings['member_uid_min']}-{settings['member_uid_max']}")
    holders = sorted(local for local, local_uid in host_accounts.items() if local_uid == uid)
    if holders:
        raise Refused(f"{name!r} has UID {uid}, which the account {holders[0]!r} of this host holds")
    return uid


def verified_claims(member_token, settings, issuer_keys):
    """The claims of a member token the Pharos issuer signed for this Site's Slurm."""
    for key in issuer_keys:
        try:
            claims = jwt.decode(
                member_token, key, algorithms=["RS256"], issuer=settings["issuer"],
                audience=settings["audience"], leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "iss", "aud"]})
        except jwt.InvalidSignatureError:
            continue
        except jwt.PyJWTError as error:
            raise Refused(f"the member token is not valid here: {error}") from None
        if claims["exp"] - claims["iat"] > settings["max_lifespan"]:
            raise Refused(f"the member token lives {claims['exp'] - claims['iat']} s, longer than "
                          f"the {settings['max_lifespan']} s allowed")
        return claims
    raise Refused("the member token is not signed by the Pharos issuer's key")


def exchange(member_token, settings, issuer_keys, slurm_key, host_accounts,
             lookup=pwd.getpwnam, now=None):
    """The Slurm token for the member the member token names, or Refused."""
    claims = verified_claims(member_token, settings, issuer_keys)
    name = named_member(claims)
    check_member(name, settings, host_accounts, lookup)
    now = int(time.time()) if now is None else now
    expires = min(int(claims["exp"]), now + settings["max_lifespan"])
    token = jwt.encode({"iat": now, "exp": expires, "sun": name}, slurm_key, algorithm="HS256")
    return {"user": name, "token": token, "expires": expires}


def read_request(stream):
    request = stream.read(MAX_REQUEST_BYTES + 1)
    if len(request) > MAX_REQUEST_BYTES:
        raise Refused(f"the request is longer than {MAX_REQUEST_BYTES} bytes")
    try:
        return request.decode("ascii").strip()
    except UnicodeDecodeError:
        raise Refused("the request is not a token") from None


def serve(settings_path):
    with open(settings_path, encoding="utf-8") as handle:
        settings = json.load(handle)
    with open(settings["issuer_keys"], encoding="ascii") as handle:
        issuer_keys = re.findall(r"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----",
                                 handle.read(), flags=re.S)
    credentials = os.environ["CREDENTIALS_DIRECTORY"]
    with open(os.path.join(credentials, "slurm-jwt-key"), "rb") as handle:
        slurm_key = handle.read()
    try:
        answer = exchange(read_request(sys.stdin.buffer), settings, issuer_keys, slurm_key,
                          local_accounts())
    except Refused as refusal:
        print(f"refused: {refusal}", file=sys.stderr)
        answer = {"error": str(refusal)}
    else:
        print(f"issued a Slurm token for {answer['user']} until {answer['expires']}", file=sys.stderr)
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    # A refusal is an answer, not a failure of the service.
    return 0


def request(socket_path):
    """Send the member token on stdin; print the Slurm token, or the refusal on stderr."""
    member_token = sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
    answer = b""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(30)
            connection.connect(socket_path)
            connection.sendall(member_token)
            connection.shutdown(socket.SHUT_WR)
            while chunk := connection.recv(65536):
                answer += chunk
    except OSError as error:
        print(f"pharos-member-token: cannot ask the issuer at {socket_path}: {error.strerror or error}",
              file=sys.stderr)
        return 1
    try:
        reply = json.loads(answer or b"{}")
    except ValueError:
        reply = {"error": "the issuer's answer is not JSON; see its journal (pharos-member-token@*)"}
    if "token" not in reply:
        print(f"pharos-member-token: refused: {reply.get('error', 'no answer')}", file=sys.stderr)
        return 1
    print(reply["token"])
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "serve":
        return serve(argv[2])
    if len(argv) in (2, 3) and argv[1] == "request":
        return request(argv[2] if len(argv) == 3 else DEFAULT_SOCKET)
    print(__doc__.rsplit("Usage:", 1)[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
