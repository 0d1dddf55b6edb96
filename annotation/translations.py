"""The translation-correction dataset: one record per English source title of a language."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

from annotation import AnnotationError
from annotation.push import RecordSpec, hash_property
from annotation.server import _rg

REQUIRED_COLUMNS = (
    "source_id", "source_text", "in_queries", "in_corpus", "sentence_masculine", "sentence_feminine",
    "output_masculine", "output_feminine", "title_masculine", "title_feminine", "check_masculine",
    "check_feminine", "check_method", "verdict", "flags",
)
# Verdicts that need no attention; anything else (or a build flag, or a failed strip) goes first.
CLEAN_VERDICTS = ("gendered", "neutral", "inflected")  # inflected: a given title and the form the layer made
# Flags that say where a form came from, not that something is doubtful (builder/reference.py, builder/german.py).
INFORMATIVE_FLAGS = frozenset({"masculine_base", "feminine_base", "inclusive_base", "loanword", "english_loan",
                               "common_head", "declared_single_form"})
FLAG_LABELS = {
    "not_a_job_title": "not a job title",
    "wrong_sense": "wrong sense",
    "untranslatable": "untranslatable",
}
# The masculine / feminine / neutral: a pair of forms, one form for both, or a title that exists in
# one gender only (the other box is then ignored). The keys are what corrections/<lang>.jsonl carries.
GENDER_MARKING_LABELS = {
    "gendered": "masculine / feminine (the two forms differ)",
    "neutral": "neutral (one form for both)",
    "masculine_only": "masculine only (no feminine form in use)",
    "feminine_only": "feminine only (no masculine form in use)",
}


def dataset_name(lang: str, version: str) -> str:
    return f"{lang}-translations-{version}"


def record_id(lang: str, source_id: str) -> str:
    return f"{lang}-translation-{source_id}"


def read_translations(data: str | Path, lang: str) -> pl.DataFrame:
    path = Path(data) / lang / "translations.parquet"
    if not path.is_file():
        raise AnnotationError(f"{path}: file missing; build the language first (python -m builder build ...)")
    df = pl.read_parquet(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise AnnotationError(f"{path}: missing column(s) {missing}; see docs/FORMAT.md (builder working file)")
    dup = df.group_by("source_id").len().filter(pl.col("len") > 1)
    if dup.height:
        raise AnnotationError(f"{path}: repeated source_id(s) {dup['source_id'].head(5).to_list()}")
    nulls = df.filter(pl.col("source_id").is_null() | pl.col("source_text").is_null())
    if nulls.height:
        raise AnnotationError(f"{path}: {nulls.height} row(s) without source_id or source_text")
    return df


def settings(min_submitted: int = 1):
    rg = _rg()
    guidelines = resources.files("annotation").joinpath("guidelines_translations.md").read_text(encoding="utf-8")
    return rg.Settings(
        guidelines=guidelines,
        distribution=rg.TaskDistribution(min_submitted=min_submitted),
        fields=[
            rg.TextField(name="english", title="English title"),
            rg.TextField(name="template_sentences", title="Template sentences → machine output"),
            rg.TextField(name="machine_masculine", title="Machine masculine title", required=False),
            rg.TextField(name="machine_feminine", title="Machine feminine title", required=False),
            rg.TextField(name="check", title="Gender check"),
        ],
        questions=[
            rg.TextQuestion(name="masculine", title="Corrected masculine title"),
            rg.TextQuestion(name="feminine", title="Corrected feminine title"),
            rg.LabelQuestion(name="gender_marking", title="Gender marking", labels=GENDER_MARKING_LABELS),
            rg.LabelQuestion(name="flag", title="Flag (optional)", labels=FLAG_LABELS, required=False),
        ],
        metadata=[
            rg.TermsMetadataProperty(name="verdict", title="check verdict"),
            rg.TermsMetadataProperty(name="needs_review", title="needs review"),
            rg.TermsMetadataProperty(name="occurs_in", title="occurs in"),
            rg.IntegerMetadataProperty(name="priority", title="priority (0 first)"),
            rg.TermsMetadataProperty(name="source_id", title="English source id", visible_for_annotators=False),
            hash_property(),
        ],
    )


def needs_review(row: dict) -> bool:
    return (
        row["verdict"] not in CLEAN_VERDICTS
        or bool(set(row["flags"] or []) - INFORMATIVE_FLAGS)
        or row["title_masculine"] is None
        or row["title_feminine"] is None
    )


def _source_text(row: dict) -> str:
    """Where the titles came from, as the annotator should read it: the dataset's own translation (reference
    route: no template, the title as its translator wrote it) or the MT route's two template sentences."""
    if str(row.get("translator") or "").startswith("reference:"):
        return f"given translation (the dataset's own): {row['output_masculine']}"
    return (f"{row['sentence_masculine']} → {row['output_masculine']}\n"
            f"{row['sentence_feminine']} → {row['output_feminine']}")


def record_specs(df: pl.DataFrame, lang: str) -> list[RecordSpec]:
    """One record per source title; the ones needing review first, then by source id."""
    rows = sorted(df.iter_rows(named=True), key=lambda r: (not needs_review(r), r["source_id"]))
    specs = []
    for row in rows:
        review = needs_review(row)
        occurs = "both" if row["in_queries"] and row["in_corpus"] else ("query" if row["in_queries"] else "corpus")
        check = (
            f"verdict: {row['verdict']} · masculine output read as {row['check_masculine']} · "
            f"feminine output read as {row['check_feminine']} · decided by {row['check_method']}"
        )
        if row["flags"]:
            check += f" · flags: {', '.join(row['flags'])}"
        specs.append(RecordSpec(
            id=record_id(lang, row["source_id"]),
            fields={
                "english": row["source_text"],
                "template_sentences": _source_text(row),
                "machine_masculine": row["title_masculine"],
                "machine_feminine": row["title_feminine"],
                "check": check,
            },
            metadata={
                "source_id": row["source_id"],
                "verdict": row["verdict"],
                "needs_review": "yes" if review else "no",
                "occurs_in": occurs,
                "priority": 0 if review else 1,
            },
            suggestions={
                "masculine": row["title_masculine"],
                "feminine": row["title_feminine"],
                "gender_marking": "neutral" if row["verdict"] == "neutral" else "gendered",
            },
        ))
    return specs
