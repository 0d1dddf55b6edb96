"""Audit across models: correlations, systemic exclusion, the audit of real tfidf-char runs, the CLI."""

import json
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import stats

from eval.audit import AuditSettings, run_audit
from eval.audit_figures import audit_corpus
from eval.audit_report import audit_markdown, mitigation_figure, write_audit_plots
from eval.correlation import correlation_with_ci, pearson, spearman
from eval.errors import AuditError
from eval.evaluate import EvalSettings, evaluate, evaluate_language
from eval.exclusion import check_tau, exclusion, served
from eval.pair_matrix import PairMatrix, pair_matrix
from eval.stats import resample_indices
from eval.models import CharTfidf, EmbeddingCache
from eval.testset import read_testset

REPO = Path(__file__).resolve().parents[2]


class CharTfidf512(CharTfidf):
    """A second lexical model: the same n-grams hashed into 512 buckets (more collisions)."""

    def __init__(self) -> None:
        super().__init__(dimension=512)

    def _make_meta(self):
        return replace(super()._make_meta(), name="tfidf-char-512")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


# --- correlation --------------------------------------------------------------------------------------


def test_correlations_equal_scipy_including_ties():
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    y = 0.5 * x + rng.normal(size=40)
    y_ties = np.round(y, 0)  # many ties: Spearman uses average ranks
    assert pearson(x, y)[0] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert spearman(x, y_ties)[0] == pytest.approx(stats.spearmanr(x, y_ties)[0], abs=1e-12)
    assert pearson([1, 2, 3], [3, 2, 1]) == (pytest.approx(-1.0), None)


def test_constant_vector_gives_nan_with_a_reason_not_a_crash():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning either
        value, reason = pearson([0.0, 0.0, 0.0], [0.1, 0.5, 0.2], names=("never-fails", "other"))
        assert np.isnan(value) and "never-fails is constant (every pair 0)" in reason
        assert np.isnan(spearman([1, 2, 3], [2, 2, 2])[0])
        ci = correlation_with_ci([0.0, 0.0, 0.0], [0.1, 0.5, 0.2], "spearman", names=("a", "b"))
        assert ci["value"] is None and ci["ci95"] == [None, None] and "a is constant" in ci["reason"]
        assert "fewer than 2 pairs" in pearson([1.0], [2.0])[1]


def test_bootstrap_resamples_the_same_pairs_for_both_vectors():
    x = np.arange(20, dtype=float)
    same = correlation_with_ci(x, x, "pearson", resamples=200)
    assert same["value"] == pytest.approx(1.0) and same["ci95"] == [pytest.approx(1.0), pytest.approx(1.0)]
    # x and -x resampled together stay perfectly anti-correlated; independent draws would not.
    anti = correlation_with_ci(x, -x, "spearman", resamples=200)
    assert anti["ci95"] == [pytest.approx(-1.0), pytest.approx(-1.0)]
    noisy = correlation_with_ci(x, np.sin(x), "pearson", resamples=500)
    assert noisy["ci95"][0] < noisy["value"] < noisy["ci95"][1]


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_interval_is_scipys_paired_percentile_bootstrap(method):
    # scipy's paired bootstrap resamples the pairs with the same draws as the shared resample_indices
    rng = np.random.default_rng(9)
    x = rng.normal(size=60)
    y = np.round(0.4 * x + rng.normal(size=60), 1)  # ties, for Spearman's average ranks

    def statistic(a, b, axis=-1):
        if method == "spearman":
            a, b = stats.rankdata(a, axis=axis), stats.rankdata(b, axis=axis)
        return stats.pearsonr(a, b, axis=axis).statistic

    ours = correlation_with_ci(x, y, method, resamples=400, seed=3)
    ref = stats.bootstrap((x, y), statistic, paired=True, n_resamples=400, method="percentile",
                          rng=np.random.default_rng(3)).confidence_interval
    assert ours["ci95"] == [pytest.approx(ref.low, abs=1e-12), pytest.approx(ref.high, abs=1e-12)]
    assert ours["undefined_resamples"] == 0 and ours["n"] == 60


