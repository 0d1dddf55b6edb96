"""The ``annotation:`` section of params.yaml, read through ``config``: the defaults are here only."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import config
from annotation import AnnotationError


@dataclass(frozen=True)
class RelevanceParams:
    """``annotation.relevance:``: which candidate pairs a relevance dataset gets."""

    models: tuple[str, ...] = ("tfidf-char", "m-use", "m-e5-small-q4")  # rankings pooled (union of each top k)
    pool_depth: int = 10
    audit_sample: int = 50  # carried-over labels sent for an independent check
    seed: int = 0
    # Annotators per pair: one keystroke a record, so two is cheap and gives the agreement figures.
    min_submitted: int = 2

    def __post_init__(self):
        # Counts that make no sense would push an empty pool or fail deep inside the SDK: refuse them here.
        for name, least in (("pool_depth", 1), ("audit_sample", 0), ("min_submitted", 1)):
            if getattr(self, name) < least:
                raise ValueError(f"annotation.relevance.{name} is {getattr(self, name)}; it must be {least} or more")
        if not self.models:
            raise ValueError("annotation.relevance.models is empty; name at least one model")


@dataclass(frozen=True)
class VectorParams:
    """``annotation.vectors:``: embed the records' titles with an eval model and push the vectors, for Argilla's
    "find similar" (it needs Elasticsearch or OpenSearch with k-NN behind argilla-server; docs/annotation.md)."""

    model: str  # an eval model name (python -m eval models), e.g. m-use

    def __post_init__(self):
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"annotation.vectors.model is {self.model!r}; name an eval model, e.g. m-use")


@dataclass(frozen=True)
class AnnotationParams:
    workspace: str = "gendered-job-titles"
    # Part of every dataset name: a new test-set version gets new datasets, the old ones stay readable.
    dataset_version: str = "v1"
    batch_size: int = 256
    # Submitted responses a translation record needs before Argilla counts it done; 2 or more lets majority
    # vote decide (relevance has its own, annotation.relevance.min_submitted).
    min_submitted: int = 1
    corrections_dir: str = "corrections"
    relevance: RelevanceParams = field(default_factory=RelevanceParams)
    # Off unless set: no vector field, no vectors, the records' content hashes as without the option.
    vectors: VectorParams | None = None

    def __post_init__(self):
        for name in ("batch_size", "min_submitted"):
            if getattr(self, name) < 1:
                raise ValueError(f"annotation.{name} is {getattr(self, name)}; it must be 1 or more")


def load_params(path: str | Path = "params.yaml") -> AnnotationParams:
    """The ``annotation:`` section (a missing file or section: the defaults); errors name the file and key."""
    try:
        return config.section(AnnotationParams, config.read_params(path, required=False), "annotation", where=path)
    except config.ConfigError as exc:
        raise AnnotationError(str(exc)) from None


def with_overrides(params: AnnotationParams, where: str | Path, *, pool_depth: int | None = None,
                   **top: str | None) -> AnnotationParams:
    """``params`` with the command line's values (those not None) in place of the file's, checked again."""
    try:
        if pool_depth is not None:
            params = dataclasses.replace(params, relevance=dataclasses.replace(params.relevance, pool_depth=pool_depth))
        return dataclasses.replace(params, **{k: v for k, v in top.items() if v is not None})
    except ValueError as exc:
        raise AnnotationError(f"{where}: {exc}") from None
