"""The translation-correction dataset: one record per English source title of a language."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import polars as pl

from annotation import AnnotationError
from annotation.doubt import SEVERITIES, doubt, route_of
from annotation.push import RecordSpec, Suggested, hash_property
from annotation.server import _rg
from builder.corrections import FLAG_MEANINGS
from builder.verdict import Verdict

# The columns of translations.parquet annotation reads, with the types the builder writes them in (its raw columns:
# builder.translate.RAW_SCHEMA, those postprocess adds: builder.postprocess.ROW_SCHEMA; tests/annotation/
# test_records.py keeps the two equal: annotation borrows no builder module beyond its format's).
REQUIRED_COLUMNS: dict[str, pl.DataType] = {
    **{name: pl.String() for name in ("source_id", "source_text", "sentence_masculine", "sentence_feminine",
                                      "output_masculine", "output_feminine", "mt_masculine", "mt_feminine",
                                      "title_masculine", "title_feminine", "check_masculine", "check_feminine",
                                      "check_method", "verdict", "reason", "translator")},
    "in_queries": pl.Boolean(), "in_corpus": pl.Boolean(), "flags": pl.List(pl.String),
}
# The given-translation route's columns (docs/FORMAT.md); builds before them are all MT route.
ROUTE_COLUMNS = ("route", "alignment_score", "alignment_margin")
FLAG_LABELS = {
    "not_a_job_title": "not a job title",
    "wrong_sense": "wrong sense",
    "untranslatable": "untranslatable",
}
# A pair of forms, one form for both, or a title that exists in one gender only (the other box is then
# ignored). The keys are what corrections/<lang>.jsonl carries, but for NO_TITLE (null there).
NO_TITLE = "no_title"
GENDER_MARKING_LABELS = {
    "gendered": "masculine / feminine (the two forms differ)",
    "neutral": "neutral (one form for both)",
    "masculine_only": "masculine only (no feminine form in use)",
    "feminine_only": "feminine only (no masculine form in use)",
    # not a marking of the corrections format: the answer that confirms a drop (a flag, no title), written as null
    NO_TITLE: "no title (the record is dropped: choose a flag)",
}
# The build's flags in the annotator's words (docs/FORMAT.md, the items' flags).
FLAG_WORDS = {
    "untranslated": "English words were left untranslated",
    "unknown_word": "a word neither the lexicon nor the word list knows",
    "unknown_head": "the main noun is unknown to the lexicon and the word list",
    "unknown_modifier": "a word after the main noun is unknown to the lexicon and the word list (a loanword or a misspelling)",
    "head_not_a_noun": "the first word is not a noun (an adjective, article or preposition first: English word order kept)",
    "verb_form": "a verb form stands where a noun belongs (a gerund, a conjugated verb, an infinitive after \"de\")",
    "agreement_made": "an adjective was made to agree with the main noun (the given title's did not)",
    "not_a_person_noun": "the title names a thing, not a person",
    "masculine:echo": "the masculine output is the English title echoed back",
    "feminine:echo": "the feminine output is the English title echoed back",
    "template_not_stripped": "the template sentence could not be removed from the output",
    "masculine_is_feminine": "the masculine template gave a feminine noun",
    "no_feminine_form": "no feminine form of the main noun is known",
    "no_masculine_form": "no masculine form of the main noun is known",
    "reinflected_feminine": "the gender layer made the feminine from the masculine (the translator's was not its inflection)",
    "reinflected_masculine": "the gender layer made the masculine from the feminine (the translator's was not its inflection)",
    "from_feminine_output": "the masculine was read off the feminine output",
    "feminine_output_read": "the feminine output was read for the gender",
    "different_words": "the two forms use different words",
    "unaligned": "no confident alignment to the given translation",
    "masculine_base": "the given title is the masculine form",
    "feminine_base": "the given title is the feminine form",
    "inclusive_base": "the given title is an inclusive form",
    "loanword": "a loanword (the same in both genders)",
    "english_loan": "an English loanword",
    "common_head": "a common-gender main noun",
    "declared_single_form": "the language pack declares a single form",
}
# The vector fields of annotation.vectors (name → title in the UI's "find similar"): one title embedded each.
VECTOR_TITLES = {
    "english_vector": "English title",
    "proposed_vector": "Proposed title (masculine, or the feminine where there is none)",
}
# check_method parts (docs/FORMAT.md) -> the agent that made or confirmed a form, as the annotator reads it
AGENTS = {"lexicon": "lexicon", "rule": "ending rule", "hunspell": "word list", "spacy": "parser", "human": "person"}


def dataset_name(lang: str, version: str) -> str:
    return f"{lang}-translations-{version}"


def record_id(lang: str, source_id: str) -> str:
    return f"{lang}-translation-{source_id}"


def read_parquet(path: Path) -> pl.DataFrame:
    """A builder working file; one that is not readable Parquet (damaged, truncated) is an AnnotationError."""
    try:
        return pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for unreadable files
        raise AnnotationError(f"{path}: not a readable Parquet file ({type(exc).__name__}); rebuild the language "
                              "(python -m builder build ...)") from None


def _holds_no_value_of_another_type(found: pl.DataType, expected: pl.DataType) -> bool:
    """A column without values (Null, or lists of Null: what polars writes for all-null or all-empty columns when no
    schema is given) holds nothing of a wrong type."""
    if found == expected or found == pl.Null():
        return True
    return isinstance(found, pl.List) and isinstance(expected, pl.List) and found.inner == pl.Null()


def _wrong_types(df: pl.DataFrame) -> list[tuple[str, pl.DataType, pl.DataType]]:
    """(column, its type, the type the builder writes) for each required column of another type."""
    return [(name, df.schema[name], dtype) for name, dtype in REQUIRED_COLUMNS.items()
            if not _holds_no_value_of_another_type(df.schema[name], dtype)]


def read_translations(data: str | Path, lang: str) -> pl.DataFrame:
    """translations.parquet, with the route and alignment columns of raw_translations.parquet beside it when
    the working file lacks them (builds that wrote them only there)."""
    path = Path(data) / lang / "translations.parquet"
    if not path.is_file():
        raise AnnotationError(f"{path}: file missing; build the language first (python -m builder build ...)")
    df = read_parquet(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise AnnotationError(f"{path}: missing column(s) {missing}; see docs/FORMAT.md (builder working file)")
    wrong = _wrong_types(df)
    if wrong:  # a string where the flags' list belongs was read letter by letter as flags; a number failed later
        (name, found, expected), more = wrong[0], len(wrong) - 1
        raise AnnotationError(f"{path}: column {name!r} holds {found} where the builder writes {expected}"
                              f"{f' (and {more} more column(s))' if more else ''}; rebuild the language "
                              "(python -m builder build ...)")
    dup = df.group_by("source_id").len().filter(pl.col("len") > 1)
    if dup.height:
        raise AnnotationError(f"{path}: repeated source_id(s) {dup['source_id'].head(5).to_list()}")
    nulls = df.filter(pl.col("source_id").is_null() | pl.col("source_text").is_null())
    if nulls.height:
        raise AnnotationError(f"{path}: {nulls.height} row(s) without source_id or source_text")
    raw_path = path.with_name("raw_translations.parquet")
    if "route" not in df.columns and raw_path.is_file():
        raw = read_parquet(raw_path)
        if "route" in raw.columns:
            lacking = [c for c in ROUTE_COLUMNS if c not in raw.columns]
            if lacking:
                raise AnnotationError(f"{raw_path}: has a route column but not {lacking}; rebuild the language")
            df = df.join(raw.select("source_id", *ROUTE_COLUMNS), on="source_id", how="left")
    alignment = path.with_name("alignment.parquet")
    if alignment.is_file():  # the alignment's best candidate, shown for an unaligned record
        cand = read_parquet(alignment).select("source_id", pl.col("reference_text").alias("candidate_text"))
        df = df.join(cand.unique("source_id", keep="first"), on="source_id", how="left")
    else:
        df = df.with_columns(candidate_text=pl.lit(None, dtype=pl.String))
    return df


def flag_help() -> str:
    """The flags' meanings as the question help shows them (builder/corrections.py FLAG_MEANINGS, the one definition)."""
    return " ".join(f"{FLAG_LABELS[k].capitalize()}: {v}." for k, v in FLAG_MEANINGS.items())


