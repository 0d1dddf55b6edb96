"""From raw translations to the gendered test set.

Per English source id:
1. strip the template with the language's pattern from params.yaml (named groups ``title`` and,
   optionally, ``article``), lowercase, trim punctuation and spaces;
2. flag what cannot be used: ``template_not_stripped``, ``empty``, ``echo`` (the English came back);
3. check the grammatical gender of each output (builder.gender) and decide a verdict (VERDICTS);
4. apply the person's corrections (``corrections/<lang>.jsonl``) where there are any.

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
import unicodedata
from collections import defaultdict
from pathlib import Path
from dataclasses import dataclass, field, replace

import polars as pl

from builder.corrections import Corrections
from builder.errors import BuildError
from builder.gender import F, M, N, U, check_many
from builder.inflection import Decision, GenderLayer
from eval.testset import ITEM_SCHEMA
from languages import Language, compile_strip, resolve

# What happened to one English source; which items it gives.
VERDICTS = {
    "gendered": "masculine and feminine forms differ and the check does not contradict them: two items",
    "neutral": "identical forms that the check finds common-gender (or a person marked neutral): one neutral item",
    "uninflected_feminine": "identical forms and the check says masculine: the translator failed to inflect; "
    "the masculine item is kept, the broken feminine form is dropped (needs review)",
    "masculine_is_feminine": "identical forms and the check says feminine (the masculine template gave a feminine "
    "noun): the feminine item is kept, the masculine form is dropped (needs review)",
    "unverified_identical": "identical forms the check cannot classify: kept as a masculine item only, not neutral (needs review)",
    "wrong_gender_form": "forms differ but one is checked as the other gender: that form is dropped (needs review)",
    "one_form_failed": "one output failed (not stripped, empty or echoed): only the other form is kept (needs review)",
    "failed": "both outputs failed: the source gives no item (needs review)",
    "dropped_by_annotator": "a person flagged the source not_a_job_title/untranslatable without a correction: dropped",
    "masculine_only": "the occupation is named in the masculine only: a person marked it so, or the lexicon and the "
    "word list know no feminine of its head (flag no_feminine_form / unknown_head): the masculine item alone",
    "feminine_only": "the occupation is named in the feminine only (a person marked it so, or no masculine of the "
    "head exists, flag no_masculine_form): the feminine item alone",
    "reinflected": "the lexicon made one form from the other because the translator's form was not its inflection "
    "(flag reinflected_feminine / reinflected_masculine; the translator's forms stay in mt_masculine/mt_feminine): two items",
    "inflected": "reference route: the given title is one form (flag masculine_base / feminine_base / inclusive_base) "
    "and the gender layer made the other: two items",
    "unverified": "the gender layer cannot vouch for the title (a word the lexicon and the word list do not know, "
    "English left untranslated, a single form nobody confirmed, or on the MT route a title that kept the English "
    "word order or a verb form: flags head_not_a_noun, verb_form): never neutral, never a single-form item; no "
    "item until a person decides it in Argilla (needs review)",
    "not_a_person": "the title names a thing, not a person (flag not_a_person_noun): no item (needs review)",
    "unaligned": "reference route: no confident alignment to the given translation and no MT route for the "
    "language: no item (counted in stats.json alignment)",
}
NEEDS_REVIEW = {"uninflected_feminine", "masculine_is_feminine", "unverified_identical", "wrong_gender_form", "one_form_failed",
                "failed", "unverified", "not_a_person", "unaligned"}
PAIR_VERDICTS = ("gendered", "reinflected", "inflected")  # two items: a masculine and a feminine
# Flags of the lexicon gender layer that leave a decision unconfirmed (check_gender unknown, check_ok false).
REVIEW_FLAGS = {"unknown_word", "unknown_modifier", "untranslated", "unknown_head", "not_a_person_noun", "no_feminine_form", "no_masculine_form"}
UNCHECKED_FLAGS = {"unknown_word", "untranslated", "unknown_head", "not_a_person_noun"}
# A machine translation that kept the English word order or took a verb for a noun (GenderLayer.garbled): on the MT
# route no item (clínic associar professor, anual dando director), whatever its verdict.
GARBLED_FLAGS = {"head_not_a_noun", "verb_form"}
SELF_MATCH_POLICIES = {
    "keep_derived": "qrels kept exactly as derived from the English qrels (which never mark a query's own id); "
    "eval drops, at ranking time, documents sharing a source id with the query",
    "drop_identical_text": "additionally remove derived qrels whose document text equals the query text",
}

_KEEP_AT_EDGE = "+#&%$"  # symbols that belong to titles (c++, c#, r&d)


def _is_edge(ch: str) -> bool:
    """Punctuation, separators and symbols trimmed at a title's ends (checked per character: building the whole
    set of such code points took 0.3 s at every import). A letter or digit (categories L and N) never is, and
    most characters asked are: they skip the category lookup."""
    return not ch.isalnum() and ch not in _KEEP_AT_EDGE and (
        ch in " \t" or unicodedata.category(ch).startswith(("P", "Z", "S")))


_CLOSING = {")": "(", "]": "["}


def strip_edges(text: str) -> str:
    """Trim punctuation and spaces at both ends, but a closing bracket whose opening is in the title stays
    (*accompagnateur (musique)*)."""
    start, end = 0, len(text)
    while start < end and _is_edge(text[start]):
        start += 1
    while end > start and _is_edge(text[end - 1]):
        if text[end - 1] in _CLOSING and _CLOSING[text[end - 1]] in text[start:end - 1]:
            break
        end -= 1
    return text[start:end]
_SPACES = re.compile(r"\s+")


def _one_space(text: str) -> str:
    """Runs of white space made one space, none at the ends: ``_SPACES.sub(" ", text).strip()`` at a fifth of
    the cost (str.split and \\s know the same white space; a test checks every code point)."""
    return " ".join(text.split())


# Invisible format characters a copied title may carry (pt *supervisor \u200b\u200bde design gráfico*): the soft
# hyphen, zero-width spaces and joiners, direction marks and embeddings, the word joiner, the byte-order mark.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def normalise(text: str | None) -> str:
    """Lowercase, drop invisible format characters, collapse spaces, trim punctuation and spaces at both ends."""
    if text is None:
        return ""
    text = _one_space(_INVISIBLE.sub("", unicodedata.normalize("NFC", text))).lower()
    return strip_edges(text)


@dataclass
class Stripped:
    title: str | None
    article: str | None
    flags: list[str] = field(default_factory=list)


def strip_template(output: str, english_title: str, pattern: re.Pattern) -> Stripped:
    """Remove the template (pronoun, copula, optional article) from one output; flag what fails."""
    clean = strip_edges(_one_space(unicodedata.normalize("NFC", output or "")))
    if not clean:
        return Stripped(None, None, ["empty"])
    m = pattern.fullmatch(clean)
    if not m:
        probe = pattern.fullmatch(clean + " x")
        if probe and probe.group("title") == "x":  # nothing but the template came back
            return Stripped(None, None, ["empty"])
        flags = ["template_not_stripped"]
        if normalise(clean).endswith(normalise(english_title)):
            flags.append("echo")
        return Stripped(None, None, flags)
    title = normalise(m.group("title"))
    article = (m.groupdict().get("article") or "").strip() or None
    if not title:
        return Stripped(None, article, ["empty"])
    if title == normalise(english_title):
        # Kept: a loanword in use (chef, designer) is a title; the gender layer tells it from an untranslated one.
        return Stripped(title, article, ["echo"])
    return Stripped(title, article)


def compile_pattern(pattern: str, code: str) -> re.Pattern:
    try:
        return compile_strip(pattern)  # languages.compile_strip: the one check of a strip pattern
    except ValueError as exc:
        raise BuildError(f"params.yaml: build.strip.{code} {exc}") from None


def _different_words(lang: Language, layer: GenderLayer | None, m: str | None, f: str | None) -> bool:
    """A pair whose feminine is not the masculine's inflection (pt advogado / procuradora). With a lexicon:
    word by word through the gender layer; without one: heads sharing fewer than 3 leading letters."""
    if not m or not f:
        return False
    if layer is not None:
        return not layer.consistent(m, f, "f")
    from builder.gender import head_word

    hm, hf = head_word(lang, m) or "", head_word(lang, f) or ""
    return len(hm) >= 3 and len(hf) >= 3 and hm[:3] != hf[:3]


def decide(m_title, f_title, m_check, f_check, m_failed, f_failed) -> str:
    if m_failed and f_failed:
        return "failed"
    if m_failed or f_failed:
        return "one_form_failed"
    if m_title == f_title:
        # The shared text's own markers decide (the two checks of one text differ only through the article:
        # pt "um caixa" / "uma caixa" is a common-gender noun); a feminine output read masculine is never neutral.
        if m_check == N and f_check == M:
            return "uninflected_feminine"
        return {N: "neutral", M: "uninflected_feminine", F: "masculine_is_feminine"}.get(m_check, "unverified_identical")
    if m_check == F or f_check == M:
        return "wrong_gender_form"
    return "gendered"


def earned(d: Decision, given: bool = False) -> Decision:
    """Neutral and single-form items must be earned (issue 21): a title the layer cannot vouch for is never
    neutral nor a single form (``unverified``: a review item, no item in the set), and a thing is not a title.
    given: the title is a given translation, whose words after the head are the translators' choice (loans a
    job ad uses: consulente wireless, gerente de compliance): an unknown one is flagged, not disqualifying. On
    the MT route such a word is the engine's (a pivot word: capo di policía; English left in)."""
    unsure = any(x in UNCHECKED_FLAGS for x in d.flags) or (not given and "unknown_modifier" in d.flags)
    if d.verdict == "feminine_only" and "not_a_person_noun" in d.flags:
        return replace(d, verdict="not_a_person", masculine=None, feminine=None)
    if not given and GARBLED_FLAGS & set(d.flags) and d.verdict not in ("failed", "unverified"):
        masculine, feminine = decision_titles(d)
        return replace(d, verdict="unverified", masculine=masculine, feminine=None if d.verdict == "neutral" else feminine,
                       neutral=None, reason=f"{d.reason}; the translation keeps the English word order or a verb form "
                       "(head_not_a_noun, verb_form): a review item")
    if d.verdict == "neutral" and unsure:
        return replace(d, verdict="unverified", masculine=d.neutral, feminine=None, neutral=None,
                       reason=f"{d.reason}: not neutral without a lexicon's or word list's word")
    if d.verdict in ("reinflected", "inflected") and "unknown_word" in d.flags:
        # the layer made the other form around a head it does not know (vp dello sviluppo -> vp della sviluppa)
        from_feminine = {"reinflected_masculine", "feminine_base"} & set(d.flags)
        return replace(d, verdict="unverified", **({"masculine": None} if from_feminine else {"feminine": None}),
                       reason="the head is a word neither the lexicon nor the word list knows: no other form made")
    if d.verdict in ("masculine_only", "feminine_only") and "declared_single_form" not in d.flags:
        # The lexicon and the word list not knowing the other form is no proof that none exists (juez/jueza,
        # segundo/segunda, plomero/plomera), nor that the title names a person (apoyo técnico): a review item. A
        # single form is kept when a person marks it so, or the pack declares the noun (flag declared_single_form).
        return replace(d, verdict="unverified",
                       reason=f"{d.reason}; a single form needs a person's confirmation (or the pack's declaration)")
    return d


