"""Pull submitted responses, decide each record by majority, measure agreement.

A record is decided when every question has a single most frequent answer among its annotators'
submitted responses (each annotator's latest); otherwise it is a tie and goes to the review list.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone

from annotation.agreement import cohen_kappa, krippendorff_alpha_nominal
from annotation.corrections import KIND_RELEVANCE, KIND_TRANSLATION
from annotation.relevance import RELEVANT_LABELS, TRANSLATION_WRONG_LABELS
from annotation.server import Server, server_errors
from annotation.translations import NO_TITLE

PAGE = 1000  # the largest page argilla-server lists


@dataclass
class Vote:
    annotator: str
    values: dict[str, object]
    submitted_at: str  # ISO 8601, UTC, "Z"


@dataclass
class PulledRecord:
    record_id: str
    fields: dict[str, str]
    metadata: dict[str, object]
    votes: list[Vote] = field(default_factory=list)


@dataclass
class Fetched:
    """A dataset's records with submitted responses, and the responses a pull does not take (drafts, discarded)."""

    records: list[PulledRecord]
    drafts: int = 0
    discarded: int = 0


def _iso_utc(stamp: str) -> str:
    when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if when.tzinfo is None:  # argilla-server stores naive UTC
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fetch_submitted(server: Server, dataset) -> Fetched:
    """Every record with at least one submitted response, through the REST API (it carries the times), and the
    count of draft and discarded responses (not pulled: only a submitted answer is one)."""
    http = server.client.api.http_client
    with server_errors(server.url):
        users = {str(u.id): u.username for u in server.client.users}
        pulled = []
        drafts = discarded = 0
        offset = 0
        while True:
            resp = http.get(f"/api/v1/datasets/{dataset.id}/records",
                            params={"include": "responses", "offset": offset, "limit": PAGE})
            resp.raise_for_status()
            items = resp.json()["items"]
            for item in items:
                statuses = [r["status"] for r in item.get("responses") or []]
                drafts += statuses.count("draft")
                discarded += statuses.count("discarded")
                votes = [
                    Vote(
                        annotator=users.get(str(r["user_id"]), str(r["user_id"])),
                        values={q: v.get("value") for q, v in (r.get("values") or {}).items()},
                        submitted_at=_iso_utc(r["updated_at"]),
                    )
                    for r in item.get("responses") or []
                    if r["status"] == "submitted"
                ]
                if votes:
                    pulled.append(PulledRecord(item["external_id"], item["fields"], item.get("metadata") or {}, votes))
            if len(items) < PAGE:
                return Fetched(pulled, drafts, discarded)
            offset += PAGE


def majority(values: list[object]) -> tuple[object, bool]:
    """The most frequent value and whether it is unique (False: a tie between the top values)."""
    ranked = Counter(values).most_common()
    tie = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
    return ranked[0][0], not tie


def _norm_title(value: object) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split()).lower()
    return text or None


def translation_answers(vote: Vote) -> dict[str, object]:
    """The answers majority decides (the free-text reason is carried along, not voted on: ``reasons``)."""
    return {
        "masculine": _norm_title(vote.values.get("masculine")),
        "feminine": _norm_title(vote.values.get("feminine")),
        "gender_marking": vote.values.get("gender_marking"),
        "flag": vote.values.get("flag"),
    }


def reasons(record: PulledRecord, decided: dict, answers) -> str | None:
    """The reasons the annotators who gave the decided answers wrote, joined; None when nobody wrote one."""
    said = [" ".join(str(v.values["reason"]).split()) for v in record.votes
            if answers(v) == decided and v.values.get("reason") and str(v.values["reason"]).strip()]
    return "; ".join(dict.fromkeys(said)) or None


def relevance_answers(vote: Vote) -> dict[str, object]:
    """Relevant or not, whether or not the annotator also said a translation is wrong."""
    return {"relevant": vote.values.get("relevant") in RELEVANT_LABELS}


def translation_wrong_reports(records: list[PulledRecord]) -> list[dict]:
    """Relevance records on which someone answered "a translation is wrong": a pointer to the query's and the
    document's records in the translations dataset, where the titles themselves are corrected."""
    out = []
    for r in records:
        who = sorted({v.annotator for v in r.votes if v.values.get("relevant") in TRANSLATION_WRONG_LABELS})
        if who:
            out.append({"record_id": r.record_id, "query_source_id": r.metadata.get("query_source_id"),
                        "doc_source_id": r.metadata.get("doc_source_id"), "annotators": who})
    return out