def guidelines_text() -> str:
    """The guidelines, with the flags' meanings from their one definition."""
    text = resources.files(__package__).joinpath("guidelines_translations.md").read_text(encoding="utf-8")
    flags = "\n".join(f"   - *{FLAG_LABELS[k]}*: {v}." for k, v in FLAG_MEANINGS.items())
    return text.replace("{flag_meanings}", flags)


def settings(min_submitted: int = 1):
    rg = _rg()
    guidelines = guidelines_text()
    return rg.Settings(
        guidelines=guidelines,
        distribution=rg.TaskDistribution(min_submitted=min_submitted),
        fields=[
            rg.TextField(name="english", title="English title"),
            rg.TextField(name="source", title="Where the titles come from"),
            rg.TextField(name="titles", title="Titles: proposed (what the build uses) and the translation's own"),
            rg.TextField(name="check", title="What the automatic check found"),
        ],
        questions=[
            rg.TextQuestion(name="masculine", title="Corrected masculine title", required=False,
                            description="Pre-filled with the proposed title. Fix it, or leave it; an empty box "
                                        "keeps the proposed title. Title only, no article."),
            rg.TextQuestion(name="feminine", title="Corrected feminine title", required=False,
                            description="Pre-filled with the proposed title. Fix it, or leave it; an empty box "
                                        "keeps the proposed title. Ignored when the title is masculine only."),
            rg.LabelQuestion(name="gender_marking", title="Gender marking", labels=GENDER_MARKING_LABELS,
                             description="Pre-selected from the automatic check. Your answer overrides it. To drop "
                                         "the record, choose 'no title' and a flag."),
            rg.LabelQuestion(name="flag", title="Flag (optional)", labels=FLAG_LABELS, required=False,
                             description=flag_help()),
            rg.TextQuestion(name="reason", title="Why (optional)", required=False,
                            description="One line: why you changed or dropped the title."),
        ],
        metadata=[
            rg.TermsMetadataProperty(name="severity", title="severity (serious first)", options=list(SEVERITIES)),
            # Argilla's UI sorts ascending first: the least confident record then comes first.
            rg.FloatMetadataProperty(name="confidence", title="confidence (sort ascending: worst first)", min=0.0,
                                     max=1.0),
            rg.TermsMetadataProperty(name="flags", title="build flags"),
            rg.TermsMetadataProperty(name="verdict", title="check verdict"),
            rg.TermsMetadataProperty(name="needs_review", title="needs review"),
            rg.TermsMetadataProperty(name="route", title="route (mt / reference)"),
            rg.TermsMetadataProperty(name="occurs_in", title="occurs in"),
            rg.TermsMetadataProperty(name="english_head", title="English head word"),
            rg.TermsMetadataProperty(name="english_words", title="English words"),
            rg.TermsMetadataProperty(name="source_id", title="English source id", visible_for_annotators=False),
            # What pull compares an answer with: the same text is no correction.
            rg.TermsMetadataProperty(name="proposed_masculine", title="proposed masculine", visible_for_annotators=False),
            rg.TermsMetadataProperty(name="proposed_feminine", title="proposed feminine", visible_for_annotators=False),
            # What pull takes for an answer without a gender marking: the one pre-selected.
            rg.TermsMetadataProperty(name="suggested_marking", title="suggested marking", visible_for_annotators=False),
            hash_property(),
        ],
    )