def decision_titles(d: Decision) -> tuple[str | None, str | None]:
    return (d.neutral, d.neutral) if d.verdict == "neutral" else (d.masculine, d.feminine)


def decision_checks(d: Decision) -> tuple[str, str]:
    """check_masculine, check_feminine of a gender layer's decision: unknown where it could not confirm the title."""
    if any(x in UNCHECKED_FLAGS for x in d.flags):
        return U, U
    if d.verdict == "neutral":
        return N, N
    m_title, f_title = decision_titles(d)
    return (M if m_title else U), (F if f_title else U)


def process_translations(raw: pl.DataFrame, lang: Language | str, pattern: str, corrections: Corrections | None = None,
                         lexicon_cache: Path | None = None) -> pl.DataFrame:
    """One row per English id: stripped titles, checks, verdict (the builder's translations.parquet).

    Each row is decided by its route's strategy (column ``route``; a raw file without it is all MT): the MT
    route's pair of template outputs here, the given translation's single base title in builder/reference.py.
    lang: the declaration (a code is resolved here, once)."""
    lang = resolve(lang)
    corrections = corrections or Corrections()
    if "route" not in raw.columns:
        return _process_mt(raw, lang, pattern, corrections, lexicon_cache)
    from builder.reference import process_reference

    order = raw.select("source_id").with_row_index("_order")
    parts = []
    mt = raw.filter(pl.col("route") == "mt")
    if mt.height:
        parts.append(_process_mt(mt, lang, pattern, corrections, lexicon_cache))
    given = raw.filter(pl.col("route") != "mt")
    if given.height:
        parts.append(process_reference(given, lang, corrections, lexicon_cache))
    out = pl.concat(parts, how="diagonal_relaxed")
    return order.join(out, on="source_id", how="left").sort("_order").drop("_order")


