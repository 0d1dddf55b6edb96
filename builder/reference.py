"""The given-translation route: titles the source dataset's own translators wrote, aligned to the English ids.

The job-title similarity dataset publishes its own translations of the same titles (``dataset/<lang>/`` beside
``dataset/en/``, same pinned commit, Apache-2.0): de and fr by people, es, it, pt, nl and pl by machine (by the
dataset's authors). They are un-gendered (mostly the generic masculine, sometimes a feminine or an inclusive
spelling) and keyed by their own text, so each English id's title is found by ``builder.align`` first. An
English id whose alignment is not confident takes the MT route (the pack's translator, with its templates)
where the language has one, and is counted; without one it gives no item (``unaligned``).

What this module adds to the build: ``load_reference`` (the translated folder, read and refused like the English
one), ``align_reference`` (the alignment, with the multilingual encoder's vectors kept in the embedding cache),
and ``reference_raw`` (the translate stage's ``raw_translations.parquet`` for this route: one row per English id,
``route`` = ``reference`` | ``mt`` | ``none``). ``builder.postprocess`` decides each row by its route's strategy
(``builder.routes``: ``GivenTranslation`` reads the given title, ``NoTranslation`` gives ``unaligned``).

Where the folder is read: ``<english>/reference/<lang>`` (the copy ``python -m builder source`` makes), else the
English folder's sibling ``<english>/../<lang>`` (the dataset's layout: ``../shared/...``,
``$JOBTITLES_SOURCE_DIR/../<lang>``, the user cache), downloaded there at the pinned commit when the English
folder is the user cache.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from builder.align import Alignment, Relevance, align
from builder.errors import SourceError
from builder.source import (ENV_SOURCE_DIR, FILES, REGISTRY, EnglishSource, _read_qrels,
                            _read_titles, fetch_pinned, user_cache_dir)
from builder.translate import RAW_SCHEMA
from config.files import write_folder_atomically
from eval.testset import sha256_of
from languages import Language

ROUTE = "reference"
# The multilingual encoder whose cosine is half the alignment's text similarity (builder/align.py): m-use through
# eval's exact forward pass (eval.models.MultilingualUSE: the same vector bits on every machine, so the alignment
# and the files it decides are too).
ALIGN_ENCODER = "m-use"
# Columns the route adds to raw_translations.parquet (null on the MT route's rows of an MT build).
ROUTE_SCHEMA = {
    "route": pl.String,  # reference | mt | none
    "reference_id": pl.String,  # the translated dataset's id of the aligned title
    "alignment_score": pl.Float64,
    "alignment_margin": pl.Float64,
    "alignment_confident": pl.Boolean,
    "alignment_reason": pl.String,
}
ALIGNMENT_FILE = "alignment.parquet"  # one row per English id and role (empty on the MT route)
ALIGNMENT_SCHEMA = {"source_id": pl.String, "role": pl.String, "source_text": pl.String, "reference_id": pl.String,
                    "reference_text": pl.String, "score": pl.Float64, "margin": pl.Float64, "confident": pl.Boolean,
                    "reason": pl.String}


@dataclass(frozen=True)
class ReferenceSet:
    lang: str
    folder: Path
    translated_by: str  # people | machine
    relevance: Relevance
    sha256: dict[str, str]  # per file


def reference_folder(english_folder: Path, lang: str) -> Path:
    """``<english>/reference/<lang>`` (the source stage's copy), else, when the English folder is the dataset's
    ``dataset/en``, its sibling ``dataset/<lang>``."""
    copy = Path(english_folder) / "reference" / lang
    if copy.is_dir() or Path(english_folder).name != Path(REGISTRY["path"]).name:  # dataset/en
        return copy
    return Path(english_folder).parent / lang


def load_reference(source: EnglishSource, lang: Language, base_url: str | None = None) -> ReferenceSet:
    """The translated folder for ``lang`` (its pack's ``reference:``), validated like the English one; every
    problem is one SourceError naming the file and line (or the file and what to do). The SHA-256s are checked
    when the folder is downloaded; a local folder may be another version (``stats.json`` records its own)."""
    rules = lang.reference
    if rules is None:
        raise SourceError(f"{lang.path}: no reference: section (the source dataset's own translation of {lang.code} "
                          "and its checksums); build it with an MT translator: --route mt")
    folder = reference_folder(source.folder, lang.code)
    if not folder.is_dir() and Path(source.folder).resolve() == user_cache_dir().resolve():
        download_reference(folder, lang, base_url)
    if not folder.is_dir():
        raise SourceError(f"{folder}: the dataset's {lang.code} translations are not there (the English folder "
                          f"{source.folder} needs them in reference/{lang.code}/, or as its sibling {lang.code}/ when it is "
                          f"the dataset's dataset/en); rerun `python -m builder source` with {lang.code} in params.yaml "
                          f"languages, copy the dataset's dataset/{lang.code}/ folder there, or build {lang.code} with --route mt")
    lines: dict[str, int] = {}
    queries = _read_titles(folder / "queries.tsv")
    corpus = _read_titles(folder / "corpus_documents.tsv", lines)
    for tid, title in corpus.items():
        if tid in queries and queries[tid] != title:
            raise SourceError(f"{folder / 'corpus_documents.tsv'}:{lines[tid]}: id {tid!r} has title {title!r}, but "
                              f"queries.tsv gives it {queries[tid]!r}; one id must name one title")
    qrels = _read_qrels(folder / "annotations.tsv", queries, corpus)
    used = {q for q, _ in qrels}
    lonely = [q for q in queries if q not in used]
    if len(lonely) > len(queries) // 2:
        raise SourceError(f"{folder / 'annotations.tsv'}: {len(lonely)} of {len(queries)} queries have no relevant "
                          "title; the relevance labels do not match these titles (another version of the folder?)")
    return ReferenceSet(lang.code, folder, rules.translated_by, Relevance(queries, corpus, qrels),
                        {name: sha256_of(folder / name) for name in FILES})


def download_reference(dest: Path, lang: Language, base_url: str | None = None, timeout_s: float = 60.0) -> Path:
    """The pinned commit's translated folder, each file checked against its SHA-256 before it is kept; the folder
    appears whole or not at all (a failed download leaves no half folder that the next run would read)."""
    base = (base_url or REGISTRY["base_url"]).rstrip("/")
    print(f"{lang.code} translations not found locally: downloading {REGISTRY['repository']}@{REGISTRY['commit'][:12]} "
          f"dataset/{lang.code} into {dest}", file=sys.stderr)

    def fill(part: Path) -> None:
        for name, (sha, _rows) in lang.reference.files.items():
            # the English source's fetch (size caps, SHA-256, the remedy): a local copy of the dataset holds
            # dataset/<lang>/ beside en/
            fetch_pinned(f"{base}/{REGISTRY['commit']}/dataset/{lang.code}/{name}", sha, part / name, timeout_s,
                         local_copy="pass --source DIR", local_copy_env=f"set ${ENV_SOURCE_DIR}")

    write_folder_atomically(dest, fill, ours=re.compile("|".join(map(re.escape, lang.reference.files))))
    return dest


@functools.cache
def _align_model():
    """The alignment's encoder, one per process: ``builder defaults`` aligns five languages with it."""
    from eval.models import load_model

    return load_model(ALIGN_ENCODER)


def align_reference(source: EnglishSource, reference: ReferenceSet, cache_dir: Path | None,
                    progress: bool = False, drafts: dict[str, str] | None = None) -> Alignment:
    """builder.align over the English source and the translated set, the encoder's vectors through the
    embedding cache (``<cache_dir>/embeddings``, the one eval uses) so a rebuild encodes nothing. drafts: the MT
    route's title of each English id (``mt_drafts``), where the language has an offline translator."""
    from eval.models import EmbeddingCache, unit_rows

    # eval's m-use, the model `eval run` scores: its exact forward pass makes every vector the same bits on any BLAS
    # kernel, thread count or batch, and the cache it fills is the one eval reads.
    model = _align_model()
    store = EmbeddingCache(Path(cache_dir) / "embeddings") if cache_dir else None

    def encode(texts):
        if store is None:
            vectors = np.asarray(model.encode(list(texts)), dtype=np.float32)
            return unit_rows(vectors)
        return store.encode(model, list(texts), "passage", progress=progress)[0]

    english = Relevance(source.queries, source.corpus, source.qrels)
    return align(english, reference.relevance, encode, drafts=drafts)


def mt_drafts(mt_raw: pl.DataFrame, pattern: str, code: str) -> dict[str, str]:
    """English id -> the MT route's masculine title (the template stripped), for the alignment's draft signal; an
    output whose template could not be stripped, or the English echoed back, is no draft."""
    from builder.strip import compile_pattern, strip_template

    rx = compile_pattern(pattern, code)
    drafts = {}
    for r in mt_raw.iter_rows(named=True):
        stripped = strip_template(r["output_masculine"], r["source_text"], rx)
        if stripped.title and "echo" not in stripped.flags:
            drafts[r["source_id"]] = stripped.title
    return drafts


def alignment_frame(alignment: Alignment, source: EnglishSource, reference: ReferenceSet) -> pl.DataFrame:
    """One row per English id and role: what ``alignment.parquet`` holds (read by the hand-check and the card)."""
    rows = []
    for role, table, titles, targets in (("query", alignment.queries, source.queries, reference.relevance.queries),
                                         ("corpus", alignment.corpus, source.corpus, reference.relevance.corpus)):
        for sid, a in table.items():
            rows.append({"source_id": sid, "role": role, "source_text": titles[sid], "reference_id": a.target_id,
                         "reference_text": targets[a.target_id], "score": a.score, "margin": a.margin,
                         "confident": a.confident, "reason": a.reason})
    return pl.DataFrame(rows, schema=ALIGNMENT_SCHEMA)


def alignment_summary(alignment: Alignment) -> dict:
    """For stats.json: how many ids aligned confidently, and the relevance graph's edges preserved."""
    def count(table: dict) -> dict:
        return {"aligned": sum(a.confident for a in table.values()), "total": len(table)}

    return {"encoder": ALIGN_ENCODER, "queries": count(alignment.queries), "corpus": count(alignment.corpus),
            "edges_preserved": alignment.edges_preserved, "edges_checked": alignment.edges_checked,
            "edges_total": alignment.edges_total}


def fallback_ids(alignment: Alignment, source: EnglishSource) -> list[str]:
    """English ids the given translation does not cover confidently (a title that is a query and a corpus title
    needs both alignments)."""
    out = []
    for sid in source.titles():
        parts = [t[sid] for t in (alignment.queries, alignment.corpus) if sid in t]
        if not all(a.confident for a in parts) or len({a.target_id for a in parts}) > 1:
            out.append(sid)
    return out


def sub_source(source: EnglishSource, ids: list[str]) -> EnglishSource:
    keep = set(ids)
    return EnglishSource(source.folder, {k: v for k, v in source.queries.items() if k in keep},
                         {k: v for k, v in source.corpus.items() if k in keep},
                         [(q, d) for q, d in source.qrels if q in keep and d in keep])


def reference_raw(source: EnglishSource, reference: ReferenceSet, alignment: Alignment,
                  mt_raw: pl.DataFrame | None) -> pl.DataFrame:
    """The route's raw translations: the aligned title for every confident id, the MT route's outputs for the
    rest (``mt_raw``, translated from ``sub_source(fallback_ids)``), else no output (route ``none``)."""
    fallback = set(fallback_ids(alignment, source))
    mt_rows = {r["source_id"]: r for r in mt_raw.iter_rows(named=True)} if mt_raw is not None else {}
    version = f"{REGISTRY['repository']}@{REGISTRY['commit'][:12]}:{reference.lang}"
    titles = reference.relevance.queries | reference.relevance.corpus
    rows = []
    for sid, title in source.titles().items():
        a = alignment.target_of(sid)
        row = {"source_id": sid, "source_text": title, "in_queries": sid in source.queries,
               "in_corpus": sid in source.corpus, "reference_id": a.target_id, "alignment_score": a.score,
               "alignment_margin": a.margin, "alignment_confident": sid not in fallback, "alignment_reason": a.reason}
        if sid not in fallback:
            row |= {"route": ROUTE, "sentence_masculine": "", "sentence_feminine": "", "output_masculine": titles[a.target_id],
                    "output_feminine": None, "translator": f"{ROUTE}:{reference.lang}", "translator_version": version}
        elif sid in mt_rows:
            m = mt_rows[sid]
            row |= {"route": "mt", **{k: m[k] for k in ("sentence_masculine", "sentence_feminine", "output_masculine",
                                                         "output_feminine", "translator", "translator_version")}}
        else:
            row |= {"route": "none", "sentence_masculine": "", "sentence_feminine": "", "output_masculine": None,
                    "output_feminine": None, "translator": f"{ROUTE}:{reference.lang}", "translator_version": version}
        rows.append(row)
    return pl.DataFrame(rows, schema=RAW_SCHEMA | ROUTE_SCHEMA)

