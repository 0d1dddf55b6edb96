"""What the BLAS-independence tests share (tests/eval/test_exact_scores.py, test_exact_encoder.py): the OpenBLAS
kernels and numpy SIMD paths they switch between, the environment of a child process run under one of them, and a
small test set of real English titles."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import polars as pl

from eval.testset import ITEM_SCHEMA, TestSet

REPO = Path(__file__).resolve().parents[2]
X86 = platform.machine().lower() in ("x86_64", "amd64")
# OpenBLAS kernels every x86-64 CPU with AVX2 runs (a forced kernel the CPU lacks would stop the process)
CORE_TYPES = ("Haswell", "Sandybridge") if X86 else (None,)


def numpy_simd_features() -> list[str]:
    """The wide SIMD paths numpy dispatches to on this CPU (x86): what NPY_DISABLE_CPU_FEATURES can turn off."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    wide = ("AVX512F", "AVX512CD", "AVX512_SKX", "AVX512_CLX", "AVX512_CNL", "AVX512_ICL", "AVX512_SPR", "AVX2", "FMA3")
    return [f for f in wide if f in __cpu_dispatch__ and __cpu_features__.get(f)]


def blas_env(core_type: str | None, numpy_simd: bool = True) -> dict:
    """This process's environment for a child run under OpenBLAS's ``core_type`` kernels (None: the CPU's own),
    with numpy's wide SIMD paths turned off unless ``numpy_simd``; the checkout first on the path."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    if core_type:
        env["OPENBLAS_CORETYPE"] = core_type
    if not numpy_simd:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(numpy_simd_features())
    return env


def english_testset(n_queries: int, n_docs: int) -> TestSet:
    """A test set of real titles from the English source: each query title as a masculine and a feminine query
    (the feminine prefixed "female"), the first ``n_docs`` corpus titles as neutral items, the source's labels."""
    from tests.english import english_or_skip

    folder = english_or_skip()

    def rows(name: str) -> list[list[str]]:
        return [line.split("\t") for line in (folder / name).read_text(encoding="utf-8").splitlines() if line]

    def item(id_: str, sid: str, text: str, gender: str) -> dict:
        return dict(id=id_, text=text.lower(), gender=gender, check_gender=gender, pair_id=f"p-{sid}", source_ids=[sid],
                    source_texts=[text], check_method="rule:test", check_ok=True, flags=[], status="machine",
                    provenance="test:1")

    queries = pl.DataFrame([item(f"q-{sid}-{g[0]}", sid, text if g == "masculine" else f"female {text}", g)
                            for sid, text in rows("queries.tsv")[:n_queries] for g in ("masculine", "feminine")],
                           schema=ITEM_SCHEMA)
    corpus = pl.DataFrame([item(f"c-{sid}-n", sid, text, "neutral") for sid, text in rows("corpus_documents.tsv")[:n_docs]],
                          schema=ITEM_SCHEMA)
    corpus = corpus.unique("text", keep="first", maintain_order=True)
    known = set(corpus["source_ids"].list.first())
    qrels = [(f"q-{q}-{g}", f"c-{d}-n", 1) for q, _, d, _ in rows("annotations.tsv") if d in known
             and q in {sid for sid, _ in rows("queries.tsv")[:n_queries]} for g in "mf"]
    return TestSet("pt", queries, corpus, pl.DataFrame(qrels, schema={"query_id": pl.String, "doc_id": pl.String,
                                                                       "relevance": pl.Int64}, orient="row"), {"lang": "pt"})