def suggested_marking(row: dict) -> str | None:
    """The gender marking the verdict and the proposed titles say; None when there is no title at all."""
    m, f = row["title_masculine"], row["title_feminine"]
    if row["verdict"] in (Verdict.DROPPED_BY_ANNOTATOR, Verdict.NOT_A_PERSON):
        return NO_TITLE  # the build (or a person) found no title to keep: confirming it is one click
    if row["verdict"] in (Verdict.NEUTRAL, Verdict.MASCULINE_ONLY, Verdict.FEMININE_ONLY):
        return row["verdict"]  # the marking of the same name
    if m is None and f is None:
        return None
    if f is None:
        return "masculine_only"
    if m is None:
        return "feminine_only"
    return "neutral" if m == f else "gendered"


def _source_text(row: dict) -> str:
    """Where the titles came from: the dataset's own translation, or the MT route's two template sentences."""
    if route_of(row) == "reference":
        return f"The dataset's own translation (given title): {row['output_masculine']}"
    if route_of(row) == "none":
        candidate = row.get("candidate_text")
        return ("No confident alignment to the dataset's own translation and no machine translation for this "
                "language. " + (f"The alignment's best candidate, unsure (it may name another occupation): {candidate}"
                                if candidate else "The alignment found no candidate.") + " Write the titles.")
    return (f"Machine translation ({row['translator']}) of two template sentences:\n"
            f"{row['sentence_masculine']} → {row['output_masculine']}\n"
            f"{row['sentence_feminine']} → {row['output_feminine']}")


