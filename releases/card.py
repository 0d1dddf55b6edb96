"""The dataset card (README.md) of a release: a YAML header that Hugging Face `datasets` reads (one config
per language) and the text a researcher needs to use and cite the benchmark honestly."""

from __future__ import annotations

import json

import polars as pl
import yaml

from eval.testset import (ESCO_FAMILY, FEMININE, MASCULINE, NEUTRAL, ORIGINS, STATUS_CORRECTED, STATUS_REVIEWED,
                          TestSet, item_origins)
from languages import Language

SOURCE_DATASET = {
    "name": "Job Title Similarity dataset (English)",
    "repository": "https://github.com/Avature/jobtitlesimilarity-dataset",
    "commit": "2b9495dab922de9abe81a33d334e0d3a1d5fffaa",
    "licence": "Apache-2.0",
    "attribution": (
        "Zbib et al. (2022), *Learning Job Titles Similarity from Noisy Skill Labels*, and "
        "Deniz et al. (2024), *Combined Unsupervised and Contrastive Learning for Multilingual Job "
        "Recommendations* (Avature)"
    ),
}

METHOD_PAPER = (
    "García-Sardiña, Fabregat, Deniz and Zbib (2025), *Measuring Gender Bias in Job Title Matching for "
    "Grammatical Gender Languages*"
)

# The translator the paper used; counts from any other translator are not expected to match its Table 1.
PAPER_TRANSLATOR = "google"

# The ESCO family's source where its sets were read from MELO's files (stats.json esco.layout melo; builder/esco.py
# pins that commit, and each set's esco.origin names its first 12 digits and its dataset).
MELO_SOURCE = {
    "name": "MELO benchmark",
    "repository": "https://github.com/Avature/melo-benchmark",
    "commit": "014982fef0abf5149b16e75b1043bd286ae4c98f",
    "licence": "MIT",
    "attribution": ("Retyk et al. (2024), *MELO: An Evaluation Benchmark for Multilingual Entity Linking of "
                    "Occupations*"),
}



def qrels_config(lang: str) -> str:
    return f"{lang}-qrels"


def esco_config(lang: str) -> str:
    """The `datasets` config of an ESCO set in the release's card (in the family's own card: ``lang``)."""
    return f"{ESCO_FAMILY}-{lang}"


def _configs(languages: list[str], folder: str = "", name=lambda lang: lang) -> list[dict]:
    configs = []
    for lang in languages:
        configs.append({"config_name": name(lang), "data_files": [
            {"split": "queries", "path": f"{folder}{lang}/queries.parquet"},
            {"split": "corpus", "path": f"{folder}{lang}/corpus.parquet"},
        ]})
        configs.append({"config_name": qrels_config(name(lang)), "data_files": [
            {"split": "test", "path": f"{folder}{lang}/qrels.parquet"},
        ]})
    return configs


def card_header(languages: list[str], esco_languages: list[str] = ()) -> dict:
    """The card's YAML header; a release with the ESCO family also declares its sets (``esco-<lang>``) and the
    licence ESCO's labels come under."""
    header = {
        "license": "apache-2.0",
        "language": list(languages),
        "pretty_name": "Gendered job titles",
        "task_categories": ["text-retrieval"],
        "tags": ["gender-bias", "job-titles", "grammatical-gender", "fairness"],
        "configs": _configs(languages),
    }
    if esco_languages:
        header.update({"license": ["apache-2.0", "cc-by-4.0"],
                       "language": list(dict.fromkeys([*languages, *esco_languages])),
                       "tags": [*header["tags"], "esco"],
                       "configs": header["configs"] + _configs(esco_languages, f"{ESCO_FAMILY}/", esco_config)})
    return header


def _counts(items: pl.DataFrame) -> dict[str, int]:
    by_gender = dict(items.group_by("gender").len().iter_rows())
    return {g: int(by_gender.get(g, 0)) for g in (MASCULINE, FEMININE, NEUTRAL)}


