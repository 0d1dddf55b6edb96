"""Scores embedding models on gendered job-title test sets: symmetry (AO, RBO), parity and MAP.

Kept light: importing ``eval`` loads nothing heavy; submodules load what they need.
"""

from importlib.metadata import PackageNotFoundError, version

try:  # the toolkit version every results file names: the installed distribution's, from pyproject.toml
    __version__ = version("gendered-job-titles")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "unknown"