def _none(title: str | None) -> str:
    return title if title is not None else "(none)"


def _titles(row: dict) -> str:
    proposed = (f"Proposed: {_none(row['proposal_masculine'])} (masculine) · {_none(row['proposal_feminine'])} "
                "(feminine)")
    who = _corrector(row)
    if who and _written(row):
        proposed += (f"\nCorrected by {who}: {_none(row['title_masculine'])} (masculine) · "
                     f"{_none(row['title_feminine'])} (feminine)")
    if route_of(row) == "none":
        return proposed
    if route_of(row) == "reference":
        return f"{proposed}\nThe translation's own: {row['mt_masculine']} (the given title)"
    mt = [row[f"mt_{g}"] if row[f"mt_{g}"] is not None else "(template not removed)" for g in ("masculine", "feminine")]
    return f"{proposed}\nThe translation's own: {mt[0]} (masculine) · {mt[1]} (feminine)"


def _corrector(row: dict) -> str | None:
    """Who corrected the source in an earlier round: the maintainers' review round, or the persons; None: nobody."""
    if row.get("status") == "reviewed":
        return f"the maintainers' review {row.get('review') or ''}".strip()
    if row.get("status") == "corrected":
        return "person " + ",".join(row.get("annotators") or []) if row.get("annotators") else "a person"
    return None


def _written(row: dict) -> bool:
    """The corrected titles are not the build's proposal: somebody wrote them."""
    return any(row[f"title_{g}"] != row[f"proposal_{g}"] for g in ("masculine", "feminine"))


def _form_agent(row: dict, gender: str) -> str:
    """Who made the form of ``gender`` the record suggests: the person or review who wrote it, the translation
    itself when it is the translation's own title, else the gender layer's parts that decided (check_method)."""
    who = _corrector(row)
    if who and row[f"title_{gender}"] != row[f"proposal_{gender}"]:
        return re.sub(r"[^\w\s:./-]", "", who)  # argilla-server's agent alphabet
    if row[f"title_{gender}"] is not None and row[f"title_{gender}"] == row[f"mt_{gender}"]:
        return "given translation" if route_of(row) == "reference" else "MT"
    return _layer_agents(row)


def _layer_agents(row: dict) -> str:
    # argilla-server takes letters, digits, spaces and -_:./ in an agent: no "+", no parentheses.
    # "+" also joins a word list's dictionaries (hunspell:pt_BR+pt_PT): a part without ":" continues the last.
    parts = [re.sub(r"[^\w\s:./-]", "", AGENTS.get(p.split(":", 1)[0], p.split(":", 1)[0]))
             for p in str(row["check_method"] or "").split("+") if ":" in p or p in AGENTS]
    return " and ".join(dict.fromkeys(p for p in parts if p)) or "gender layer"


def _changes(row: dict) -> list[str]:
    out = []
    for g in ("masculine", "feminine"):
        mt, title = row[f"mt_{g}"], row[f"title_{g}"]
        if title is not None and mt is not None and title != mt:
            out.append(f"The {g} title was changed by the {_form_agent(row, g)}: '{mt}' → '{title}'.")
        elif title is not None and mt is None:
            out.append(f"The {g} title '{title}' was made by the {_form_agent(row, g)} (the translation has none).")
        elif title is None and mt is not None:
            out.append(f"The translation's {g} '{mt}' is not used (no {g} title proposed).")
    return out