def _route_lines(s: dict) -> list[str]:
    """Which titles came from which route (builder/reference.py): the dataset's own translation, the MT route, none."""
    translator = f"`{s.get('translator', 'not recorded')}` version `{s.get('translator_version', 'not recorded')}`"
    if s.get("source") == "esco":  # builder/esco.py: labels written by people, no translation (docs/esco.md)
        e = s.get("esco") or {}
        dropped = e.get("dropped") or {}
        origin = f"; {e['origin']}" if e.get("origin") else ""  # the layout read: ESCO's CSV download, MELO's copy
        return [f"- Source: ESCO {e.get('version', '?')} (`{e.get('file', '?')}`, SHA-256 `{e.get('sha256', '?')}`, "
                f"{e.get('occupations', '?')} occupations{origin}): masculine/feminine pairs from the labels ESCO publishes in "
                f"both forms, each confirmed by the gender layer ({sum(dropped.values())} labels or candidate pairs "
                f"dropped with a reason); corpus: {e.get('corpus_design_meaning', '?')}. No machine translation.",
                f"- Relevance: {e.get('relevance', 'not recorded')}.",
                f"- Licence and attribution: {e.get('licence', 'not recorded')}"]
    if s.get("route") != "reference":
        return [f"- Route: machine translation of every English title with the templates; translator {translator}."]
    a, r = s.get("alignment") or {}, s.get("routes") or {}
    lines = [f"- Route: the source dataset's own translation of the titles (translated by {a.get('translated_by', '?')}), "
             f"aligned to the English ids (relevance graph and `{a.get('encoder', '?')}` similarity; "
             f"{a.get('queries', {}).get('aligned', '?')}/{a.get('queries', {}).get('total', '?')} queries and "
             f"{a.get('corpus', {}).get('aligned', '?')}/{a.get('corpus', {}).get('total', '?')} corpus titles aligned "
             f"confidently): {r.get('reference', 0)} English ids have the given title (provenance `reference:{s.get('lang')}`), "
             f"the other form made by the gender layer."]
    if r.get("mt"):
        lines.append(f"- {r['mt']} English ids without a confident alignment were machine-translated instead: translator {translator}.")
    if r.get("none"):
        lines.append(f"- {r['none']} English ids without a confident alignment have no item (no offline translator for this language).")
    return lines


def _agreement_line(figures: list[dict] | None) -> list[str]:
    """The annotators' agreement (releases.make.read_agreement): Krippendorff's alpha and Cohen's kappa per
    question, over the records two or more annotators answered."""
    if figures is None:
        return []
    if not figures:
        return ["- Annotator agreement: not measured (no record was answered by two annotators)."]

    def value(v) -> str:
        return "n/a" if v is None else v if isinstance(v, str) else f"{v:.2f}"

    parts = [f"{f['kind']}{' ' + f['round'] if f.get('round') else ''} `{f['question']}`: {f['records']} records, "
             f"alpha {value(f['alpha'])}, kappa {value(f['kappa'])}" for f in figures]
    return [f"- Annotator agreement (records with two or more annotators): {'; '.join(parts)}."]


# What each origin of item_origins means in the card (given: who translated the dataset's own titles).
ORIGIN_WORDS = {
    "given": "the dataset's own translation as given",
    "gender_layer": "made by the gender layer from the other form",
    "machine_translation": "machine translation as output",
    "esco": "ESCO's labels as published",
    "term_rule": "changed by a reviewed term rule",
    "person": "corrected by a person in Argilla",
    "review": "read and corrected or confirmed by the maintainers' review",
}


def origins_line(items: pl.DataFrame, translated_by: str | None) -> str:
    """Where the items' texts come from, each item counted once (eval.testset.item_origins)."""
    counts = item_origins(items)
    words = dict(ORIGIN_WORDS)
    if translated_by:
        words["given"] = f"the dataset's own translation (by {translated_by}) as given"
    parts = [f"{words[k]} {counts[k]}" for k in ORIGINS if counts[k]]
    return f"- Where the {items.height} items' texts come from: " + "; ".join(parts) + "."