def test_constant_resamples_are_counted_not_warned():
    # one pair differs: a resample that misses it is constant, its correlation undefined and left out
    x = np.array([0.0] * 9 + [1.0])
    y = np.arange(10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = correlation_with_ci(x, y, "pearson", resamples=300, seed=1)
    missing = int((resample_indices(10, resamples=300, seed=1) != 9).all(axis=1).sum())
    assert out["undefined_resamples"] == missing > 0 and out["value"] == pytest.approx(stats.pearsonr(x, y).statistic)


# --- served and exclusion -----------------------------------------------------------------------------


def test_served_needs_a_hit_in_top_k_and_ap_at_least_rho():
    hit = np.array([1.0, 1.0, 0.0, 1.0])
    ap = np.array([0.5, 0.05, 0.3, 0.1])
    assert served(hit, ap, 0.0).tolist() == [True, True, False, True]
    assert served(hit, ap, 0.1).tolist() == [True, False, False, True]  # AP >= rho, inclusive
    with pytest.raises(ValueError, match="without relevant titles"):
        served(np.array([np.nan]), np.array([np.nan]), 0.1)


# Hand-computed case: 4 pairs x 3 models. Model 0 never fails.
SERVED_M = np.array([[1, 1, 1], [1, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=bool)
SERVED_F = np.array([[1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 0]], dtype=bool)


def test_exclusion_counts_hand_computed():
    e = exclusion(SERVED_M, SERVED_F, tau=2)
    assert e["feminine_count"].tolist() == [2, 1, 0, 0]
    assert e["masculine_count"].tolist() == [0, 0, 2, 0]
    assert e["both_failed_count"].tolist() == [0, 0, 0, 2]
    assert e["feminine"].tolist() == [True, False, False, False]
    assert e["masculine"].tolist() == [False, False, True, False]
    assert e["both_failed"].tolist() == [False, False, False, True]  # failing both forms is no gender gap
    e1 = exclusion(SERVED_M, SERVED_F, tau=1)
    assert e1["feminine"].tolist() == [True, True, False, False]
    assert exclusion(SERVED_M, SERVED_F, tau=3)["feminine"].sum() == 0  # model 0 never fails


def test_all_models_failing_is_not_exclusion():
    none = np.zeros((3, 3), dtype=bool)
    e = exclusion(none, none, tau=3)
    assert not e["feminine"].any() and not e["masculine"].any() and e["both_failed"].all()


def test_audit_settings_refuse_out_of_range_k_and_rho():
    with pytest.raises(AuditError, match="audit.k must be >= 1, got 0"):
        AuditSettings(k=0)
    with pytest.raises(AuditError, match=r"rho must be in \[0, 1\].*got 1.5"):
        AuditSettings(rho=1.5)
    with pytest.raises(AuditError, match="got -0.2"):
        AuditSettings(rho_grid=(0.0, -0.2))


def test_tau_larger_than_the_number_of_models_is_a_clear_error():
    with pytest.raises(AuditError, match=r"tau = 4 is larger than the number of models \(3\)"):
        exclusion(SERVED_M, SERVED_F, tau=4)
    with pytest.raises(AuditError, match="at least 1"):
        check_tau(0, 3)
    with pytest.raises(AuditError, match="whole number"):
        check_tau(1.5, 3)


def _matrix() -> PairMatrix:
    """The hand case as AP and hit arrays: served = hit and AP >= 0.1; model 2's asymmetry is constant."""
    ap_m = np.where(SERVED_M, 0.5, 0.05)
    ap_f = np.where(SERVED_F, 0.4, 0.02)
    ones = np.ones_like(ap_m)
    asym = np.array([[0.1, 0.2, 0.3], [0.2, 0.1, 0.3], [0.3, 0.4, 0.3], [0.4, 0.3, 0.3]])
    keys = [(f"p{i}", f"m{i}", f"f{i}") for i in range(4)]
    return PairMatrix("masculine", ["never-fails", "b", "c"], keys,
                      {"1-AO": asym, "1-RBO(p=0.98)": asym * 2, "AP_M-AP_F": ap_m - ap_f}, ap_m, ap_f, ones, ones)


def test_audit_corpus_hand_computed():
    pm = _matrix()
    texts = {f"m{i}": f"masc{i}" for i in range(4)} | {f"f{i}": f"fem{i}" for i in range(4)}
    settings = AuditSettings(k=10, rho=0.1, tau=2, rho_grid=(0.0, 0.1, 0.6), bootstrap_resamples=200)
    out = audit_corpus(pm, texts, settings)
    ex = out["exclusion"]
    assert ex["feminine_excluded"]["value"] == 0.25 and ex["feminine_excluded"]["count"] == 1
    assert ex["masculine_excluded"]["value"] == 0.25 and ex["both_failed"]["value"] == 0.25
    assert ex["difference_F-M"]["value"] == 0.0
    assert "k=10" in ex["definition"] and "rho=0.1" in ex["definition"] and "tau=2" in ex["definition"]
    assert ex["served_share_per_model"]["never-fails"] == {"masculine": 1.0, "feminine": 1.0}
    grid = ex["grid"]
    assert grid["tau"] == [1, 2, 3] and len(grid["feminine_excluded"]) == 3
    # rho = 0: every query is served (all hits); 0.1: the hand case; 0.6: nothing served, nothing excluded.
    assert grid["feminine_excluded"][0] == [0.0, 0.0, 0.0]
    assert grid["feminine_excluded"][1] == [0.5, 0.25, 0.0]
    assert grid["feminine_excluded"][2] == [0.0, 0.0, 0.0]
    top = out["most_excluded"]["feminine"]
    assert top[0]["feminine"] == "fem0" and top[0]["masculine"] == "masc0" and top[0]["models_excluding"] == 2
    assert top[0]["models"] == ["b", "c"]
    # correlations: the third model's asymmetry is constant -> NaN with the reason, not a crash
    by_pair = {(e["a"], e["b"]): e for e in out["correlation"]["1-AO"]}
    assert by_pair[("never-fails", "c")]["pearson"]["reason"].startswith("c is constant")
    assert by_pair[("never-fails", "b")]["pearson"]["value"] == pytest.approx(stats.pearsonr(pm.values["1-AO"][:, 0], pm.values["1-AO"][:, 1])[0])
    assert "1-RBO(p=0.98)" in out["correlation"]
    with pytest.raises(AuditError, match="tau = 5"):
        audit_corpus(pm, texts, replace(settings, tau=5))


# --- real runs ----------------------------------------------------------------------------------------


def test_pair_matrix_from_real_tfidf_runs(tmp_path, small_data):
    ts = read_testset(small_data, "pt")
    cache = EmbeddingCache(tmp_path / "cache")
    settings = EvalSettings(bootstrap_resamples=100, permutation_resamples=100)
    blocks = {m.meta.name: evaluate_language(ts, m, cache, settings, progress=False)[0] for m in (CharTfidf(), CharTfidf512())}
    pm = pair_matrix(blocks, "masculine", 10, settings.measure_objects)
    assert pm.models == ["tfidf-char", "tfidf-char-512"] and len(pm.pairs) == 4
    # graded pair measures and graded gaps only: identical_top1 and Gap(acc@1) are yes/no
    assert list(pm.values) == ["1-AO", "1-RBO(p=0.98)", "AP_M-AP_F"]
    rows = {(r["pair_id"], r["m_id"], r["f_id"]): r for r in blocks["tfidf-char"]["per_pair"] if r["corpus"] == "masculine"}
    for i, key in enumerate(pm.pairs):
        assert pm.values["1-AO"][i, 0] == pytest.approx(1 - rows[key]["AO"])
        assert pm.values["AP_M-AP_F"][i, 0] == pytest.approx(rows[key]["AP_M"] - rows[key]["AP_F"])
    with pytest.raises(AuditError, match="acc@3"):
        pair_matrix(blocks, "masculine", 3, settings.measure_objects)


def test_run_audit_on_inline_sets_writes_tables_and_plots(tmp_path, small_data):
    doc, runs = run_audit(small_data, ["pt", "es"], [CharTfidf(), CharTfidf512()], EmbeddingCache(tmp_path / "c"),
                          EvalSettings(bootstrap_resamples=100, permutation_resamples=100),
                          AuditSettings(tau=1, bootstrap_resamples=100), progress=False)
    assert [m["name"] for m in doc["models"]] == ["tfidf-char", "tfidf-char-512"] and len(runs) == 2
    # the per-model documents are evaluate()'s, the results `eval run` writes (timings apart)
    alone = evaluate(small_data, ["pt", "es"], CharTfidf512(), EmbeddingCache(tmp_path / "c"),
                     EvalSettings(bootstrap_resamples=100, permutation_resamples=100), progress=False)
    for lang in ("pt", "es"):
        del alone["languages"][lang]["timing"], runs[1]["languages"][lang]["timing"]
    assert runs[1] == alone and doc["testset"] == alone["testset"]
    pt = doc["languages"]["pt"]
    assert set(pt["corpora"]) == {"masculine", "feminine"}
    assert pt["corpora"]["masculine"]["exclusion"]["tau"] == 1
    assert pt["mitigation"]["pairs"] == 4
    text = audit_markdown(doc)
    assert "k = 10, ρ = 0.1, τ = 1" in text and "by construction" in text and "tfidf-char × tfidf-char-512" in text
    plots = write_audit_plots(doc, tmp_path / "plots")
    assert {p.name for p in plots} == {f"{k}_{lang}.png" for k in ("correlation", "exclusion", "mitigation") for lang in ("pt", "es")}
    assert all(p.stat().st_size > 0 for p in plots)
    # The mitigation figure: corpus variants as rows, symmetry / MAP / acc@1 as columns, each naming the
    # made-identical pairs as 1.0 by construction; the PNG has that 3 x 2 grid's landscape shape.
    fig = mitigation_figure("pt", pt["mitigation"], ["tfidf-char", "tfidf-char-512"], "RBO(p=0.98)")
    titles = [ax.get_title() for ax in fig.axes]
    assert [t.split(",")[0] for t in titles] == ["symmetry", "MAP", "acc@1"] * 2
    assert all("by construction" in t and "masculine corpora" in t for t in titles[:3])
    ticks = [t.get_text() for t in fig.axes[1].get_xticklabels()]
    assert ticks == ["MAP_F\nbefore", "MAP_F\nafter", "MAP_M\nbefore", "MAP_M\nafter"]
    # Every inline pair becomes identical: nothing is left to measure, the bars are empty, the titles say so.
    assert pt["mitigation"]["pairs_identical_after"] == 4 and "0 pairs still different" in titles[0]
    bars = fig.axes[2].patches  # acc@1 panel: 4 groups x 2 models
    assert len(bars) == 8 and all(np.isnan(b.get_height()) for b in bars)
    width, height = Image.open(tmp_path / "plots" / "mitigation_pt.png").size
    assert width > 1.5 * height
    assert "MAP and acc@1 of the pairs that still differ" in text


def test_cli_refuses_bad_parameters_clearly(tmp_path, small_data):
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,m-use,m-e5-small-q4", "--tau", "4",
                "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "error: tau = 4 is larger than the number of models (3)" in r.stderr
    assert "Traceback" not in r.stderr
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "at least two different models" in r.stderr and "undefined for one model" in r.stderr
    # k = 0 must not fall back to the default silently; rho outside [0, 1] is refused
    for flag, value, message in (("--k", "0", "audit.k must be >= 1, got 0"), ("--rho", "1.5", "rho must be in [0, 1]"),
                                 ("--rho", "-0.1", "rho must be in [0, 1]")):
        r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,m-use", flag, value, "--out", str(tmp_path / "o"))
        assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, (flag, value, r.stderr)
    r = run_cli("audit", "--data", str(tmp_path / "missing"), "--models", "tfidf-char,m-use", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "missing: no such folder" in r.stderr
    params = tmp_path / "params.yaml"
    params.write_text("audit:\n  k: ten\n", encoding="utf-8")
    r = run_cli("audit", "--data", str(small_data), "--params", str(params), "--models", "tfidf-char,m-use", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and f"error: {params}: audit.k is 'ten'" in r.stderr and "ten" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()  # refused before any scoring
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,m-use", "--lang", "xx", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "no test set for ['xx']" in r.stderr


@pytest.mark.slow
def test_cli_audit_with_m_use_and_tfidf(tmp_path, small_data):
    out = tmp_path / "audit"
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,m-use", "--tau", "1", "--rho", "0.2",
                "--out", str(out), "--cache", str(tmp_path / "cache"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "k=10" in r.stdout and "rho=0.2" in r.stdout and "tau=1" in r.stdout
    (doc_file,) = out.glob("audit__*.json")
    doc = json.loads(doc_file.read_text())
    assert doc["audit_settings"]["rho"] == 0.2 and doc["audit_settings"]["tau"] == 1
    es = doc["languages"]["es"]["corpora"]["masculine"]
    assert es["exclusion"]["pairs_scored"] + es["exclusion"]["pairs_left_out"] == es["pairs"] == 3
    assert {p.name for p in (out / "runs").iterdir()} == {f"tfidf-char__{doc['testset']['version']}.json",
                                                          f"m-use__{doc['testset']['version']}.json"}
    assert (out / "plots" / "exclusion_pt.png").stat().st_size > 0
    assert "became identical strings" in r.stdout
    # Run again (the embeddings now come from the cache, the timings differ): the same bytes, every file, so that
    # `dvc repro` leaves dvc.lock as it was; the run documents carry no timing, as eval run's
    again = tmp_path / "again"
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,m-use", "--tau", "1", "--rho", "0.2",
                "--out", str(again), "--cache", str(tmp_path / "cache"), "--quiet")
    assert r.returncode == 0, r.stderr
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert [f for f in files if (out / f).read_bytes() != (again / f).read_bytes()] == []
    for run in (out / "runs").iterdir():
        assert all("timing" not in block for block in json.loads(run.read_text())["languages"].values())
    # --document-only (the pipeline's audit stage, whose folder git keeps): the same two files, nothing else
    only = tmp_path / "only"
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,m-use", "--tau", "1", "--rho", "0.2",
                "--out", str(only), "--cache", str(tmp_path / "cache"), "--quiet", "--document-only")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in only.iterdir()) == sorted([doc_file.name, "audit.md"])
    assert all((only / name).read_bytes() == (out / name).read_bytes() for name in (doc_file.name, "audit.md"))


def test_cli_refuses_a_model_name_that_names_no_model_before_scoring_any(tmp_path, small_data):
    """A bad name anywhere in the list stops the audit before the first model is scored, naming where it was
    written: params.yaml's audit.models and its position, or --models."""
    params = tmp_path / "params.yaml"
    for models, message in (("[tfidf-char, m-use, m-use-v9]", "audit.models[2]: unknown model 'm-use-v9'"),
                            ("[tfidf-char, '']", "audit.models[1] is ''; give a model name"),
                            ("[tfidf-char, ' m-use']", "audit.models[1] is ' m-use'; give a model name")):
        params.write_text(f"audit:\n  models: {models}\n", encoding="utf-8")
        r = run_cli("audit", "--data", str(small_data), "--params", str(params), "--out", str(tmp_path / "o"),
                    "--cache", str(tmp_path / "cache"), "--quiet")
        assert r.returncode == 2 and r.stderr.startswith(f"error: {params}: {message}"), r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert not (tmp_path / "o").exists() and not (tmp_path / "cache").exists()  # nothing scored, nothing cached
    r = run_cli("audit", "--data", str(small_data), "--models", "tfidf-char,nope", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.startswith("error: --models[1]: unknown model 'nope'")


def test_two_model_names_of_one_results_file_are_refused(tmp_path, monkeypatch):
    from eval.models import ModelNotFoundError, check_model_names

    monkeypatch.chdir(tmp_path)
    (tmp_path / "org_model").mkdir()  # a local folder whose slug is the Hugging Face id's
    with pytest.raises(ModelNotFoundError, match=r"'org/model' and 'org_model' would write the same results file "
                                                 r"runs/org_model__<version>\.json"):
        check_model_names(["org/model", "org_model"], "--models")
    check_model_names(["org/model", "tfidf-char", "m-use"], "--models")  # distinct: accepted without loading any
