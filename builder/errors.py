"""The builder's own error types: every message names the file/line or the service and what to do.

``scrub`` removes secrets from any text before it is shown or stored: the values of the key variables,
``api_key=``/``auth_key=``-style query parameters (deep-translator puts keys in the query string, and
requests' exceptions quote the URL) and the ``user:password@`` part of URLs.
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


class BuildError(Exception):
    """A problem the user can fix (bad input, missing translator, refused service)."""


class SourceError(BuildError):
    """The English source dataset is missing, malformed or does not match its checksum."""


class TranslationError(BuildError):
    """A translator is unavailable, misconfigured, or kept failing after retries."""


class CorrectionsError(BuildError):
    """A corrections file does not follow docs/FORMAT.md."""


def scrub(text: object, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every known secret masked (see the module docstring)."""
    out = str(text)
    values = [os.environ.get(name) for name in SECRET_ENV] + list(secrets)
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
