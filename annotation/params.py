"""The ``annotation:`` section of params.yaml, with defaults for anything not set there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from annotation import AnnotationError


@dataclass(frozen=True)
class AnnotationParams:
    workspace: str = "gendered-job-titles"
    # Part of every dataset name: a new test-set version gets new datasets, the old ones stay readable.
    dataset_version: str = "v1"
    batch_size: int = 256
    # Submitted responses a record needs before Argilla counts it done; 2 or more lets majority vote decide.
    min_submitted: int = 1
    corrections_dir: str = "corrections"
    relevance_models: tuple[str, ...] = ("tfidf-char", "m-use", "m-e5-small-q4")
    pool_depth: int = 10
    audit_sample: int = 50
    seed: int = 0


def load_params(path: str | Path = "params.yaml") -> AnnotationParams:
    path = Path(path)
    if not path.is_file():
        return AnnotationParams()
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise AnnotationError(f"{path}: not valid YAML ({exc})") from None
    section = doc.get("annotation") or {}
    relevance = section.get("relevance") or {}
    defaults = AnnotationParams()
    try:
        params = AnnotationParams(
            workspace=str(section.get("workspace", defaults.workspace)),
            dataset_version=str(section.get("dataset_version", defaults.dataset_version)),
            batch_size=int(section.get("batch_size", defaults.batch_size)),
            min_submitted=int(section.get("min_submitted", defaults.min_submitted)),
            corrections_dir=str(section.get("corrections_dir", defaults.corrections_dir)),
            relevance_models=tuple(relevance.get("models", defaults.relevance_models)),
            pool_depth=int(relevance.get("pool_depth", defaults.pool_depth)),
            audit_sample=int(relevance.get("audit_sample", defaults.audit_sample)),
            seed=int(relevance.get("seed", defaults.seed)),
        )
    except (TypeError, ValueError) as exc:
        raise AnnotationError(f"{path}: bad value in the annotation: section ({exc})") from None
    check_params(params, str(path))
    return params


def check_params(params: AnnotationParams, where: str) -> None:
    """Counts that make no sense would push an empty pool or fail deep inside the SDK: refuse them here."""
    for name, least in (("batch_size", 1), ("min_submitted", 1), ("pool_depth", 1), ("audit_sample", 0)):
        value = getattr(params, name)
        if value < least:
            raise AnnotationError(f"{where}: annotation {name} is {value}; it must be {least} or more")
    if not params.relevance_models:
        raise AnnotationError(f"{where}: annotation relevance.models is empty; name at least one model")
