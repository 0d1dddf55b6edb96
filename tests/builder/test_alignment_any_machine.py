"""The given-translation route's alignment is the same bits on every machine: `builder translate` for German (the
route with no machine translation, so the alignment is all that runs) writes the same bytes under two OpenBLAS
kernels, thread counts and numpy SIMD paths, each run encoding every title itself. Its outputs
(raw_translations.parquet, alignment.parquet) and the hashes stats.json keeps of them are published with every
release. (With the package's float32 forward pass and float32 BLAS products, the same runs gave alignment scores one
unit apart in the fourth decimal: docs/eval.md, "Exact scores".)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.builder.test_reference import SHARED
from tests.eval.blas_configs import REPO, X86, blas_env
from tests.english import english_or_skip

OUTPUTS = ("raw_translations.parquet", "alignment.parquet", "alignment.json", "templates.json")


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "de").is_dir(), reason="the dataset's translations are not in ../shared")
def test_the_german_alignment_is_the_same_bytes_under_two_blas_and_simd_configurations(tmp_path):
    english = english_or_skip()
    configurations = [("Haswell", "1", True), ("Sandybridge", "2", False)] if X86 else [(None, "1", True), (None, "2", False)]
    written = []
    for k, (core, threads, numpy_simd) in enumerate(configurations):
        env = {**blas_env(core, numpy_simd), "OPENBLAS_NUM_THREADS": threads}
        out, cache = tmp_path / f"out{k}", tmp_path / f"cache{k}"  # an empty cache: every title encoded here
        done = subprocess.run([sys.executable, "-m", "builder", "translate", "--lang", "de", "--source", str(english),
                               "--out", str(out), "--cache", str(cache), "--quiet"],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        assert any(cache.rglob("m-use*")), "the alignment encoded nothing into this run's cache"
        written.append({name: (out / "de" / name).read_bytes() for name in OUTPUTS})
    import polars as pl

    alignment = pl.read_parquet(tmp_path / "out0" / "de" / "alignment.parquet")
    assert alignment.height > 2000 and alignment["confident"].sum() > 1500  # a real alignment, not an empty one
    for name in OUTPUTS:
        assert written[0][name] == written[1][name], name
