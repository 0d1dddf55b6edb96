"""The builder's own error types: every message names the file/line or the service and what to do.

``scrub`` (``config.secrets``, the one scrubber of every command) removes secrets from any text before it is
shown or stored.
"""

from __future__ import annotations

from config.secrets import MASK, SECRET_ENV, public_url, scrub  # noqa: F401  (one scrubber for every command)


class BuildError(Exception):
    """A problem the user can fix (bad input, missing translator, refused service)."""


class SourceError(BuildError):
    """The English source dataset is missing, malformed or does not match its checksum."""


class TranslationError(BuildError):
    """A translator is unavailable, misconfigured, or kept failing after retries."""


class CorrectionsError(BuildError):
    """A corrections file does not follow docs/FORMAT.md."""
