"""The ``release:`` section of params.yaml (and the top-level ``languages`` a release must contain), read
through ``config``: the defaults are here only; flags of ``python -m releases`` override them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import config

from .errors import ReleaseError


@dataclass(frozen=True)
class ReleaseParams:
    """``release:``. data, out and version have no default: a release names them (here or as flags)."""

    data: str | None = None  # the builder's output root, one folder per language
    # The ESCO family's root (`python -m builder defaults` writes data-esco beside data), released as <out>/esco/;
    # read only when params esco.languages lists the family, and then required.
    esco: str | None = None
    out: str | None = None  # the release folder (a DVC output)
    version: str | None = None  # X.Y.Z; a made or tagged version is refused
    # Paths whose uncommitted changes refuse a release (the params file itself always counts).
    tracked_inputs: tuple[str, ...] = ()
    # Also BEIR/MTEB-shaped copies of each language (releases/beir.py) beside its files. Off for the versions
    # published without them: a published version is only remade byte for byte.
    beir: bool = False


@dataclass(frozen=True)
class EscoFamily:
    """What a release reads of ``esco:`` (the rest of that section is the builder's, builder/params.py EscoParams):
    the languages of the ESCO family, which the release must carry."""

    languages: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReleaseConfig:
    params: dict  # the whole file as read (the manifest records its languages and release: verbatim)
    release: ReleaseParams
    pipeline: config.Pipeline
    esco: EscoFamily


def read_release_params(path: str | Path, *, required: bool = True) -> ReleaseConfig:
    """params.yaml's release settings, checked; a missing file is an error unless ``required=False`` (then
    every value takes its default and the flags must name the rest)."""
    try:
        params = config.read_params(path, required=required)
        return ReleaseConfig(params, config.section(ReleaseParams, params, "release", where=path),
                             config.pipeline(params, where=path), esco_family(params, path))
    except config.ConfigError as exc:
        raise ReleaseError(str(exc)) from None


def esco_family(params: dict, where: str | Path) -> EscoFamily:
    """``esco.languages`` (absent or null: no family); a section that is no mapping is refused as the builder
    refuses it."""
    section = params.get("esco")
    if isinstance(section, dict):
        section = {"languages": section["languages"]} if section.get("languages") is not None else {}
    return config.read_typed(EscoFamily, section if section is not None else {}, where=where, key="esco")
