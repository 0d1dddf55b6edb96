"""One scrubber for secrets, used by every command (builder, annotation, eval, releases) on what it shows or
stores. Shared ground like the rest of config/: imports no project package, so every package may use it.

``scrub`` masks the values of the key variables, the password of a URL given in the environment
(``ARGILLA_API_URL=http://alice:pw@host``), ``api_key=``/``auth_key=``-style query parameters
(deep-translator puts keys in the query string, and requests' exceptions quote the URL) and the
``user:password@`` part of any URL.
"""

from __future__ import annotations

import os
import re

# Environment variables whose values are secrets (the translators', Argilla's and the Hub's keys).
SECRET_ENV = ("LIBRE_API_KEY", "DEEPL_API_KEY", "ARGILLA_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MASK = "***"
_QUERY_SECRET = re.compile(
    r"(?i)\b((?:api[_-]?key|auth[_-]?key|access[_-]?token|token|key|password|passwd|secret|signature)=)[^&\s'\"<>)]+")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]+@")
# Environment variables holding URLs that may carry a user:password@ part; the password is a secret too.
URL_ENV = ("ARGILLA_API_URL", "LIBRE_URL", "HF_ENDPOINT")


def _url_passwords() -> list[str]:
    from urllib.parse import urlsplit

    out = []
    for name in URL_ENV:
        try:
            password = urlsplit(os.environ.get(name) or "").password
        except ValueError:  # a malformed URL (a bad port): its userinfo is masked by the pattern below
            password = None
        if password:
            out.append(password)
    return out


def scrub(text: object, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every known secret masked (see the module docstring)."""
    out = str(text)
    values = [os.environ.get(name) for name in SECRET_ENV] + _url_passwords() + list(secrets)
    # Longest first, so a key that contains another key is masked whole.
    for value in sorted({v for v in values if v and len(v) >= 4}, key=len, reverse=True):
        out = out.replace(value, MASK)
    out = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, out)
    return _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", out)


def public_url(url: str) -> str:
    """A URL fit for provenance and cache keys: no ``user:password@``, no query string or fragment."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
