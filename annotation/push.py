"""Idempotent pushes: stable record ids, and only new or changed records are sent.

Every record carries a hidden ``content_hash`` metadata value (a hash of its fields, metadata and
suggestions). A push first reads the ids and hashes already on the server, then upserts the records that
are missing or differ. Pushing twice sends nothing the second time; a push that failed half-way sends only
what did not arrive (the SDK commits batch by batch).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

from annotation import AnnotationError
from annotation.server import Server, _rg, ensure_workspace, find_dataset, sdk_bars_on_a_terminal_only, server_errors

HASH_KEY = "content_hash"


@dataclass(frozen=True)
class Suggested:
    """A pre-filled answer: the value, how sure its maker is (0..1) and who made it, shown in the UI."""

    value: object
    score: float | None = None
    agent: str | None = None


@dataclass(frozen=True)
class RecordSpec:
    """What one record holds, independent of the SDK: fields, metadata and suggestions (question → Suggested)."""

    id: str
    fields: dict[str, str | None]
    metadata: dict[str, object]
    suggestions: dict[str, Suggested]
    # vector name → the text its vector embeds (annotation.vectors); None where the record has no such text
    vector_texts: dict[str, str | None] = field(default_factory=dict)
    vectors: dict[str, list[float]] = field(default_factory=dict)
    # What made ``vectors`` (model name and revision), hashed in their place: a model's floats may differ in the
    # last bits from one BLAS kernel to another, which must not resend every record.
    vector_source: str | None = None

    def content_hash(self) -> str:
        suggestions = {q: dataclasses.astuple(s) for q, s in self.suggestions.items()}
        content = [self.fields, self.metadata, suggestions]
        if self.vector_source is not None:  # without vectors, the hash is what it was before they existed
            content.append([self.vector_source, sorted(self.vectors)])
        payload = json.dumps(content, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class PushReport:
    dataset: str
    new: int
    changed: int
    unchanged: int

    def __str__(self) -> str:
        return f"{self.dataset}: {self.new} new, {self.changed} changed, {self.unchanged} unchanged"


def hash_property():
    return _rg().TermsMetadataProperty(name=HASH_KEY, title="content hash", visible_for_annotators=False)


def get_or_create_dataset(server: Server, workspace_name: str, name: str, settings):
    rg = _rg()
    workspace = ensure_workspace(server, workspace_name)
    with server_errors(server.url):
        dataset = find_dataset(server, name, workspace)
        if dataset is not None and dataset._model.status != "ready":
            # A push stopped while the dataset was being created: it was never usable, start it again.
            dataset.delete()
            dataset = None
        if dataset is None:
            dataset = rg.Dataset(name=name, workspace=workspace, settings=settings, client=server.client).create()
        else:
            check_layout(dataset, settings)
    return dataset


def _layout(settings) -> dict[str, list[str]]:
    return {"fields": sorted(f.name for f in settings.fields), "questions": sorted(q.name for q in settings.questions),
            "metadata": sorted(m.name for m in settings.metadata)}


def check_layout(dataset, settings) -> None:
    """Refuse to push into a dataset created with other fields, questions or metadata: Argilla cannot change
    them on a dataset with records, and the records would be refused half-way."""
    have, want = _layout(dataset.settings), _layout(settings)
    if have != want:
        diff = "; ".join(f"{k}: has {sorted(set(have[k]) - set(want[k]))}, lacks {sorted(set(want[k]) - set(have[k]))}"
                         for k in want if have[k] != want[k])
        raise AnnotationError(f"dataset {dataset.name} was created with another record layout ({diff}); pull its "
                              f"answers, then push to a new dataset: raise annotation.dataset_version in params.yaml "
                              f"(or pass --version)")


def existing_hashes(server: Server, dataset) -> dict[str, str | None]:
    """Record id → content hash for every record already in the dataset."""
    with server_errors(server.url):
        return {
            str(record.id): record.metadata.get(HASH_KEY)
            for record in dataset.records(batch_size=1000, with_suggestions=False, with_responses=False)
        }


def to_sdk_record(spec: RecordSpec):
    rg = _rg()
    return rg.Record(
        id=spec.id,
        fields={k: v for k, v in spec.fields.items() if v is not None},
        metadata={**spec.metadata, HASH_KEY: spec.content_hash()},
        suggestions=[rg.Suggestion(question_name=q, value=s.value, score=s.score, agent=s.agent)
                     for q, s in spec.suggestions.items() if s.value is not None],
        vectors=dict(spec.vectors),
    )


def sync_records(server: Server, dataset, specs: list[RecordSpec], batch_size: int = 256) -> PushReport:
    """Upsert the records of ``specs`` that are new or changed, in the given order."""
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise AnnotationError(f"record ids must be unique; repeated: {dup}")
    on_server = existing_hashes(server, dataset)
    to_send = [s for s in specs if on_server.get(s.id) != s.content_hash()]
    new = sum(1 for s in to_send if s.id not in on_server)
    if to_send:
        with server_errors(server.url), sdk_bars_on_a_terminal_only():
            dataset.records.log([to_sdk_record(s) for s in to_send], batch_size=batch_size)
    return PushReport(dataset.name, new=new, changed=len(to_send) - new, unchanged=len(specs) - len(to_send))
