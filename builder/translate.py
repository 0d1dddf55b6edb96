"""Translate every English title with the masculine and the feminine template, through the cache."""

from __future__ import annotations

import re

import polars as pl

from builder.article import indefinite_article
from builder.cache import TranslationCache
from builder.errors import BuildError, TranslationError
from builder.source import EnglishSource
from builder.translators import SOURCE_LANG, Translator

RAW_SCHEMA = {
    "source_id": pl.String,
    "source_text": pl.String,
    "in_queries": pl.Boolean,
    "in_corpus": pl.Boolean,
    "sentence_masculine": pl.String,
    "sentence_feminine": pl.String,
    "output_masculine": pl.String,
    "output_feminine": pl.String,
    "translator": pl.String,
    "translator_version": pl.String,
}


# "a {title}" in an (English) template: the article the title's first sound decides (builder/article.py).
ARTICLE_SLOT = re.compile(r"\b([Aa])(\s+\{title\})")


def fill_template(template: str, title: str, lowercase: bool = False) -> str:
    """The template's sentence for ``title``. A template is declared with "a {title}" ("He is a {title}."); the
    article agrees with the title as written ("He is an account director.", "He is an HR manager.", "He is a
    user researcher.": ``indefinite_article``), decided before ``lowercase`` lowercases the title in the
    sentence (so "HR" is still read "aitch-ar"). Templates without "a {title}" (the colon template) are filled
    as they are."""
    if indefinite_article(title) == "an":
        template = ARTICLE_SLOT.sub(lambda m: f"{m.group(1)}n{m.group(2)}", template)
    return template.replace("{title}", title.lower() if lowercase else title)


def translate_sentences(
    sentences: list[str], translator: Translator, cache: TranslationCache, batch_size: int = 64, progress: bool = True
) -> dict[str, str]:
    """Outputs for every unique sentence; only cache misses reach the translator.

    Web translators (those with ``translate_as_completed``): each answer is committed to the cache as it
    arrives, so a kill loses no paid answer; a sentence the service refuses is named after the rest of its
    batch is stored. Offline translators: each batch is committed when it finishes (their answers cost
    nothing to redo)."""
    unique = list(dict.fromkeys(sentences))
    steps = getattr(translator, "steps", None)
    if steps:
        # A chain (builder.chain): each step through the cache under its own key, so steps are reused.
        outputs = unique
        sizes = getattr(translator, "batch_sizes", {}) or {}
        for step in steps:
            answers = translate_sentences(outputs, step, cache, batch_size=int(sizes.get(step.name, batch_size)),
                                          progress=progress)
            outputs = [answers[s] for s in outputs]
        fallback = getattr(translator, "fallback", None)

        def through_cache(english: list[str]) -> list[str]:
            for step in fallback:  # the fallback route, step by step through the cache like the chain
                answers = translate_sentences(english, step, cache, batch_size=int(sizes.get(step.name, batch_size)),
                                              progress=progress)
                english = [answers[s] for s in english]
            return english

        return dict(zip(unique, translator.finish(unique, outputs, through_cache if fallback else None)))
    key = (translator.name, translator.version, getattr(translator, "source", SOURCE_LANG), translator.target)
    done = cache.get_many(*key, unique)
    todo = [s for s in unique if s not in done]
    if not todo:
        return done  # all cached: no progress bar to show (nor tqdm to import, 6 ms of a rebuild)
    from tqdm import tqdm

    with tqdm(total=len(unique), initial=len(done),
              desc=f"translate {getattr(translator, 'source', SOURCE_LANG)}->{translator.target} ({translator.name})",
              unit="sent", disable=None if progress else True, leave=False) as bar:  # None: off when stderr is no terminal
        for i in range(0, len(todo), batch_size):
            batch = todo[i : i + batch_size]
            stream = getattr(translator, "translate_as_completed", None)
            if stream is None:
                results = dict(zip(batch, translator.translate(batch)))
                cache.put_many(*key, results)
                done.update(results)
                bar.update(len(batch))
                continue
            refused: list[TranslationError] = []
            for sentence, answer in stream(batch):
                if isinstance(answer, TranslationError):
                    refused.append(answer)
                    continue
                cache.put_many(*key, {sentence: answer})
                done[sentence] = answer
                bar.update(1)
            if refused:
                more = f" ({len(refused) - 1} more sentence(s) refused)" if len(refused) > 1 else ""
                raise TranslationError(f"{refused[0]}{more}; the other answers are cached, fix or drop the "
                                       "sentence and rerun")
    return done


def check_raw_matches_source(raw: pl.DataFrame, source: EnglishSource, raw_path) -> None:
    """Refuse raw translations that lack a column of ``RAW_SCHEMA`` or hold it with another type (a damaged or
    hand-made file: it failed later as a traceback), and those made from another English source: their ids or
    titles differ."""
    wrong = [f"{name} ({'missing' if name not in raw.schema else raw.schema[name]}; expected {dtype})"
             for name, dtype in RAW_SCHEMA.items() if raw.schema.get(name) != dtype]
    if wrong:
        raise BuildError(f"{raw_path}: not raw translations as `python -m builder translate` writes them: "
                         f"{', '.join(wrong[:4])}{' …' if len(wrong) > 4 else ''}; rerun `python -m builder translate`")
    made_from = dict(zip(raw["source_id"].to_list(), raw["source_text"].to_list()))
    titles = source.titles()
    missing = [sid for sid in titles if sid not in made_from]
    changed = [sid for sid, title in titles.items() if sid in made_from and made_from[sid] != title]
    extra = [sid for sid in made_from if sid not in titles]
    if missing or changed or extra:
        examples = (missing or changed or extra)[:3]
        raise BuildError(
            f"{raw_path}: translated from another English source than {source.folder} ({len(missing)} id(s) missing, "
            f"{len(changed)} title(s) changed, {len(extra)} id(s) not in the source; e.g. {examples}); "
            "rerun `python -m builder translate` with the same --source")


def translate_source(
    source: EnglishSource,
    translator: Translator,
    templates: dict,
    cache: TranslationCache,
    batch_size: int = 64,
    progress: bool = True,
) -> pl.DataFrame:
    """One row per English id with both template sentences and the translator's raw outputs."""
    rows = []
    # Optional per template: the offline models echo Title Case English far more often than lower case.
    lowercase = bool(templates.get("lowercase"))
    for sid, title in source.titles().items():
        rows.append({
            "source_id": sid,
            "source_text": title,
            "in_queries": sid in source.queries,
            "in_corpus": sid in source.corpus,
            "sentence_masculine": fill_template(templates["masculine"], title, lowercase),
            "sentence_feminine": fill_template(templates["feminine"], title, lowercase),
        })
    sentences = [r[k] for r in rows for k in ("sentence_masculine", "sentence_feminine")]
    outputs = translate_sentences(sentences, translator, cache, batch_size=batch_size, progress=progress)
    for r in rows:
        r["output_masculine"] = outputs[r["sentence_masculine"]]
        r["output_feminine"] = outputs[r["sentence_feminine"]]
        r["translator"] = translator.name
        r["translator_version"] = translator.version
    return pl.DataFrame(rows, schema=RAW_SCHEMA)