def _review_line(s: dict) -> list[str]:
    """The maintainers' review of the language (docs/review.md of the toolkit), from stats.json ``corrections``."""
    review = (s.get("corrections") or {}).get("review")
    if not review:
        return []
    return [f"- **Reviewed by the project's maintainers** (round {', '.join(review['rounds'])}): "
            f"{review['sources']} English ids read against the English title under a written rubric (docs/review.md of "
            f"the toolkit): {review['changed']} corrected, {review['kept']} confirmed as built, {review['dropped']} "
            "dropped as no person's job title. The maintainers are not native speakers (they are AI language-model "
            "agents working as reviewers); a native speaker's correction in Argilla replaces a review line."]


def _language_section(ts: TestSet, pack: Language, agreement: list[dict] | None = None) -> str:
    s = ts.stats
    items = pl.concat([ts.queries, ts.corpus])
    corrected = items.filter(pl.col("status") == STATUS_CORRECTED).height
    reviewed = items.filter(pl.col("status") == STATUS_REVIEWED).height
    check_failed = items.filter(~pl.col("check_ok").fill_null(False)).height
    methods = ", ".join(f"`{m}` ({n})" for m, n in items.group_by("check_method").len().sort("check_method").iter_rows())
    templates = s.get("templates")
    templates_text = json.dumps(templates, ensure_ascii=False) if templates is not None else "not recorded"
    name = pack.name
    quality = []
    if pack.experimental:
        quality.append(f"**Experimental.** A hand-checked sample is below 85% correct pairs"
                       + (f" ({pack.quality['sample']})" if pack.quality.get("sample") else "")
                       + (f"; main errors: {pack.quality['errors']}" if pack.quality.get("errors") else "") + ".")
    elif pack.quality.get("sample"):
        quality.append(f"Hand-checked sample: {pack.quality['sample']}.")
    esco = s.get("source") == "esco"
    if esco:  # the pack's hand-checks are of its translated job titles, not of ESCO's labels
        quality = []
    lines = [
        f"### {name} (`{ts.lang}`)" + (" — experimental" if pack.experimental and not esco else ""),
        "",
        *([f"- {q}" for q in quality]),
        *_route_lines(s),
        f"- Templates: `{templates_text}`.",
        origins_line(items, (s.get("alignment") or {}).get("translated_by")),
        *_review_line(s),
        f"- Corrections by people in Argilla: {corrected} of {items.height} items have `status = corrected`; "
        f"{reviewed} have `status = reviewed` (the maintainers' review).",
        f"- Grammatical-gender check: decided by {methods or 'nothing'}; "
        f"{check_failed} items where the check does not agree with the gender label (`check_ok = false`).",
        f"- Self-match policy recorded by the build: `{s.get('self_match_policy', 'not recorded')}`"
        + (f" ({s['self_match_policy_meaning']})." if s.get("self_match_policy_meaning") else "."),
    ]
    corrections = s.get("corrections")
    if isinstance(corrections, dict):
        lines.append(f"- Corrections file applied: {corrections.get('translations', 0)} translation corrections, "
                     f"{corrections.get('relevance', 0)} relevance labels by annotators.")
        rules = corrections.get("rules")  # term rules (docs/FORMAT.md): only in a set built with at least one
        if isinstance(rules, dict):
            lines.append(f"- Term rules applied: {len(rules.get('rules') or [])} reviewed rule(s) changed the "
                         f"titles of {rules.get('sources_changed', 0)} English sources; their items have `status = "
                         "rule` (unless a person or the review decided them) and name the rule in `provenance` "
                         "(`…+rule:<id>`).")
    lines += _agreement_line(agreement)
    layer = s.get("gender_layer")
    if isinstance(layer, dict) and layer.get("method") == "lexicon" and esco:  # no translator, nothing re-inflected
        lines.append(f"- Gender decided by the lexicon `{layer.get('lexicon')}` and the word list `{layer.get('word_list')}`.")
    elif isinstance(layer, dict) and layer.get("method") == "lexicon":
        c = s.get("corpus", {})
        lines.append(f"- Gender decided by the lexicon `{layer.get('lexicon')}` and the word list `{layer.get('word_list')}`: "
                     f"{c.get('reinflected', 0)} corpus items were made by the lexicon from the other form (the "
                     f"translator's form named another thing or was not inflected); {c.get('masculine_only', 0)} "
                     f"occupations have a masculine form only and {c.get('feminine_only', 0)} a feminine form only.")
    elif isinstance(layer, dict):
        lines.append(f"- Gender decided by `{layer.get('method')}` (no lexicon declared for this language).")
    if "needs_review" in s and not esco:
        extra = (f" (uninflected feminine: {s['uninflected_feminine']})" if "uninflected_feminine" in s else "")
        lines.append(f"- English sources whose machine translation the build flagged for review: {s['needs_review']}{extra}.")
    lines.append("")
    return "\n".join(lines)