def _process_mt(raw: pl.DataFrame, lang: Language, pattern: str, corrections: Corrections,
                lexicon_cache: Path | None = None) -> pl.DataFrame:
    """The MT route: the two template outputs of each English title.

    Languages whose pack declares a ``lexicon`` are decided by the lexicon-grounded gender layer; the others
    by the ending rules of builder.gender, and check_method says which."""
    rx = compile_pattern(pattern, lang.code)
    rows = raw.to_dicts()
    stripped = {}
    for r in rows:
        stripped[r["source_id"]] = (
            strip_template(r["output_masculine"], r["source_text"], rx),
            strip_template(r["output_feminine"], r["source_text"], rx),
        )
    layer = GenderLayer(lang, lexicon_cache) if lang.lexicon else None
    if layer is None:
        # Without a lexicon an echoed English title cannot be told from a loanword: it fails, as it always did.
        for sm, sf in stripped.values():
            for s in (sm, sf):
                if "echo" in s.flags:
                    s.title = None
    # Corrected text replaces the machine text before the check; the person's marking decides the verdict.
    titles: dict[str, list[str | None]] = {}
    for sid, (sm, sf) in stripped.items():
        c = corrections.translations.get(sid)
        titles[sid] = [
            normalise(c.masculine) if c and c.masculine else sm.title,
            normalise(c.feminine) if c and c.feminine else sf.title,
        ]
    if layer is not None:
        layer.prepare([t for pair in titles.values() for t in pair if t]
                      + [s.title for pair in stripped.values() for s in pair if s.title])
        checks = [(U, "none")] * (2 * len(rows))
        # A person corrects what the annotation tool suggested: the layer's decision on the machine text, not
        # the raw machine text (pt Baker: the suggestion is padeira, made from padeiro, not the translator's padaria).
        for sid, (sm, sf) in stripped.items():
            c = corrections.translations.get(sid)
            if c is None:
                continue
            r = next(x for x in rows if x["source_id"] == sid)
            d = layer.decide(sm.title, sf.title, r["source_text"])
            base = (d.neutral, d.neutral) if d.verdict == "neutral" else (d.masculine, d.feminine)
            titles[sid] = [normalise(c.masculine) if c.masculine else base[0],
                           normalise(c.feminine) if c.feminine else base[1]]
    else:
        batch = []
        for sid, (sm, sf) in stripped.items():
            batch += [(titles[sid][0], sm.article), (titles[sid][1], sf.article)]
        checks = check_many(lang, batch)
    out = []
    methods: dict[str, str] = {}  # layer_method of each decision's method: a few values, asked once per source
    for i, r in enumerate(rows):
        sid = r["source_id"]
        sm, sf = stripped[sid]
        (mc, mmethod), (fc, fmethod) = checks[2 * i], checks[2 * i + 1]
        m_title, f_title = titles[sid]
        c = corrections.translations.get(sid)
        flags = [f"masculine:{x}" for x in sm.flags] + [f"feminine:{x}" for x in sf.flags]
        status, reason = "machine", ""
        if c is None and layer is not None:
            d = layer.decide(m_title, f_title, r["source_text"])
            d.flags += [x for x in layer.garbled(d.neutral or d.masculine or d.feminine or "") if x not in d.flags]
            d = earned(d)
            verdict, reason = d.verdict, d.reason
            flags += [x for x in d.flags if x not in flags]
            method = methods.get(d.method) or methods.setdefault(d.method, layer_method(layer, d.method))
            m_title, f_title = decision_titles(d)
            mc, fc = decision_checks(d)
            mmethod = fmethod = method
        elif c is None:
            verdict = decide(m_title, f_title, mc, fc, m_title is None, f_title is None)
        else:
            status = "corrected"
            verdict, m_title, f_title = corrected_verdict(c, m_title, f_title, mc, fc)
            if c.flag:
                flags.append(c.flag)
        if verdict == "uninflected_feminine":
            flags.append("uninflected_feminine")
        elif verdict == "masculine_is_feminine":
            flags.append("masculine_is_feminine")
        if verdict in PAIR_VERDICTS and _different_words(lang, layer, m_title, f_title):
            flags.append("different_words")
        out.append({
            "mt_masculine": sm.title,
            "mt_feminine": sf.title,
            "title_masculine": m_title,
            "title_feminine": f_title,
            "article_masculine": sm.article,
            "article_feminine": sf.article,
            "check_masculine": mc,
            "check_feminine": fc,
            "check_method_masculine": mmethod,
            "check_method_feminine": fmethod,
            "check_method": mmethod if mmethod == fmethod else f"{mmethod}|{fmethod}",
            "verdict": verdict,
            "reason": reason,
            "flags": flags,
            "status": status,
            "annotators": list(c.annotators) if c else [],
        })
    # The raw columns as they are, the new ones column by column: a frame made from one dict per row took
    # twice as long (polars infers each new column's type from all its values either way).
    return raw.hstack(pl.DataFrame({name: [row[name] for row in out] for name in (out[0] if out else {})}))