def _check_text(row: dict, d) -> str:
    lines = [f"{row['reason'][:1].upper()}{row['reason'][1:]}." if row["reason"] else f"Verdict: {row['verdict']}."]
    lines += _changes(row)
    reads = []
    for g in ("masculine", "feminine"):
        if row[f"title_{g}"] is not None:
            reads.append(f"the {g} title reads as {row[f'check_{g}']}")
    if reads:
        lines.append(f"Gender check ({_layer_agents(row)}): "
                     + ", ".join(reads) + ".")
    notes = [FLAG_WORDS.get(f, f) for f in row["flags"] or []]
    if notes:
        lines.append("Notes: " + "; ".join(notes) + ".")
    if d.why:
        lines.append(f"Doubt: {d.why}.")
    return "\n".join(lines)


def english_head(text: str) -> str:
    """The English title's head noun: the word before "of"/"for"/"to" when there is one, else the last word
    (Director of Staffing → director, Staff Accountant → accountant)."""
    words = text.lower().replace(",", " ").split()
    for i, w in enumerate(words):
        if w in ("of", "for", "to", "in", "at") and i > 0:
            return words[i - 1]
    return words[-1] if words else ""


def with_review_columns(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with the columns of builds since the proposal was kept apart: for an earlier build the titles were
    the proposal, and nobody's names or review round are known."""
    for g in ("masculine", "feminine"):
        if f"proposal_{g}" not in df.columns:
            df = df.with_columns(pl.col(f"title_{g}").alias(f"proposal_{g}"))
    for col, dtype in (("annotators", pl.List(pl.String)), ("review", pl.String), ("candidate_text", pl.String)):
        if col not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=dtype).alias(col))
    return df


def record_specs(df: pl.DataFrame, lang: str) -> list[RecordSpec]:
    """One record per source title, in doubt order (worst first), then by source id."""
    df = with_review_columns(df)
    rows = [(doubt(r), r) for r in df.iter_rows(named=True)]
    rows.sort(key=lambda dr: (-dr[0].score, dr[1]["source_id"]))
    specs = []
    for d, row in rows:
        occurs = "both" if row["in_queries"] and row["in_corpus"] else ("query" if row["in_queries"] else "corpus")
        confidence = round(1.0 - d.score, 4)
        metadata = {
            "source_id": row["source_id"],
            "severity": d.severity,
            "confidence": confidence,
            "verdict": row["verdict"],
            "needs_review": "yes" if d.severity in ("serious", "check") else "no",
            "route": route_of(row),
            "occurs_in": occurs,
            "english_head": english_head(row["source_text"]),
            "english_words": sorted(set(row["source_text"].lower().replace(",", " ").split())),
        }
        if row["flags"]:
            metadata["flags"] = sorted(row["flags"])
        for g in ("masculine", "feminine"):  # the build's proposal, never a person's text (pull compares with it)
            if row[f"proposal_{g}"] is not None:
                metadata[f"proposed_{g}"] = row[f"proposal_{g}"]
        marking = suggested_marking(row)
        if marking is not None:
            metadata["suggested_marking"] = marking
        specs.append(RecordSpec(
            id=record_id(lang, row["source_id"]),
            fields={
                "english": row["source_text"],
                "source": _source_text(row),
                "titles": _titles(row),
                "check": _check_text(row, d),
            },
            metadata=metadata,
            suggestions={
                "masculine": Suggested(row["title_masculine"], confidence, _form_agent(row, "masculine")),
                "feminine": Suggested(row["title_feminine"], confidence, _form_agent(row, "feminine")),
                "gender_marking": Suggested(marking, confidence, "gender check"),
            },
            vector_texts={"english_vector": row["source_text"],
                          "proposed_vector": row["title_masculine"] if row["title_masculine"] is not None
                          else row["title_feminine"]},
        ))
    return specs
