"""releases: package a versioned benchmark release (Parquet, trec qrels, dataset card, checksummed
manifest) from what the builder wrote, and verify a copy of one. Shared with DVC; see docs/releases.md."""

from .make import make_release, release_tag
from .manifest import ReleaseError, Verification, verify_release

__all__ = ["ReleaseError", "Verification", "make_release", "release_tag", "verify_release"]
