"""From raw translations to the gendered test set.

Per English source id, ``process_translations`` runs four steps, each its own function or module:
1. strip (builder/strip.py): the template removed with the language's pattern from its pack (named groups
   ``title`` and, optionally, ``article``), lowercased, punctuation and spaces trimmed; what cannot be used is
   flagged (``template_not_stripped``, ``empty``, ``echo``: the English came back);
2. corrections: a person's correction (``corrections/<lang>.jsonl``) where there is one picks the ``Corrected``
   strategy: their text replaces what they were shown, their gender marking decides;
3. decide (builder/routes.py): the route's strategy gives the verdict (builder/verdict.py), the forms and their
   checks: the MT pair, the given translation, or no translation;
4. item: one row of ``translations.parquet`` (``translation_row``), then ``forms_of`` names the items it gives;
5. term rules (builder/rules.py ``apply_rules``, run by builder/build.py on the processed frame): a reviewed fix
   of a term (``corrections/<lang>.rules.jsonl``) applied to the titles of every source the build settled.

Then items are deduplicated per gender by text (the union of source ids is kept), pair ids are the
connected components of the graph linking items through shared source ids, and the qrels are derived
through source ids: every query item holding an English query id × every corpus item holding a
relevant English document id.

Identical text for different genders: an item is unique per (gender, text); when a text is neutral for
one source and gendered for another, the neutral item absorbs the gendered one (the text is in both
corpora already, and a corpus may not repeat a text). The same holds for a text that is masculine for
one source and feminine for another; that item keeps ``check_ok`` false and the flag ``gender_conflict``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from dataclasses import dataclass, field

import polars as pl

from builder.corrections import Corrections
from builder.errors import BuildError
from builder.gender import F, M, N, U
from builder.routes import Corrected, Outcome, Route, Source, make_routes
from builder.rules import rewrite_inputs
from builder.provenance import STATUS_CORRECTED, STATUS_MACHINE, STATUS_REVIEWED, ItemSources
from builder.verdict import INFORMATIVE_FLAGS, PAIR_VERDICTS, Verdict
from eval.testset import ITEM_SCHEMA
from languages import Language, resolve

# Flags of a gender layer that put a source on the review list, whatever its verdict (stats.json needs_review).
REVIEW_FLAGS = {"unknown_word", "unknown_modifier", "untranslated", "unknown_head", "not_a_person_noun", "no_feminine_form", "no_masculine_form"}
SELF_MATCH_POLICIES = {
    "keep_derived": "qrels kept exactly as derived from the English qrels (which never mark a query's own id); "
    "eval drops, at ranking time, documents sharing a source id with the query",
    "drop_identical_text": "additionally remove derived qrels whose document text equals the query text",
}
_SPACES = re.compile(r"\s+")


def process_translations(raw: pl.DataFrame, lang: Language | str, pattern: str, corrections: Corrections | None = None,
                         lexicon_cache: Path | None = None) -> pl.DataFrame:
    """One row per English id: stripped titles, checks, verdict (the builder's translations.parquet): strip →
    corrections → decide → item, the strategy of each row's route deciding (column ``route``; a raw file without
    it is all MT). lang: the declaration (a code is resolved here, once)."""
    lang = resolve(lang)
    corrections = corrections or Corrections()
    route_of = raw["route"].to_list() if "route" in raw.columns else ["mt"] * raw.height
    routes = make_routes(list(dict.fromkeys(route_of)), lang, pattern, lexicon_cache)  # in order of first use
    sources = [strip_source(routes[name], row, corrections) for row, name in zip(raw.to_dicts(), route_of)]
    input_rules = rewrite_inputs(sources, corrections.rules)  # the term rules on the inputs (builder/rules.py)
    for name, route in routes.items():
        route.prepare([s for s, n in zip(sources, route_of) if n == name])
    corrected = {name: Corrected(route) for name, route in routes.items()}
    outcomes = [decide_source(routes[name], corrected[name], s) for s, name in zip(sources, route_of)]
    check_corrections_possible(sources, outcomes, corrections)
    rows = [translation_row(s, outcome) for s, outcome in zip(sources, outcomes)]
    # The raw columns as they are, the new ones column by column (a frame made from one dict per row took twice
    # as long), each of its declared type whatever its values (an all-empty list column is List(String) too).
    return raw.hstack(pl.DataFrame({name: [row[name] for row in rows] for name in ROW_SCHEMA}, schema=ROW_SCHEMA)
                      ).with_columns(**input_columns([s.row["source_id"] for s in sources], input_rules)
                      ).with_columns(  # the translation's own titles as it gave them, before the rules
        mt_masculine=pl.coalesce("input_before_masculine", "mt_masculine"),
        mt_feminine=pl.coalesce("input_before_feminine", "mt_feminine"))


def input_columns(ids: list[str], changes: dict) -> dict[str, pl.Series]:
    """The term rules' changes of the inputs (builder/rules.py ``rewrite_inputs``), as columns the rules step reads:
    ``input_rules`` (the rules' ids) and ``input_before_<gender>`` (the titles before them)."""
    got = [changes.get(sid) for sid in ids]
    return {"input_rules": pl.Series([c.rules if c else [] for c in got], dtype=pl.List(pl.String)),
            "input_before_masculine": pl.Series([c.before[0] if c else None for c in got], dtype=pl.String),
            "input_before_feminine": pl.Series([c.before[1] if c else None for c in got], dtype=pl.String)}


def check_corrections_possible(sources: list[Source], outcomes: list[Outcome], corrections: Corrections) -> None:
    """A BuildError naming file:line for the first correction that keeps a proposal where there is none: both titles
    null (keep the proposed ones), no flag, and the build proposes no title for the source (an unaligned or failed
    one). Such a line certifies nothing; a person or the review must write the titles, or flag the source."""
    for source, outcome in zip(sources, outcomes):
        c = source.correction
        if c is None or c.drops or c.masculine or c.feminine or outcome.proposal is None:
            continue
        if outcome.proposal == (None, None):
            line = corrections.lines.get(c.source_id, 0)
            raise BuildError(f"{corrections.path}:{line}: source_id {c.source_id!r}: the build proposes no title for it "
                             "and the line writes none (masculine and feminine null, no flag); write the titles, or a "
                             "flag to drop the source")


def strip_source(route: Route, row: dict, corrections: Corrections) -> Source:
    """The strip step, with the person's correction of the source attached."""
    masculine, feminine = route.strip(row)
    return Source(row, masculine, feminine, corrections.translations.get(row["source_id"]))


def decide_source(route: Route, corrected: Corrected, source: Source) -> Outcome:
    """The decide step: the person's correction where there is one, else the route's own decision; then the flags
    the route adds to a verdict whoever gave it."""
    outcome = (corrected if source.correction is not None else route).decide(source)
    outcome.flags += route.review_flags(outcome)
    return outcome


# The columns process_translations adds to the raw ones.
ROW_SCHEMA = {"mt_masculine": pl.String, "mt_feminine": pl.String, "title_masculine": pl.String,
              "title_feminine": pl.String, "article_masculine": pl.String, "article_feminine": pl.String,
              "check_masculine": pl.String, "check_feminine": pl.String, "check_method_masculine": pl.String,
              "check_method_feminine": pl.String, "check_method": pl.String, "verdict": pl.String, "reason": pl.String,
              "flags": pl.List(pl.String), "status": pl.String, "annotators": pl.List(pl.String),
              "review": pl.String, "proposal_masculine": pl.String, "proposal_feminine": pl.String}
# translations.parquet status of a source: the build's own text, a person's Argilla correction, the maintainers'
# review (docs/review.md); builder/rules.py adds ``rule`` (a term rule changed the build's text).
# check_method of a form the maintainers' review wrote or confirmed: its gender is the review's (like "human")
REVIEW_CHECK = "review"


def translation_row(source: Source, outcome: Outcome) -> dict:
    """The item step: one row of translations.parquet (the columns of ``ROW_SCHEMA``)."""
    c = source.correction
    m_method, f_method = outcome.method_masculine, outcome.method_feminine
    return {
        "mt_masculine": source.masculine.title,
        "mt_feminine": source.feminine.title,
        "title_masculine": outcome.masculine,
        "title_feminine": outcome.feminine,
        "article_masculine": source.masculine.article,
        "article_feminine": source.feminine.article,
        "check_masculine": outcome.check_masculine,
        "check_feminine": outcome.check_feminine,
        "check_method_masculine": m_method,
        "check_method_feminine": f_method,
        "check_method": m_method if m_method == f_method else f"{m_method}|{f_method}",
        "verdict": outcome.verdict.value,
        "reason": outcome.reason,
        # a reviewed source: the build's doubts are settled by the review; what says where a form came from stays
        "flags": [x for x in outcome.flags if x in INFORMATIVE_FLAGS] if c is not None and c.review else outcome.flags,
        "status": STATUS_MACHINE if c is None else STATUS_REVIEWED if c.review else STATUS_CORRECTED,
        "annotators": list(c.annotators) if c else [],
        "review": c.review if c else None,
        # what annotation shows as the proposal and compares answers with: the route's, never the person's text
        "proposal_masculine": (outcome.proposal or (outcome.masculine, outcome.feminine))[0],
        "proposal_feminine": (outcome.proposal or (outcome.masculine, outcome.feminine))[1],
    }


TRANSLATIONS_COLUMNS = [
    "source_id", "source_text", "in_queries", "in_corpus", "sentence_masculine", "sentence_feminine",
    "output_masculine", "output_feminine", "mt_masculine", "mt_feminine", "title_masculine", "title_feminine",
    "check_masculine", "check_feminine", "check_method", "verdict", "reason", "flags", "translator",
    "translator_version", "status", "annotators", "review", "proposal_masculine", "proposal_feminine",
]


def forms_of(row: dict) -> list[tuple[str, str, str, str]]:
    """(gender, text, check_gender, check_method) of the items one processed source gives (its verdict's
    meaning: builder/verdict.py); the failed, dropped, unaligned and not-a-person sources give none."""
    v = row["verdict"]
    m = (M, row["title_masculine"], row["check_masculine"], row["check_method_masculine"])
    f = (F, row["title_feminine"], row["check_feminine"], row["check_method_feminine"])
    if row["status"] == STATUS_REVIEWED:  # the review wrote or confirmed each form with its gender (docs/review.md)
        m, f = (M, m[1], M, REVIEW_CHECK), (F, f[1], F, REVIEW_CHECK)
        if v == Verdict.NEUTRAL:
            return [(N, row["title_masculine"], N, REVIEW_CHECK)]
    if v in PAIR_VERDICTS:
        return [m, f]
    human = row["status"] in (STATUS_CORRECTED, STATUS_REVIEWED)  # a person's or the review's marking decided
    if v == Verdict.NEUTRAL:
        if human:
            return [(N, row["title_masculine"], row["check_masculine"], "human")]
        return [(N, row["title_masculine"], row["check_masculine"], row["check_method_masculine"])]
    if v in (Verdict.UNINFLECTED_FEMININE, Verdict.UNVERIFIED_IDENTICAL):
        return [m]
    if v == Verdict.UNVERIFIED:  # a review item: in Argilla, not in the set, until a person decides it
        return []
    if v == Verdict.MASCULINE_IS_FEMININE:
        return [f]
    if v == Verdict.MASCULINE_ONLY:
        return [(M, row["title_masculine"], M, "human")] if human else [m]
    if v == Verdict.FEMININE_ONLY:
        return [(F, row["title_feminine"], F, "human")] if human else [f]
    if v == Verdict.WRONG_GENDER_FORM:
        return [x for x in (m, f) if x[2] != (F if x[0] == M else M)]
    if v == Verdict.ONE_FORM_FAILED:
        kept = m if row["title_masculine"] else f
        return [kept] if kept[2] != (F if kept[0] == M else M) else []
    return []


# The columns forms_of and build_items read of a processed source.
ROW_COLUMNS = ["source_id", "source_text", "verdict", "status", "flags", "annotators", "title_masculine",
               "title_feminine", "check_masculine", "check_feminine", "check_method_masculine", "check_method_feminine"]
# Read where present (a frame made before the review existed has none): builder/provenance.py tells a review's
# own text from the proposal it kept by them.
REVIEW_COLUMNS = ["review", "proposal_masculine", "proposal_feminine"]


@dataclass
class _Item:
    gender: str
    text: str
    check_gender: str
    check_method: str
    source_ids: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    # status and provenance of the sources (builder/provenance.py)
    sources: ItemSources = field(default_factory=ItemSources)


def item_id(gender: str, text: str) -> str:
    return f"{gender[0]}:{_SPACES.sub('_', text)}"


def string_lists(values: list[list[str]]) -> pl.Series:
    """A List(String) column from Python lists, made from one flat column: given the lists, polars builds a
    Series of every inner list, a fifth of a cached rebuild's time (issue 13)."""
    rows = pl.Series("row", [i for i, v in enumerate(values) for _ in v], dtype=pl.UInt32)
    flat = pl.Series("v", [x for v in values for x in v], dtype=pl.String)
    grouped = pl.DataFrame([rows, flat]).group_by("row").agg("v")  # agg keeps each list's order
    every = pl.DataFrame({"row": pl.Series(range(len(values)), dtype=pl.UInt32)})
    lists = every.join(grouped, on="row", how="left").sort("row")["v"]
    return lists.fill_null(pl.lit([], dtype=pl.List(pl.String)))


def build_items(processed: pl.DataFrame, role: str, provenance: str) -> pl.DataFrame:
    """Items of one role (``queries`` or ``corpus``), deduplicated per gender by text."""
    flag_col = "in_queries" if role == "queries" else "in_corpus"
    by_text: dict[str, dict[str, _Item]] = defaultdict(dict)  # text -> gender -> item
    texts_of: dict[str, str] = {}
    by_row = "provenance" in processed.columns  # each source's own route (builder/build.py); else one for all
    by_rules = "rules" in processed.columns  # the term rules that changed each source (builder/rules.py)
    # Only the columns read here: rows as dicts cost by the column.
    review = [c for c in REVIEW_COLUMNS if c in processed.columns]
    for row in processed.filter(pl.col(flag_col)).select(ROW_COLUMNS + review + ["provenance"] * by_row + ["rules"] * by_rules
                                                         ).iter_rows(named=True):
        for gender, text, cg, cm in forms_of(row):
            if not text:  # a term rule emptied the title (builder/rules.py): that form gives no item
                continue
            item = by_text[text].get(gender)
            if item is None:
                item = by_text[text][gender] = _Item(gender, text, cg, cm)
            item.source_ids.append(row["source_id"])
            item.sources.add(row, None if gender == N else gender, row["provenance"] if by_row else provenance)
            texts_of[row["source_id"]] = row["source_text"]
            if gender == M:
                item.flags.update([x for x in row["flags"] if not x.startswith("feminine:")])
            elif gender == F:
                item.flags.update([x for x in row["flags"] if not x.startswith("masculine:")])
            else:
                item.flags.update(row["flags"])
    items: list[_Item] = []
    for text, per_gender in by_text.items():
        if len(per_gender) == 1:
            items.append(next(iter(per_gender.values())))
            continue
        merged = per_gender.get(N) or _Item(N, text, U, "none", flags={"gender_conflict"})
        if N in per_gender:
            merged.flags.add("absorbed_gendered_form")
        for g, it in per_gender.items():
            if it is not merged:
                merged.source_ids += it.source_ids
                merged.flags |= it.flags
                merged.sources.merge(it.sources)
        items.append(merged)
    pair_of = _pair_ids(items)
    rows = []
    for it in items:
        sids = sorted(set(it.source_ids))
        check_ok = it.check_method in ("human", REVIEW_CHECK) or (it.check_gender == it.gender
                                                                   and "gender_conflict" not in it.flags)
        rows.append({
            "id": item_id(it.gender, it.text),
            "text": it.text,
            "gender": it.gender,
            "form": it.gender,  # the extra forms (doublet, neomorpheme) are builder/forms.py's items
            "pair_id": pair_of[id(it)],
            "source_ids": sids,
            "source_texts": [texts_of[s] for s in sids],
            "check_gender": it.check_gender,
            "check_method": it.check_method,
            "check_ok": check_ok,
            "flags": sorted(it.flags),
            "status": it.sources.status,
            "provenance": it.sources.provenance(provenance),
        })
    df = pl.DataFrame({c: string_lists([r[c] for r in rows]) if ITEM_SCHEMA[c] == pl.List(pl.String)
                       else pl.Series(c, [r[c] for r in rows], dtype=ITEM_SCHEMA[c]) for c in ITEM_SCHEMA})
    dup = df.group_by("id").len().filter(pl.col("len") > 1)
    if dup.height:
        raise BuildError(f"{role}: two different texts give the same item id {dup['id'].to_list()[:3]}")
    return df.sort("id")


def _pair_ids(items: list[_Item]) -> dict[int, str]:
    """Connected components of items linked through shared source ids; named by their smallest source id."""
    # A dozen lines of union-find rather than scipy.sparse.csgraph.connected_components (same components):
    # importing scipy.sparse costs about 0.2 s, a fifth of the 1 s a cached rebuild may take (issue 13).
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]  # path halving
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for i, it in enumerate(items):
        for sid in it.source_ids:
            ri, rj = root(i), root(first_with.setdefault(sid, i))
            if ri != rj:
                parent[ri] = rj
    names: dict[int, str] = {}
    for i, it in enumerate(items):
        r = root(i)
        names[r] = min(names.get(r, it.source_ids[0]), *it.source_ids)
    return {id(it): f"p:{names[root(i)]}" for i, it in enumerate(items)}


