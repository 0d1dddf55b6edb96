"""Doublet and neomorpheme forms of a confirmed masculine/feminine pair: the forms job ads write.

From a pair the gender layer confirmed word by word (verdict ``gendered`` or ``reinflected``, both forms
present), the language pack's ``forms:`` section (languages/__init__.py ``FormsRules``; docs/forms.md) makes:

- the **doublet** (es *ingeniero/a mecánico/a*, pt *engenheiro(a)*, fr *ingénieur(e)*, de *ingenieur*in*):
  every word that differs between the two forms is written as the masculine word followed by the feminine
  ending, for the first declared ending alternation ``[masculine ending, feminine ending]`` whose stems agree
  (*ingenier* + ``o``/``a``); a feminine shorter than the masculine (de *leitender*/*leitende*) is written the
  other way round (*leitende*r*). A word pair no alternation makes gets no doublet, except a pair the pack
  declares irregular (*actor*/*actriz*, ``irregular_pairs``), written whole (*actor/actriz*) where the pack
  says ``irregular: full_word`` (``none``: no doublet);
- the **neomorpheme** (es/pt *-e*, it *-ə*), only where the pack declares one: every differing word takes the
  neutral ending of the first matching ``[masculine, feminine, neutral]`` triple, respelled where the pack says
  (es *médic* + *e* -> *médique*); a word no triple makes gives no neomorpheme for the pair.

Words equal in both forms (an invariable adjective, *de ventas*) are left alone; a neutral item (one form for
both) and an occupation named in one gender only get no form. The pair's words are aligned (the gender layer
checked them as inflections word by word); hyphenated words are read part by part.

The build setting ``build.forms`` (params.yaml; ``forms_settings``) says which forms join the queries (default
both) and whether the corpus gains the doublet items (default no: the corpus stays as it was).
"""

from __future__ import annotations

import polars as pl

import config
from builder.errors import BuildError
from builder.params import FormsParams as FormsSettings
from builder.provenance import ItemSources
from builder.verdict import PAIR_VERDICTS
from eval.testset import DOUBLET, EXTRA_FORMS, INCLUSIVE, ITEM_SCHEMA, NEOMORPHEME
from languages import FORM_STYLES, DoubletRules, Language, NeomorphemeRules


def forms_settings(params: dict, where: str = "params.yaml") -> FormsSettings:
    """``build.forms`` of a params mapping (the typed section of builder/params.py); every mistake names the key."""
    try:
        return config.section(FormsSettings, params, "build.forms", where=where)
    except config.ConfigError as exc:
        raise BuildError(str(exc)) from None


def _split(m: str, f: str, endings) -> tuple | None:
    """The first declared alternation whose endings both words have over a common, non-empty stem."""
    for alt in endings:
        m_end, f_end = alt[0], alt[1]
        if m.endswith(m_end) and f.endswith(f_end):
            stem = m[: len(m) - len(m_end)]
            if stem and stem == f[: len(f) - len(f_end)]:
                return (stem, *alt)
    return None


def _aligned(masculine: str, feminine: str) -> list[tuple[list[str], list[str]]] | None:
    """Word pairs (split at hyphens), or None when the two forms do not align word by word."""
    a, b = masculine.split(" "), feminine.split(" ")
    if len(a) != len(b) or masculine == feminine:
        return None
    out = []
    for x, y in zip(a, b):
        xs, ys = x.split("-"), y.split("-")
        if len(xs) != len(ys):
            return None
        out.append((xs, ys))
    return out


def irregular_pairs(lang: Language) -> frozenset[tuple[str, str]]:
    """The (masculine, feminine) word pairs the pack declares irregular: its lexicon's ``irregular`` and its
    mitigation's ``lexicon`` (feminine -> masculine). Only these are written whole (``irregular: full_word``); any
    other pair no ending alternation makes gets no doublet (a pair the rules do not know is not guessed)."""
    pairs = set(lang.lexicon.irregular.items()) if lang.lexicon else set()
    if lang.mitigation:
        pairs |= {(m, f) for f, m in lang.mitigation.lexicon.items()}
    return frozenset(pairs)