def _uninflected_line(testsets: list[TestSet]) -> str:
    counts = [(ts.lang, ts.stats["uninflected_feminine"]) for ts in testsets if ts.stats.get("uninflected_feminine")]
    if not counts:
        return ""
    listed = ", ".join(f"{n} in `{lang}`" for lang, n in counts)
    return ("- **Missing feminine forms**: where the translator did not inflect the feminine "
            f"({listed}), the occupation is kept with its masculine form only and has no pair to compare.\n")


def _table1(testsets: list[TestSet], packs: dict[str, Language]) -> str:
    """This release's counts, each language followed by the paper's row for it (where the paper has one)."""
    rows = [
        "| set | queries M/F | N | T | corpus M/F | N | T | qrels |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ts in testsets:
        q, c = ts.stats["queries"], ts.stats["corpus"]
        rows.append(f"| {ts.lang.upper()} | {q['pairs']} | {q['neutral']} | {q['titles']} | "
                    f"{c['pairs']} | {c['neutral']} | {c['titles']} | {ts.stats['qrels']} |")
        if packs[ts.lang].paper_table1 and not ts.stats.get("source"):  # the paper's rows are of job titles
            paper = " | ".join(str(n) for n in packs[ts.lang].paper_table1)
            rows.append(f"| {ts.lang.upper()}, paper (Google Translate) | {paper} | not given |")
    return "\n".join(rows)


def _unpaired_note(testsets: list[TestSet]) -> str:
    """T counts every unique title; titles whose other form is missing make T exceed 2 x M/F + N."""
    parts = []
    for ts in testsets:
        for part in ("queries", "corpus"):
            n = ts.stats[part]
            unpaired = n["titles"] - 2 * n["pairs"] - n["neutral"]
            if unpaired:
                parts.append(f"{unpaired} {part} titles in `{ts.lang}`")
    if not parts:
        return ""
    return ("\nT also counts titles without their other form (" + ", ".join(parts) + "): a form the translator "
            "failed or did not inflect leaves the other one unpaired, so T exceeds 2 × M/F + N.\n")


def _translator_note(testsets: list[TestSet]) -> str:
    translated = [ts for ts in testsets if not ts.stats.get("source")]  # an ESCO set has no translator
    if not translated:
        return ""
    others = sorted({str(ts.stats["translator"]) for ts in translated if ts.stats.get("translator")} - {PAPER_TRANSLATOR})
    if not others and not any(ts.stats.get("translator") for ts in translated):
        return "No translator made these titles (the dataset's own translations, read by the gender layer)."
    if not others:
        return "The translator is the paper's (Google Translate), but its output changes over time."
    return (f"The translators ({', '.join(f'`{t}`' for t in others)}) are not the paper's (Google Translate), so "
            "counts differ from the paper's Table 1.")


def beir_section(beir: dict[str, list[str]] | None) -> str:
    """The card's words on the BEIR/MTEB-shaped folders (releases/beir.py), "" for a release without them."""
    if not beir:
        return ""
    lang, names = next(iter(beir.items()))
    listed = "\n".join(f"- `{code}`: " + ", ".join(f"`{n}`" for n in configs) for code, configs in beir.items())
    return f"""
### The same sets in BEIR/MTEB's shape

Beside each language's files, `<lang>/beir/<query form>-queries_<corpus>-corpus/` holds one query form ranked
over one corpus as BEIR and MTEB loaders read it: `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl`
(`_id`, `text`), `qrels/test.tsv` (header `query-id corpus-id score`; the relevant pairs between the two). The
masculine corpus is the masculine + neutral titles, the feminine corpus the feminine + neutral ones, as above;
the ids are those of the files above. Every corpus title is ranked, so a harness's figures equal
`python -m eval run --self-match keep` (the toolkit's default drops a query's own translated title). Per language:

{listed}

```python
from beir.datasets.data_loader import GenericDataLoader
corpus, queries, qrels = GenericDataLoader("<this folder>/{lang}/beir/{names[0]}").load(split="test")
```
"""


def _esco_dataset(e: dict) -> str:
    """Where one ESCO set's labels were read: MELO's dataset folder, or the portal's file."""
    if e.get("layout") == "melo":
        return ", ".join(f"`{d}`" for d in sorted({str(k).split("/")[0] for k in e.get("files") or {}})) or "?"
    return f"`{e.get('file', '?')}`"


def _once_or_per_language(esco: list[TestSet], key: str) -> str:
    """A text each set records (stats.json ``esco.<key>``): said once when every set says the same."""
    values = {ts.lang: str((ts.stats.get("esco") or {}).get(key, "not recorded")) for ts in esco}
    if len(set(values.values())) == 1:
        return next(iter(values.values()))
    return "; ".join(f"`{lang}`: {text}" for lang, text in values.items())


def esco_family_section(esco: list[TestSet], packs: dict[str, Language], folder: str, config=esco_config) -> str:
    """What the ESCO family is, where it comes from, its licence, what relevance means and its counts: the
    release card's section on it (``folder`` = "esco/", configs ``esco-<lang>``) and the body of the family's own
    card (``folder`` = "", configs ``<lang>``)."""
    stats = {ts.lang: ts.stats.get("esco") or {} for ts in esco}
    rows = ["| set | ESCO version | read from | occupations | queries M/F | N | T | corpus M/F | N | T | qrels | "
            "queries without a relevant label |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for ts in esco:
        e, q, c = stats[ts.lang], ts.stats["queries"], ts.stats["corpus"]
        rows.append(f"| {ts.lang.upper()} | {e.get('version', '?')} | {_esco_dataset(e)} | {e.get('occupations', '?')} | "
                    f"{q['pairs']} | {q['neutral']} | {q['titles']} | {c['pairs']} | {c['neutral']} | {c['titles']} | "
                    f"{ts.stats['qrels']} | {e.get('queries_without_relevant', '?')} |")
    melo = [ts.lang for ts in esco if stats[ts.lang].get("layout") == "melo"]
    portal = [ts.lang for ts in esco if ts.lang not in melo]
    sources = []
    if melo:
        sources.append(f"ESCO's labels as the {MELO_SOURCE['name']} publishes them ({MELO_SOURCE['attribution']}): "
                       f"{MELO_SOURCE['repository']} at commit `{MELO_SOURCE['commit']}`, one dataset per language "
                       f"(column *read from*), each file checked against its pinned SHA-256 (recorded in each set's "
                       f"`stats.json`, `esco.files`); the repository is {MELO_SOURCE['licence']}-licensed, the labels "
                       f"are ESCO's ({', '.join(f'`{lang}`' for lang in melo)})")
    if portal:
        sources.append(f"ESCO's CSV download ({', '.join(f'`{lang}`' for lang in portal)}; the file and its SHA-256 in "
                       "`stats.json`)")
    first = esco[0].lang
    where = f"<this folder>/{folder}".rstrip("/")
    return f"""
Test sets of ESCO's occupation labels, which ESCO publishes written by people in both genders (de
*Altenpfleger/Altenpflegerin*, pt *Enfermeiro especialista/Enfermeira especialista*): no translation is
involved. The masculine/feminine pairs are ESCO's own, each confirmed by the language's gender layer (the others
are dropped and counted in `stats.json`, `esco.dropped`); the files are those of the job-title sets
(`<lang>/queries.parquet`, `corpus.parquet`, `qrels.tsv`, `qrels.parquet`, `stats.json`). Languages:
{", ".join(f"{packs[ts.lang].name} (`{ts.lang}`)" for ts in esco)}.

- **Source**: {"; ".join(sources)}.
- **ESCO version**: each set records its own (`stats.json` `esco.version`; every item's `provenance` is
  `esco:<version>:<lang>`), in the table below.
- **Queries**: one per ESCO occupation: the two forms of its preferred label as a pair, or its common-gender
  preferred label as one neutral query. **Corpus**: {_once_or_per_language(esco, "corpus_design_meaning")}.
- **Relevance**: {_once_or_per_language(esco, "relevance")}. A query whose occupation has no other label has no
  relevant document (column *queries without a relevant label*): it counts in the symmetry measures, not in MAP.
- **Licence**: {_once_or_per_language(esco, "licence")}.

{chr(10).join(rows)}

```python
import datasets
items = datasets.load_dataset("<this folder>", "{config(first)}")          # splits: queries, corpus
qrels = datasets.load_dataset("<this folder>", "{qrels_config(config(first))}")    # split: test
```

or `python -m eval run --data {where} --model tfidf-char --lang {first} --out results/esco` (the folder
`{where}` is a test-set root like the release's).
"""


def _esco_intro(esco: list[TestSet] | None) -> str:
    if not esco:
        return ""
    return (f"- A second family, ESCO's occupation labels written by people in both genders (no translation): "
            f"`{ESCO_FAMILY}/<lang>/` for {', '.join(f'`{ts.lang}`' for ts in esco)}, with its own card "
            f"`{ESCO_FAMILY}/README.md` (section *The ESCO family* below).\n")


def _esco_part(esco: list[TestSet] | None, packs: dict[str, Language]) -> str:
    if not esco:
        return ""
    return (f"\n## The ESCO family (`{ESCO_FAMILY}/`)\n" + esco_family_section(esco, packs, f"{ESCO_FAMILY}/")
            + f"\nHow each ESCO language was built (drops per reason, gender-check methods): `{ESCO_FAMILY}/README.md`.\n")


def _esco_licence(esco: list[TestSet] | None) -> str:
    if not esco:
        return ""
    melo = any((ts.stats.get("esco") or {}).get("layout") == "melo" for ts in esco)
    return (f"\nThe ESCO family (`{ESCO_FAMILY}/`): {_once_or_per_language(esco, 'licence')}."
            + (f" Read from the {MELO_SOURCE['name']} ({MELO_SOURCE['attribution']}), {MELO_SOURCE['repository']} at "
               f"commit `{MELO_SOURCE['commit']}`, {MELO_SOURCE['licence']}." if melo else "") + "\n")


def render_family_card(version: str, tag: str, esco: list[TestSet], toolkit_version: str,
                       packs: dict[str, Language], beir: dict[str, list[str]] | None = None) -> str:
    """``esco/README.md``: the ESCO family's own card; ``esco/`` loads with `datasets` as the release does (one
    config per language)."""
    header = {"license": "cc-by-4.0", "language": [ts.lang for ts in esco],
              "pretty_name": "Gendered job titles: ESCO occupation labels", "task_categories": ["text-retrieval"],
              "tags": ["gender-bias", "job-titles", "grammatical-gender", "fairness", "esco"],
              "configs": _configs([ts.lang for ts in esco])}
    per_language = "\n".join(_language_section(ts, packs[ts.lang]) for ts in esco)
    return f"""---
{yaml.safe_dump(header, sort_keys=False, allow_unicode=True)}---

# Gendered job titles — release {version}: the ESCO family

The second family of test sets of release `{version}` (git tag `{tag}`, made with gendered-job-titles
{toolkit_version}); the job-title sets and the metrics are described in `../README.md`, and every file here is
listed with its SHA-256 in `../manifest.json`.
{esco_family_section(esco, packs, "", lambda lang: lang)}{beir_section(beir)}
## How each language was built

{per_language}
## Licence and attribution

{_once_or_per_language(esco, "licence")}.
""" + (f"""Read from the {MELO_SOURCE['name']} by {MELO_SOURCE['attribution']}, {MELO_SOURCE['repository']} at commit
`{MELO_SOURCE['commit']}` ({MELO_SOURCE['licence']}).
""" if any((ts.stats.get("esco") or {}).get("layout") == "melo" for ts in esco) else "")


def render_card(version: str, tag: str, testsets: list[TestSet], toolkit_version: str,
                packs: dict[str, Language], agreement: dict[str, list[dict] | None] | None = None,
                beir: dict[str, list[str]] | None = None, esco: list[TestSet] | None = None) -> str:
    """The card depends only on the release's inputs (no commit, no date): the same data gives the same bytes
    at every commit, as `dvc repro` needs; the commit is the tag's. packs: each language's declaration (name,
    the paper's Table-1 row); beir: each language's BEIR/MTEB-shaped configurations, when the release has them;
    esco: the ESCO family's sets (``esco/``), when the release carries it (a release without has the card it had)."""
    languages = [ts.lang for ts in testsets]
    header = yaml.safe_dump(card_header(languages, [ts.lang for ts in esco or []]), sort_keys=False, allow_unicode=True)
    per_language = "\n".join(_language_section(ts, packs[ts.lang], (agreement or {}).get(ts.lang)) for ts in testsets)
    machine_langs = [ts.lang for ts in testsets if not ts.stats.get("source")
                     and pl.concat([ts.queries, ts.corpus]).filter(
                         ~pl.col("status").is_in([STATUS_CORRECTED, STATUS_REVIEWED])).height]
    first = languages[0]
    return f"""---
{header}---

# Gendered job titles — release {version}

A benchmark of **gender bias in job-title matching** for grammatical-gender languages, following the
method of {METHOD_PAPER}. Every English job title was translated twice, once with a masculine and once
with a feminine template; a matcher should rank the corpus the same way for *abogado* and *abogada*.

- Version: `{version}`, git tag `{tag}` of the toolkit's repository (the commit that records this release
  in `dvc.lock` and `published.json`), made with gendered-job-titles {toolkit_version}.
- Languages: {", ".join(f"{packs[lang].name} (`{lang}`)" for lang in languages)}.
{_esco_intro(esco)}- Every file, with its SHA-256 and row count, is listed in `manifest.json`;
  check a copy with `python -m releases verify <this folder> --against {tag}` in a clone of the toolkit.

## Use

```python
import datasets
items = datasets.load_dataset("<this folder>", "{first}")             # splits: queries, corpus
qrels = datasets.load_dataset("<this folder>", "{qrels_config(first)}")       # split: test
```

or evaluate a model with the toolkit: `python -m eval run --data <this folder> --model tfidf-char --lang {first} --out results`.

Files per language `<lang>/`: `queries.parquet`, `corpus.parquet` (one row per unique title per gender:
`id`, `text`, `gender` = masculine | feminine | neutral | inclusive, `form` = masculine | feminine | neutral |
doublet | neomorpheme (the job-ad doublet *abogado/a* and the neutral neomorpheme *abogade*, gender inclusive,
in neither gendered corpus), `pair_id` linking the forms of one occupation,
`source_ids`/`source_texts` (the English titles), the gender check `check_gender`/`check_method`/`check_ok`,
`flags`, `status` = machine | rule | corrected | reviewed, `provenance`), `qrels.tsv` (trec qrels `query_id 0 doc_id relevance`,
relevant pairs only), `qrels.parquet` (the same rows for `datasets`), `stats.json` (the build's counts,
translator and templates). The format is described in `docs/FORMAT.md` of the toolkit.
{beir_section(beir)}
## Counts (the paper's Table 1)

M/F = masculine/feminine pairs, N = neutral titles (both forms identical), T = unique titles; the paper's
rows are its Table 1 (García-Sardiña et al. 2025), built with Google Translate and, for ES, human review.

{_table1(testsets, packs)}
{_unpaired_note(testsets)}{_esco_part(esco, packs)}
## How each language was built

{per_language}
## Metrics to use

Rank the whole corpus for each masculine and each feminine query of a pair, over the **masculine corpus**
(masculine + neutral titles) and over the **feminine corpus** (feminine + neutral titles).

- **Symmetry, AO** (the paper's "RBO"): `AO = (1/k) Σ_{{d=1..k}} |S_:d ∩ T_:d| / d` over the full ranking
  (k = corpus size) of the feminine query S and the masculine query T, averaged over pairs. It equals
  the `rbo` package with p = 1.0. AO of a list and its reverse tends to 1 − ln 2 ≈ 0.307, not 0.5.
- **Symmetry, RBO_ext(p=0.98)**: rank-biased overlap, extrapolated (Webber, Moffat & Zobel 2010, eq. 32),
  the top-weighted score.
- **MAP** per query gender and corpus, with trec_eval semantics: ties broken by score descending then
  document id descending; a query absent from a run scores 0; relevant documents never retrieved count.
- **Parity**: the gap in a quality metric (MAP) between feminine and masculine queries.
- Report n (pairs or queries) and a bootstrap 95% interval over queries with every number, and the
  self-match policy (a query's own English title in the corpus).

## Known limitations

- **Inclusive forms are made by rule**: the doublet (*abogado/a*) and neomorpheme (*abogade*) queries are
  written by the language's declared rules from a checked masculine/feminine pair (docs/forms.md of the
  toolkit), not by people; the neomorpheme is a proposal in use, not the standard language.
- **Unreviewed items**: {", ".join(f"`{lang}`" for lang in machine_langs) or "no language"}
  contain items that neither a person nor the maintainers' review read (given or machine translations and the
  forms the gender layer made from them; counts per language above); expect wrong senses, calques, untranslated
  English and uninflected feminines among them. {_translator_note(testsets)}
{_uninflected_line(testsets)}- The gender of each unreviewed title was decided automatically by the language's gender layer (the lexicon and
  word list named per language above); it can be wrong, and items where it disagrees are kept and marked
  `check_ok = false`.
- **The review is not a native speakers' review**: the maintainers who read every title are AI language-model
  agents, working to a written rubric with a second independent reading of 10% (agreement per language above).
  Native speakers are invited to correct titles through the Argilla loop (docs/annotation.md of the toolkit);
  their corrections replace the review's.
- Relevance labels are carried over from the English dataset (binary, relevant pairs only) unless a person
  relabelled them; the English source covers job titles of one market and is not exhaustive.

## Licence and attribution

Released under Apache-2.0. Derived from the {SOURCE_DATASET['name']} by {SOURCE_DATASET['attribution']},
licensed {SOURCE_DATASET['licence']}: {SOURCE_DATASET['repository']} at commit `{SOURCE_DATASET['commit']}`.
{_esco_licence(esco)}
## How to cite

Cite the method paper, the English source dataset, and this release with its version:

```bibtex
@misc{{garcia-sardina2025gendered,
  title  = {{Measuring Gender Bias in Job Title Matching for Grammatical Gender Languages}},
  author = {{Garc{{\\'\\i}}a-Sardi{{\\~n}}a, Laura and Fabregat, Hermenegildo and Deniz, Daniel and Zbib, Rabih}},
  year   = {{2025}}
}}
@misc{{gendered-job-titles-{version.replace('.', '-')},
  title  = {{Gendered job titles, release {version}}},
  note   = {{git tag {tag}}}
}}
```

and the English dataset: {SOURCE_DATASET['attribution']}.
"""