def decide(record: PulledRecord, answers, adjudicators: tuple[str, ...] = ()) -> tuple[dict[str, object] | None, list[str]]:
    """Majority answer per question, or None and the tied questions. ``adjudicators``: on a tie, the answers of
    the first of them who answered the record decide it (the review's third reading, then its strict re-read of
    a kept title, docs/review.md)."""
    decided, tied = {}, []
    per_vote = [answers(v) for v in record.votes]
    settling = [answers(v) for name in adjudicators for v in record.votes if v.annotator == name][:1]
    for question in per_vote[0]:
        value, unique = majority([a[question] for a in per_vote])
        decided[question] = value
        if not unique:
            tied.append(question)
    if tied and settling:
        return dict(settling[0]), []
    return (None, tied) if tied else (decided, [])


def _annotators(record: PulledRecord) -> list[str]:
    return sorted({v.annotator for v in record.votes})


def _submitted_at(record: PulledRecord) -> str:
    return max(v.submitted_at for v in record.votes)


def translation_line(record: PulledRecord, lang: str, decided: dict, review: str | None = None) -> dict:
    """The correction line of a decided record. A title equal to the proposal (the build's, never an earlier
    correction: metadata ``proposed_<gender>``) is no correction, and an empty box keeps it: null keeps the build's
    text. An answer without a gender marking takes the one pre-selected (metadata ``suggested_marking``); a record
    that drops its source needs none. ``review``: the maintainers' review round the answers belong to
    (docs/review.md). Datasets of the first layout (v1) held the proposed title in the field machine_<gender>."""
    titles = {}
    # a flag and no title drops the source: nothing to certify, whoever answered
    emptied = decided["flag"] is not None and decided["masculine"] is None and decided["feminine"] is None
    for gender in ("masculine", "feminine"):
        if "template_sentences" in record.fields:
            proposed = _norm_title(record.fields.get(f"machine_{gender}"))
        else:
            proposed = _norm_title(record.metadata.get(f"proposed_{gender}"))
        # With a flag, the titles the person left are theirs: a flag on a title kept as proposed (null) would drop
        # the source (builder/corrections.py FLAG_MEANINGS), and they said the title is the right one.
        # The review certifies the text it read: its lines carry the titles, never null (docs/review.md).
        keep = decided[gender] == proposed and decided["flag"] is None and review is None
        titles[gender] = (None if keep or emptied else decided[gender] if decided[gender] is not None or review is None
                          else proposed)
    marking = decided["gender_marking"]
    drops = decided["flag"] is not None and titles["masculine"] is None and titles["feminine"] is None
    if marking is None and not drops:
        marking = record.metadata.get("suggested_marking")
    if marking == NO_TITLE:  # the answer that confirms a drop: null in the file (refused there without a flag)
        marking = None
    line = {
        "kind": KIND_TRANSLATION, "lang": lang, "source_id": record.metadata["source_id"],
        "record_id": record.record_id, "masculine": titles["masculine"], "feminine": titles["feminine"],
        "gender_marking": marking, "flag": decided["flag"],
        "annotators": _annotators(record), "submitted_at": _submitted_at(record),
    }
    if review is not None:
        line["review"] = review
    why = reasons(record, decided, translation_answers)
    if why is not None:
        line["reason"] = why
    return line


def relevance_line(record: PulledRecord, lang: str, decided: dict) -> dict:
    return {
        "kind": KIND_RELEVANCE, "lang": lang,
        "query_source_id": record.metadata["query_source_id"], "doc_source_id": record.metadata["doc_source_id"],
        "record_id": record.record_id, "relevant": decided["relevant"],
        "annotators": _annotators(record), "submitted_at": _submitted_at(record),
    }


@dataclass
class Agreement:
    question: str
    units: int  # records with two or more annotators
    alpha: float | None  # Krippendorff's alpha, nominal
    kappa: float | None  # Cohen's kappa, when exactly two annotators labelled the shared records


def agreement(records: list[PulledRecord], answers) -> list[Agreement]:
    if not records:
        return []
    questions = list(answers(records[0].votes[0]))
    out = []
    for question in questions:
        units = {
            r.record_id: {v.annotator: str(answers(v)[question]) for v in r.votes}
            for r in records if len({v.annotator for v in r.votes}) >= 2
        }
        if not units:
            out.append(Agreement(question, 0, None, None))
            continue
        alpha = krippendorff_alpha_nominal(units)
        annotators = sorted({a for labels in units.values() for a in labels})
        kappa = None
        if len(annotators) == 2:
            a, b = annotators
            kappa = cohen_kappa([u[a] for u in units.values()], [u[b] for u in units.values()])
        out.append(Agreement(question, len(units), alpha, kappa))
    return out
