"""Where tests find the English source, and what they do when it is missing.

Tests never download: they use ``$JOBTITLES_SOURCE_DIR``, the checkout's neighbour
``../shared/data/jobtitlesimilarity/dataset/en``, or the user cache that ``python -m builder source``
fills (verified against the pinned SHA-256s). Missing, a test is skipped with the command that fixes it;
under CI (``CI=true``) it fails instead, so end-to-end tests are never skipped silently there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from builder.source import DEFAULT_SOURCE_DIR, ENV_SOURCE_DIR, FILES, cached_source_complete, user_cache_dir


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def find_english() -> Path | None:
    env = os.environ.get(ENV_SOURCE_DIR)
    for folder in ([Path(env)] if env else []) + [DEFAULT_SOURCE_DIR]:
        if all((folder / name).is_file() for name in FILES):
            return folder
    cached = user_cache_dir()
    return cached if cached_source_complete(cached) else None


def english_or_skip() -> Path:
    folder = find_english()
    if folder is not None:
        return folder
    message = (f"English source not found (${ENV_SOURCE_DIR}, {DEFAULT_SOURCE_DIR}, {user_cache_dir()}); "
               "run `python -m builder source` once to download it into the user cache")
    if in_ci():
        pytest.fail(f"{message} (CI=true: a missing source fails, it is never skipped)")
    pytest.skip(message)
