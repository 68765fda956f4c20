"""Secrets in URLs, masked wherever a URL is shown (errors, warnings, logs, API answers).

A URL can carry a secret in two places: the password of its user information
(``postgresql://user:secret@host/db``) and its query (``?password=secret``, as libpq reads
it, or ``?token=…``, ``?api_key=…`` elsewhere). Both are replaced by ``***``; everything else
is kept exactly as written, so the URL still says which server and database it names.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
#: A query parameter whose name (case-insensitive, percent-decoded) contains one of these
#: holds a secret, or the way to one: libpq's ``password``, ``sslpassword``, ``passfile`` and
#: ``sslkey``; ``token``, ``access_token``, ``api_key``, ``apikey``, ``secret``,
#: ``client_secret``; a signed URL's ``signature`` and ``credential``; ``auth``.
SECRET_NAME_PARTS = ("pass", "pwd", "secret", "token", "key", "signature", "credential", "auth")
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*:)(?P<rest>.*)$", re.DOTALL)


def mask_url_secrets(url: str) -> str:
    """``url`` with its password and its secret query parameters replaced by ``***``."""
    match = _URL.match(url)
    if match is None:
        return url
    rest = match["rest"]
    authority = ""
    if rest.startswith("//"):
        authority, rest = _masked_authority(rest[2:])
    rest, fragment = _split(rest, "#")
    path, query = _split(rest, "?")
    masked = match["scheme"] + authority + path
    if query is not None:
        masked += "?" + "&".join(_masked_parameter(p) for p in query.split("&"))
    return masked if fragment is None else f"{masked}#{fragment}"


def _split(text: str, separator: str) -> tuple[str, str | None]:
    head, found, tail = text.partition(separator)
    return (head, tail) if found else (text, None)


def _masked_authority(after_slashes: str) -> tuple[str, str]:
    """``//`` and the user information with its password masked, and the rest of the URL.
    The user information ends at the last ``@`` before the path: a password may hold a raw
    ``?`` or ``#`` (libpq reads one), so it is found before the query is split off."""
    slash = after_slashes.find("/")
    head = after_slashes if slash < 0 else after_slashes[:slash]
    user_info, at, _ = head.rpartition("@")
    if not at or ":" not in user_info:
        return "//", after_slashes
    user = user_info.partition(":")[0]
    return f"//{user}:{MASK}@", after_slashes[len(user_info) + 1 :]


def _masked_parameter(parameter: str) -> str:
    name, equals, _ = parameter.partition("=")
    if equals and is_secret_name(name):
        return f"{name}={MASK}"
    return parameter


def is_secret_name(name: str) -> bool:
    """Whether a query parameter of this name holds a secret (`SECRET_NAME_PARTS`)."""
    decoded = unquote(name.replace("+", " ")).lower()
    return any(part in decoded for part in SECRET_NAME_PARTS)
