"""The error type the releases CLI turns into ``error: ...`` and exit status 2: its own module, so the command line
and releases.params need none of the modules that read a release (they load polars)."""


class ReleaseError(ValueError):
    """A release cannot be made, read or verified; the message says what and what to do."""
