"""One language end to end: source -> translate -> postprocess -> the test set in ``<out>/<lang>/``."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
from pathlib import Path

import polars as pl

from builder.cache import TranslationCache
from builder.corrections import check_source_ids, read_corrections, rules_path_of
from builder.corrections import FLAG_MEANINGS as CORRECTION_FLAG_MEANINGS
from builder.errors import BuildError
from builder.forms import add_forms, forms_settings
from builder.layers import layer_info
from builder.params import language_for, load_params, route_for, strip_pattern_for, templates_for
from builder.reference import ALIGNMENT_FILE, ALIGNMENT_SCHEMA
from builder.rules import apply_rules, rules_stats, written_forms
from builder.postprocess import (
    REVIEW_FLAGS, SELF_MATCH_POLICIES, TRANSLATIONS_COLUMNS, derive_qrels, build_items, process_translations,
)
from builder.verdict import BUILD_FLAGS, NEEDS_REVIEW, Verdict
from builder.source import EnglishSource, load_source
from builder.translate import check_raw_matches_source, translate_source
from builder.translators import WebSettings, make_translator
from config.files import hidden_sibling, write_folder_atomically
from eval.testset import REQUIRED_FILES, TestSet, table1_counts, write_testset
from languages import Language

RAW_FILE = "raw_translations.parquet"
ALIGNMENT_SUMMARY = "alignment.json"  # the reference route's alignment figures (builder/reference.py)
DEFAULT_CACHE_DIR = Path("cache")
# Every file the builder writes into <out>/<lang>/: translate's, then postprocess's (the test set and its working
# files). Each replaces the folder whole, so each may replace what the other wrote, and nothing else.
LANGUAGE_FOLDER = re.compile("|".join(map(re.escape, (
    RAW_FILE, ALIGNMENT_FILE, ALIGNMENT_SUMMARY, "templates.json", "translations.parquet", *REQUIRED_FILES,
    "stats.json",
    ".gitignore"))))  # DVC's, written beside a stage's file outputs where the repository does not ignore data/


# The folder whose ``<lang>.jsonl`` a build without --corrections applies: $GJT_CORRECTIONS_DIR, else corrections/.
CORRECTIONS_DIR_ENV = "GJT_CORRECTIONS_DIR"


def corrections_dir() -> Path:
    return Path(os.environ.get(CORRECTIONS_DIR_ENV) or "corrections")


def default_corrections(lang: str) -> Path | None:
    """``<corrections dir>/<lang>.jsonl`` when it or its term rules (``<lang>.rules.jsonl``) exist."""
    p = corrections_dir() / f"{lang}.jsonl"
    return p if p.is_file() or rules_path_of(p).is_file() else None


def web_settings(build: dict, libre_url: str | None = None) -> WebSettings:
    """``build`` as load_params gives it (every default filled in, builder/params.py)."""
    web = build["web"]
    return WebSettings(
        concurrency=int(web["concurrency"]), retries=int(web["retries"]),
        timeout_s=float(web["timeout_s"]), backoff_s=float(web["backoff_s"]),
        libre_url=libre_url or web.get("libre_url"),
    )


def run_translate(source: EnglishSource, lang: Language | str, translator_name: str | None, out: Path, cache_dir: Path,
                  params: dict, libre_url: str | None = None, progress: bool = True, route: str | None = None) -> pl.DataFrame:
    """lang: the declaration (a code is resolved here, once). route: ``mt`` | ``reference`` (default: params.yaml
    build.route, else the pack's). On the reference route the translator (None: none) takes the ids the
    alignment does not cover confidently."""
    lang = language_for(params, lang)
    route = route_for(params, lang, route)
    if route == "mt" and not translator_name:
        raise BuildError(f"no translator for {lang.code!r} on the MT route: pass --translator, set translator: in "
                         f"{lang.path} or build.translator.{lang.code} in params.yaml")
    build = params["build"]
    templates = templates_for(build, lang, translator_name) if translator_name else {}
    if route == "reference":
        from builder.reference import align_reference, alignment_frame, alignment_summary, \
            fallback_ids, load_reference, mt_drafts, reference_raw, sub_source
        from builder.translators import OFFLINE

        reference = load_reference(source, lang, params["source"].get("base_url"))
        # An offline translator translates every title first: its title is a draft the alignment reads
        # (builder/align.py), and the ids the alignment leaves take the MT route with it. A web translator (paid
        # per character) translates only those ids, and the alignment goes without drafts.
        offline = bool(translator_name) and all(step in OFFLINE for step in translator_name.split(">"))
        mt_all = _translate(source, lang, translator_name, templates, cache_dir, build, libre_url, progress) \
            if offline else None
        drafts = mt_drafts(mt_all, strip_pattern_for(build, lang), lang.code) if mt_all is not None else None
        alignment = align_reference(source, reference, cache_dir, progress=progress, drafts=drafts)
        rest = fallback_ids(alignment, source)
        if mt_all is not None:
            mt_raw = mt_all.filter(pl.col("source_id").is_in(rest)) if rest else None
        else:
            mt_raw = _translate(sub_source(source, rest), lang, translator_name, templates, cache_dir, build, libre_url,
                                progress) if translator_name and rest else None
        raw = reference_raw(source, reference, alignment, mt_raw)
        alignment_rows = alignment_frame(alignment, source, reference)
        summary = {"route": "reference"} | alignment_summary(alignment) | {
            "reference": str(reference.folder), "translated_by": reference.translated_by, "sha256": reference.sha256,
            "fallback_ids": len(rest), "fallback": translator_name or None, "mt_drafts": len(drafts or {})}
    else:
        raw = _translate(source, lang, translator_name, templates, cache_dir, build, libre_url, progress)
        # The same files on every route, so a pipeline stage declares one set of outputs.
        alignment_rows = pl.DataFrame(schema=ALIGNMENT_SCHEMA)
        summary = {"route": "mt"}

    def fill(tmp: Path) -> None:
        # The folder is replaced whole: a test set made from the previous translations does not survive
        # beside new ones (postprocess writes the next one).
        raw.write_parquet(tmp / RAW_FILE)
        alignment_rows.write_parquet(tmp / ALIGNMENT_FILE)
        (tmp / ALIGNMENT_SUMMARY).write_text(json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        (tmp / "templates.json").write_text(json.dumps(templates, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")

    write_folder_atomically(Path(out) / lang.code, fill, ours=LANGUAGE_FOLDER)
    return raw


def _translate(source: EnglishSource, lang: Language, translator_name: str, templates: dict, cache_dir: Path,
               build: dict, libre_url: str | None, progress: bool) -> pl.DataFrame:
    """The MT route: every title of ``source`` with both templates, through the translation cache."""
    translator = make_translator(translator_name, lang, web_settings(build, libre_url))
    batch = int(build.get("batch_size", {}).get(translator_name, 32))
    if hasattr(translator, "steps"):
        translator.batch_sizes = dict(build.get("batch_size", {}))  # each step of a chain keeps its own batch size
    cache = TranslationCache(Path(cache_dir) / "translations.sqlite")
    try:
        return translate_source(source, translator, templates, cache, batch_size=batch, progress=progress)
    finally:
        cache.close()


# What stats.json's ``version`` means (eval.testset.testset_version names results by it).
VERSION_FROM = ("builder postprocess --version: the release version this set is built as (dvc repro passes "
                "params.yaml release.version; the release stage packs the set under that version only)")


def _refuse_undocumented_flags(*frames: pl.DataFrame) -> None:
    """A flag reaches the files only with its meaning: builder/verdict.py BUILD_FLAGS, or a correction's flag
    (builder/corrections.py FLAG_MEANINGS, which a source's flags carry when a correction line gives one); both
    shown in docs/FORMAT.md."""
    found = set()
    for frame in frames:
        found |= set(frame.select(pl.col("flags").explode().drop_nulls()).to_series().to_list())
    unknown = sorted(found - set(BUILD_FLAGS) - set(CORRECTION_FLAG_MEANINGS))
    if unknown:
        raise BuildError(f"builder bug: flag(s) {unknown} have no meaning in builder/verdict.py BUILD_FLAGS; "
                         "add them there and to docs/FORMAT.md")


def run_postprocess(source: EnglishSource, language: Language | str, out: Path, params: dict,
                    corrections_path: Path | None, translations_dir: Path | None = None,
                    cache_dir: Path = DEFAULT_CACHE_DIR, version: str | None = None) -> dict:
    """``translations_dir``: where raw_translations.parquet and templates.json are read (default: the output
    folder ``<out>/<lang>``); the set written to ``<out>/<lang>`` carries copies of them. language: the
    declaration (a code is resolved here, once). ``version``: the release version X.Y.Z the set is built as
    (the pipeline's: params.yaml release.version), recorded in stats.json as ``version`` for results to name;
    None records none."""
    language = language_for(params, language)
    lang = language.code
    folder = Path(translations_dir) if translations_dir else Path(out) / lang
    raw_path = folder / RAW_FILE
    if not raw_path.is_file():
        raise BuildError(f"{raw_path}: no raw translations; run `python -m builder translate --lang {lang}` first")
    try:
        raw = pl.read_parquet(raw_path)
        templates = json.loads((folder / "templates.json").read_text(encoding="utf-8"))
    except Exception as exc:  # polars and json raise several error types for unreadable files
        raise BuildError(f"{raw_path.parent}: unreadable translations ({type(exc).__name__}: {exc}); rerun "
                         f"`python -m builder translate --lang {lang}`") from None
    check_raw_matches_source(raw, source, raw_path)
    build = params["build"]
    policy = build["self_match_policy"]
    corrections = read_corrections(corrections_path, lang)
    check_source_ids(corrections, source.queries, source.corpus)
    processed = process_translations(raw, language, strip_pattern_for(build, language), corrections,
                                     lexicon_cache=Path(cache_dir) / "lexicon.sqlite")
    # The term rules (builder/rules.py) on the titles the build decided: also on titles new since a rule was written.
    processed, rule_results = apply_rules(processed, corrections.rules, {
        sid: written_forms(c.masculine, c.feminine) for sid, c in corrections.translations.items()})
    routes = dict(sorted(raw["route"].value_counts().iter_rows())) if "route" in raw.columns else {"mt": raw.height}
    route = "reference" if "reference" in routes else "mt"
    mt_rows = raw.filter(pl.col("route") == "mt") if "route" in raw.columns else raw
    translator, translator_version = ((mt_rows["translator"][0], mt_rows["translator_version"][0]) if mt_rows.height
                                      else (None, None))
    provenance = f"{translator}:{translator_version}" if route == "mt" else f"reference:{lang}"
    # Each source's own route names its items' origin: reference:<lang> or the MT translator and version.
    processed = processed.with_columns(provenance=pl.when(pl.col("translator").str.starts_with("reference:"))
                                       .then(pl.col("translator"))
                                       .otherwise(pl.col("translator") + ":" + pl.col("translator_version")))
    queries = build_items(processed, "queries", provenance)
    corpus = build_items(processed, "corpus", provenance)
    queries, corpus = add_forms(queries, corpus, processed, language, forms_settings(params), provenance)
    qrels, qrels_info = derive_qrels(queries, corpus, source.qrels, corrections, policy)
    verdicts = dict(sorted(processed.group_by("verdict").len().iter_rows()))
    flags = processed.select(pl.col("flags").explode().drop_nulls()).to_series().value_counts()
    _refuse_undocumented_flags(processed, queries, corpus)
    stats = {
        "lang": lang,
        "route": route,
        "routes": routes,  # English ids per route: reference (the given title), mt (MT fallback), none (no item)
        "alignment": _alignment_summary(folder) if route == "reference" else None,
        "translator": translator,
        "translator_version": translator_version,
        "templates": templates,
        "strip_pattern": strip_pattern_for(build, language),
        "self_match_policy": policy,
        "self_match_policy_meaning": SELF_MATCH_POLICIES[policy],
        "queries": table1_counts(queries),
        "corpus": table1_counts(corpus),
        "qrels": qrels.height,
        "qrels_identical_text": qrels_info["identical_text_pairs"],
        "english": {"queries": len(source.queries), "corpus": len(source.corpus), "qrels": len(source.qrels),
                    # relevant pairs whose query or document title gave no item (failed or dropped translations)
                    "qrels_lost": len(qrels_info["english_pairs_lost"]),
                    "qrels_lost_examples": [f"{q} -> {d}" for q, d in qrels_info["english_pairs_lost"][:10]]},
        "verdicts": verdicts,
        # sources still to review: a review verdict or flag, and nobody (a person, the maintainers' review) decided them
        "needs_review": int(processed.select(
            (pl.col("verdict").is_in(sorted(v.value for v in NEEDS_REVIEW)) | pl.col("flags").list.eval(pl.element().is_in(sorted(REVIEW_FLAGS))).list.any())
            & ~pl.col("status").is_in(["corrected", "reviewed"])
        ).to_series().sum()),
        # Which gender check decided: the pack's gender layer (builder/layers.py) or the ending rules (builder/gender.py).
        "gender_layer": layer_info(language),
        "uninflected_feminine": verdicts.get(Verdict.UNINFLECTED_FEMININE, 0),
        "flags": dict(sorted(flags.iter_rows())),
        "gender_check": {
            "outputs_checked": 2 * processed.height,
            "masculine_outputs_checked_masculine": int((processed["check_masculine"] == "masculine").sum()),
            "feminine_outputs_checked_feminine": int((processed["check_feminine"] == "feminine").sum()),
            "feminine_outputs_checked_masculine": int((processed["check_feminine"] == "masculine").sum()),
            "methods": dict(sorted(processed.select(pl.concat_list("check_method_masculine", "check_method_feminine").explode())
                                   .to_series().value_counts().iter_rows())),
        },
        "corrections": {
            "file": str(corrections_path) if corrections_path else None,
            "translations": len(corrections.translations),
            "relevance": len(corrections.relevance),
            "dropped_sources": verdicts.get(Verdict.DROPPED_BY_ANNOTATOR, 0),
            "qrels_removed": qrels_info["removed_by_annotators"],
        },
    }
    if corrections.rules:  # only with a rule: a build without rules writes what it always wrote
        stats["corrections"]["rules"] = rules_stats(rule_results, corrections.rules_path)
    if any(c.review for c in corrections.translations.values()):  # the maintainers' review (docs/review.md)
        stats["corrections"]["review"] = review_stats(processed)
    if version is not None:
        stats["version"] = version
        stats["version_from"] = VERSION_FROM
    def working_files(tmp: Path) -> None:
        processed.select(TRANSLATIONS_COLUMNS).write_parquet(tmp / "translations.parquet")
        for name in (RAW_FILE, "templates.json", ALIGNMENT_FILE, ALIGNMENT_SUMMARY):  # the translate stage's files
            if (folder / name).is_file():                                              # move with the set
                shutil.copyfile(folder / name, tmp / name)

    write_testset(TestSet(lang=lang, queries=queries, corpus=corpus, qrels=qrels, stats=stats), out, working_files,
                  ours=LANGUAGE_FOLDER)
    return stats


def review_stats(processed: pl.DataFrame) -> dict:
    """stats.json ``corrections.review``: the review rounds and, of the sources they read, how many the review
    corrected (a title that is not the build's proposal), confirmed as built, or dropped."""
    reviewed = processed.filter(pl.col("status") == "reviewed")
    dropped = reviewed.filter(pl.col("verdict") == Verdict.DROPPED_BY_ANNOTATOR.value)
    kept_rows = reviewed.filter(pl.col("verdict") != Verdict.DROPPED_BY_ANNOTATOR.value)
    same = ((pl.col("title_masculine").eq_missing(pl.col("proposal_masculine")))
            & (pl.col("title_feminine").eq_missing(pl.col("proposal_feminine"))))
    kept = kept_rows.filter(same).height
    return {"rounds": sorted(set(reviewed["review"].drop_nulls().to_list())), "sources": reviewed.height,
            "changed": kept_rows.height - kept, "kept": kept, "dropped": dropped.height}


def _alignment_summary(folder: Path) -> dict | None:
    path = folder / ALIGNMENT_SUMMARY
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildError(f"{path}: unreadable alignment summary ({exc}); rerun `python -m builder translate`") from None


def build_language(source: str | Path | EnglishSource | None, lang: Language | str, translator: str, out: str | Path,
                   corrections: str | Path | None = None, cache: str | Path | None = None,
                   params: dict | None = None, libre_url: str | None = None, progress: bool = True,
                   route: str | None = None) -> dict:
    """Every step for one language; writes ``<out>/<lang>/`` and returns its stats.json content.
    corrections=None uses ``corrections/<lang>.jsonl`` when that file exists."""
    params = params or load_params()
    language = language_for(params, lang)
    lang = language.code
    src = source if isinstance(source, EnglishSource) else load_source(source)
    corrections_path = Path(corrections) if corrections else default_corrections(lang)
    # A bad corrections file, or one naming ids the English source lacks, stops the build before anything is written.
    check_source_ids(read_corrections(corrections_path, lang), src.queries, src.corpus)
    # The translations go to a hidden staging folder, so <out>/<lang> is replaced once, by the complete set:
    # a failed or killed build leaves the previous set as it was (list_languages skips hidden folders; the next
    # write removes a killed run's leftovers).
    staging = hidden_sibling(Path(out) / lang, "translate")
    try:
        run_translate(src, language, translator, staging, Path(cache) if cache else DEFAULT_CACHE_DIR, params, libre_url,
                      progress, route=route)
        return run_postprocess(src, language, Path(out), params, corrections_path, translations_dir=staging / lang,
                               cache_dir=Path(cache) if cache else DEFAULT_CACHE_DIR)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def worker_signals() -> None:
    """In each worker process of ``python -m builder defaults --jobs N`` (builder/__main__.py): Ctrl-C is the main
    process's to handle (a worker that took it would die with a traceback, and the pool would start a fresh one
    that goes on building); the main process stops the workers with SIGTERM, which here leaves like an exception,
    so a worker removes its staging folder and releases what it registered (tqdm's lock, which the resource
    tracker would otherwise report as leaked)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