def doublet_word(m: str, f: str, rules: DoubletRules, style: str | None = None,
                 irregular: frozenset[tuple[str, str]] = frozenset()) -> str | None:
    """One word's doublet (``ingeniero``, ``ingeniera`` -> ``ingeniero/a``); None when the rules make none.
    irregular: the declared irregular pairs (``irregular_pairs``), written whole under ``irregular: full_word``."""
    if m == f:
        return m
    before, after = FORM_STYLES[style or rules.style]
    split = _split(m, f, rules.endings)
    if split is None:
        return f"{m}/{f}" if rules.irregular == "full_word" and (m, f) in irregular else None
    _, m_end, f_end = split
    if not f_end:  # the feminine is the shorter form: leitende*r
        return f"{f}{before}{m_end}{after}"
    return f"{m}{before}{f_end}{after}"


def doublet(masculine: str, feminine: str, rules: DoubletRules, style: str | None = None,
            irregular: frozenset[tuple[str, str]] = frozenset()) -> str | None:
    """The doublet of a confirmed pair (``ingeniero mecánico``, ``ingeniera mecánica`` -> ``ingeniero/a
    mecánico/a``) in the pack's canonical style or one of its declared ``variants``; None when no doublet is made."""
    if style is not None and style != rules.style and style not in rules.variants:
        raise BuildError(f"doublet style {style!r} is not declared for this language (style {rules.style!r}, "
                         f"variants {list(rules.variants)})")
    words = _aligned(masculine, feminine)
    if words is None:
        return None
    out = []
    for xs, ys in words:
        parts = [doublet_word(x, y, rules, style, irregular) for x, y in zip(xs, ys)]
        if any(p is None for p in parts):
            return None
        out.append("-".join(parts))
    return " ".join(out)


def neomorpheme_word(m: str, f: str, rules: NeomorphemeRules) -> str | None:
    if m == f:
        return m
    split = _split(m, f, rules.endings)
    if split is None:
        return None
    stem, _, _, n_end = split
    word = stem + n_end
    for written, respelled in rules.respell:
        if word.endswith(written) and not m.endswith(written):
            word = word[: len(word) - len(written)] + respelled
    return word


def neomorpheme(masculine: str, feminine: str, rules: NeomorphemeRules) -> str | None:
    """The neutral neomorpheme form of a confirmed pair (es ``ingeniero``/``ingeniera`` -> ``ingeniere``); None
    when a differing word has no declared neutral ending, or the result is one of the two forms."""
    words = _aligned(masculine, feminine)
    if words is None:
        return None
    out = []
    for xs, ys in words:
        parts = [neomorpheme_word(x, y, rules) for x, y in zip(xs, ys)]
        if any(p is None for p in parts):
            return None
        out.append("-".join(parts))
    text = " ".join(out)
    return None if text in (masculine, feminine) else text


def forms_of_pair(masculine: str, feminine: str, lang: Language) -> dict[str, str]:
    """form -> text of the extra forms the pack's rules make from one confirmed pair (possibly empty)."""
    out: dict[str, str] = {}
    if lang.forms is None or not masculine or not feminine:
        return out
    if lang.forms.doublet is not None:
        text = doublet(masculine, feminine, lang.forms.doublet, irregular=irregular_pairs(lang))
        if text:
            out[DOUBLET] = text
    if lang.forms.neomorpheme is not None:
        text = neomorpheme(masculine, feminine, lang.forms.neomorpheme)
        if text:
            out[NEOMORPHEME] = text
    return out


def rule_name(lang: Language, form: str) -> str:
    """The check_method of an extra-form item: which pack rule made it (``forms:es-doublet``)."""
    return f"forms:{lang.code}-{form}"


def form_item_id(form: str, text: str) -> str:
    return f"{form}:{'_'.join(text.split())}"