def derive_qrels(queries: pl.DataFrame, corpus: pl.DataFrame, english_qrels: list[tuple[str, str]],
                 corrections: Corrections | None = None, self_match_policy: str = "keep_derived") -> tuple[pl.DataFrame, dict]:
    """Every query item holding an English query id × every corpus item holding a relevant document id,
    then the person's relevance labels (``relevant: false`` removes the pair)."""
    if self_match_policy not in SELF_MATCH_POLICIES:
        raise BuildError(f"params.yaml: build.self_match_policy {self_match_policy!r}; expected one of {sorted(SELF_MATCH_POLICIES)}")
    q_items: dict[str, list[str]] = defaultdict(list)
    d_items: dict[str, list[str]] = defaultdict(list)
    text = {}
    for iid, t, sids in queries.select("id", "text", "source_ids").iter_rows():
        text[("q", iid)] = t
        for s in sids:
            q_items[s].append(iid)
    for iid, t, sids in corpus.select("id", "text", "source_ids").iter_rows():
        text[("d", iid)] = t
        for s in sids:
            d_items[s].append(iid)
    labels = dict.fromkeys(english_qrels, True)
    if corrections:
        labels.update(corrections.relevance)
    pairs: set[tuple[str, str]] = set()
    for (qs, ds), relevant in labels.items():
        if relevant:
            pairs.update((q, d) for q in q_items.get(qs, ()) for d in d_items.get(ds, ()))
    removed = set()
    for (qs, ds), relevant in labels.items():
        if not relevant:
            removed.update((q, d) for q in q_items.get(qs, ()) for d in d_items.get(ds, ()))
    pairs -= removed
    identical = {(q, d) for q, d in pairs if text[("q", q)] == text[("d", d)]}
    if self_match_policy == "drop_identical_text":
        pairs -= identical
    qrels = pl.DataFrame(sorted(pairs), schema={"query_id": pl.String, "doc_id": pl.String}, orient="row").with_columns(
        relevance=pl.lit(1, pl.Int64)
    )
    # English relevant pairs that no qrel can carry because the query or the document title produced no item.
    lost = sorted((qs, ds) for qs, ds in english_qrels if not q_items.get(qs) or not d_items.get(ds))
    info = {"identical_text_pairs": len(identical), "removed_by_annotators": len(removed), "english_pairs_lost": lost}
    return qrels, info