def corrected_verdict(c, m_title: str | None, f_title: str | None, mc: str, fc: str) -> tuple[str, str | None, str | None]:
    """The verdict a person's correction gives (their gender marking decides), with the titles it keeps."""
    has_text = bool(c.masculine or c.feminine)
    if c.flag in ("not_a_job_title", "untranslatable") and not has_text:
        return "dropped_by_annotator", m_title, f_title
    if c.gender_marking == "neutral":
        m_title = f_title = m_title or f_title
        return ("neutral" if m_title else "failed"), m_title, f_title
    if c.gender_marking in ("masculine_only", "feminine_only"):
        kept = m_title if c.gender_marking == "masculine_only" else f_title
        return (c.gender_marking if kept else "failed"), m_title, f_title
    if m_title and f_title and m_title != f_title:
        return "gendered", m_title, f_title
    return decide(m_title, f_title, mc, fc, m_title is None, f_title is None), m_title, f_title


def layer_method(layer, parts: str) -> str:
    """check_method of a gender layer's decision: which resources decided (``lexicon:apertium-es-pt+hunspell:pt_BR``;
    German: ``german-nouns:1.2.5+hunspell:de_DE``)."""
    names = {**layer.method_names, "rule": f"rule:{layer.lang.code}-endings"}
    return "+".join(names[p] for p in parts.split("+") if p in names) or "none"