def form_items(processed: pl.DataFrame, items: pl.DataFrame, role: str, lang: Language, forms: tuple[str, ...],
               provenance: str) -> pl.DataFrame:
    """The extra-form items of one role: per source whose pair the gender layer confirmed (``PAIR_VERDICTS``,
    both titles present), the forms in ``forms``, deduplicated by (form, text) with the union of source ids.
    items: the role's masculine/feminine/neutral items, whose ``pair_id`` the new items take."""

    flag_col = "in_queries" if role == "queries" else "in_corpus"
    pair_of = {s: p for p, sids in items.select("pair_id", "source_ids").iter_rows() for s in sids}
    merged: dict[tuple[str, str], dict] = {}
    for row in processed.filter(pl.col(flag_col) & pl.col("verdict").is_in([v.value for v in PAIR_VERDICTS])).iter_rows(named=True):
        m, f = row["title_masculine"], row["title_feminine"]
        if not m or not f or row["source_id"] not in pair_of:
            continue
        for form, text in forms_of_pair(m, f, lang).items():
            if form not in forms:
                continue
            it = merged.setdefault((form, text), {"sources": {}, "pairs": set(), "flags": set(),
                                                  "origin": ItemSources()})
            it["sources"][row["source_id"]] = row["source_text"]
            it["pairs"].add(pair_of[row["source_id"]])
            it["flags"].update(row["flags"])
            # status and provenance as the pair's own items have them (builder/provenance.py)
            it["origin"].add(row, None, row.get("provenance") or provenance)
    rows = []
    for (form, text), it in sorted(merged.items()):
        if len(it["pairs"]) > 1:
            # One text from pairs of two occupations (two sources whose items never met): which pair it belongs
            # to is undecidable, so it is left out rather than guessed.
            continue
        sids = sorted(it["sources"])
        rows.append({
            "id": form_item_id(form, text),
            "text": text,
            "gender": INCLUSIVE,
            "form": form,
            "pair_id": next(iter(it["pairs"])),
            "source_ids": sids,
            "source_texts": [it["sources"][s] for s in sids],
            "check_gender": INCLUSIVE,
            "check_method": rule_name(lang, form),
            "check_ok": True,
            "flags": sorted(it["flags"]),
            "status": it["origin"].status,
            "provenance": it["origin"].provenance(provenance),
        })
    return pl.DataFrame(rows, schema=ITEM_SCHEMA)


def add_forms(queries: pl.DataFrame, corpus: pl.DataFrame, processed: pl.DataFrame, lang: Language,
              settings: FormsSettings, provenance: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The queries with the extra forms of ``settings.queries``, the corpus with the doublet items when
    ``settings.corpus`` (the build's hook, builder/build.py)."""
    if lang.forms is None:
        return queries, corpus
    if settings.queries:
        queries = pl.concat([queries, form_items(processed, queries, "queries", lang, settings.queries, provenance)])
    if settings.corpus and lang.forms.doublet is not None:
        corpus = pl.concat([corpus, form_items(processed, corpus, "corpus", lang, (DOUBLET,), provenance)])
    return queries.sort("id"), corpus.sort("id")


def forms_counts(items: pl.DataFrame) -> dict[str, int]:
    """Items per extra form (stats.json ``queries.forms`` / ``corpus.forms``)."""
    per = dict(items.filter(pl.col("form").is_in(EXTRA_FORMS)).group_by("form").len().iter_rows())
    return {f: int(per.get(f, 0)) for f in EXTRA_FORMS}


def describe_forms(stats: dict) -> str:
    """One line per built language for the build's summary."""
    q, c = (stats.get("queries") or {}).get("forms"), (stats.get("corpus") or {}).get("forms")
    if q is None:
        return f"{stats['lang']}: no doublet or neomorpheme forms declared (languages/packs/{stats['lang']}.yaml forms:)"
    line = f"{stats['lang']}: extra query forms: " + ", ".join(f"{n} {f}" for f, n in q.items())
    if c and any(c.values()):
        line += "; corpus: " + ", ".join(f"{n} {f}" for f, n in c.items() if n)
    return line
