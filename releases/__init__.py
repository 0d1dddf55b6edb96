"""releases: package a versioned benchmark release (Parquet, trec qrels, dataset card, checksummed
manifest) from what the builder wrote, and verify a copy of one. Shared with DVC; see docs/releases.md."""

from .errors import ReleaseError

__all__ = ["ReleaseError", "Verification", "make_release", "release_tag", "verify_release"]


def __getattr__(name: str):
    # releases.make and .manifest load polars; `python -m releases` runs this file first, and --help needs neither.
    if name in ("make_release", "release_tag"):
        from . import make

        return getattr(make, name)
    if name in ("Verification", "verify_release"):
        from . import manifest

        return getattr(manifest, name)
    raise AttributeError(f"module 'releases' has no attribute {name!r}")