TRANSLATIONS_COLUMNS = [
    "source_id", "source_text", "in_queries", "in_corpus", "sentence_masculine", "sentence_feminine",
    "output_masculine", "output_feminine", "mt_masculine", "mt_feminine", "title_masculine", "title_feminine",
    "check_masculine", "check_feminine", "check_method", "verdict", "reason", "flags", "translator",
    "translator_version", "status",
]


def forms_of(row: dict) -> list[tuple[str, str, str, str]]:
    """(gender, text, check_gender, check_method) of the items one processed source gives."""
    v = row["verdict"]
    m = (M, row["title_masculine"], row["check_masculine"], row["check_method_masculine"])
    f = (F, row["title_feminine"], row["check_feminine"], row["check_method_feminine"])
    if v in PAIR_VERDICTS:
        return [m, f]
    if v == "neutral":
        if row["status"] == "corrected":
            return [(N, row["title_masculine"], row["check_masculine"], "human")]
        return [(N, row["title_masculine"], row["check_masculine"], row["check_method_masculine"])]
    if v in ("uninflected_feminine", "unverified_identical"):
        return [m]
    if v == "unverified":  # a review item: in Argilla, not in the set, until a person decides it
        return []
    if v == "masculine_is_feminine":
        return [f]
    human = row["status"] == "corrected"
    if v == "masculine_only":
        return [(M, row["title_masculine"], M, "human")] if human else [m]
    if v == "feminine_only":
        return [(F, row["title_feminine"], F, "human")] if human else [f]
    if v == "wrong_gender_form":
        return [x for x in (m, f) if x[2] != (F if x[0] == M else M)]
    if v == "one_form_failed":
        kept = m if row["title_masculine"] else f
        return [kept] if kept[2] != (F if kept[0] == M else M) else []
    return []


