"""Scores embedding models on gendered job-title test sets: symmetry (AO, RBO), parity and MAP.

Kept light: importing ``eval`` loads nothing heavy; submodules load what they need.
"""


def __getattr__(name: str) -> str:
    # ``__version__`` on first use, not at import: importlib.metadata costs ~40 ms, a third of `--help`'s start-up.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:  # the toolkit version every results file names: the installed distribution's, from pyproject.toml
        value = version("gendered-job-titles")
    except PackageNotFoundError:  # running from a source tree that was never installed
        value = "unknown"
    globals()["__version__"] = value
    return value
