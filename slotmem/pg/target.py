"""A PostgreSQL target: ``postgresql://user[:password]@host[:port]/db?memory=NAME``.

``memory`` (default ``slotmem``) names the PostgreSQL schema that holds the memory; every other
query parameter is handed to libpq (``sslmode``, ``connect_timeout``, ...). The password never
appears in what slotmem prints (``Target.shown``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import InvalidInput

DEFAULT_MEMORY = "slotmem"
MEMORY_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
CONNECT_TIMEOUT = "10"  # seconds, unless the URL says otherwise


@dataclass(frozen=True)
class Target:
    conninfo: str  # what psycopg connects to (the URL without ``memory``)
    memory: str  # the schema
    shown: str  # the URL without its password, for messages

    def __str__(self) -> str:
        return self.shown


def parse(url: str) -> Target:
    """The target ``url`` names; InvalidInput (one line) when it is not one."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise InvalidInput(f"not a PostgreSQL URL ({e}): postgresql://user@host:5432/db") from None
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
        raise InvalidInput(
            f"not a PostgreSQL URL: {_hidden(url)!r} (expected postgresql://user@host:5432/db)"
        )
    query = parse_qsl(parts.query, keep_blank_values=True)
    memories = [value for name, value in query if name == "memory"]
    memory = memories[-1] if memories else DEFAULT_MEMORY
    if not MEMORY_NAME.fullmatch(memory):
        raise InvalidInput(
            f"memory={memory!r}: a memory's name is 1-63 lower-case letters, digits or _, "
            "not starting with a digit (it names a PostgreSQL schema)"
        )
    rest = [(name, value) for name, value in query if name != "memory"]
    if not any(name == "connect_timeout" for name, _ in rest):
        rest.append(("connect_timeout", CONNECT_TIMEOUT))
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest), ""))
    shown = f"{parts.scheme}://{_netloc(parts.username, parts.hostname, port)}{parts.path}"
    return Target(conninfo, memory, f"{shown}?memory={memory}")


def _netloc(user: str | None, host: str, port: int | None) -> str:
    return f"{user + '@' if user else ''}{host}{':' + str(port) if port else ''}"


def _hidden(url: str) -> str:
    return re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", url)