# The columns forms_of and build_items read of a processed source.
ROW_COLUMNS = ["source_id", "source_text", "verdict", "status", "flags", "annotators", "title_masculine", "title_feminine",
               "check_masculine", "check_feminine", "check_method_masculine", "check_method_feminine"]


@dataclass
class _Item:
    gender: str
    text: str
    check_gender: str
    check_method: str
    source_ids: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    annotators: set[str] = field(default_factory=set)
    corrected: bool = False
    origins: set[str] = field(default_factory=set)  # provenance of the sources (one unless routes mix)


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
    # Only the columns read here: rows as dicts cost by the column.
    for row in processed.filter(pl.col(flag_col)).select(ROW_COLUMNS + ["provenance"] * by_row).iter_rows(named=True):
        for gender, text, cg, cm in forms_of(row):
            item = by_text[text].get(gender)
            if item is None:
                item = by_text[text][gender] = _Item(gender, text, cg, cm)
            item.source_ids.append(row["source_id"])
            item.origins.add(row["provenance"] if by_row else provenance)
            texts_of[row["source_id"]] = row["source_text"]
            if gender == M:
                item.flags.update([x for x in row["flags"] if not x.startswith("feminine:")])
            elif gender == F:
                item.flags.update([x for x in row["flags"] if not x.startswith("masculine:")])
            else:
                item.flags.update(row["flags"])
            if row["status"] == "corrected":
                item.corrected = True
                item.annotators.update(row["annotators"])
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
                merged.annotators |= it.annotators
                merged.corrected |= it.corrected
                merged.origins |= it.origins
        items.append(merged)
    pair_of = _pair_ids(items)
    rows = []
    for it in items:
        sids = sorted(set(it.source_ids))
        check_ok = it.check_method == "human" or (it.check_gender == it.gender and "gender_conflict" not in it.flags)
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
            "status": "corrected" if it.corrected else "machine",
            "provenance": f"human:{','.join(sorted(it.annotators)) or 'unknown'}" if it.corrected
            else "+".join(sorted(it.origins)) or provenance,
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
