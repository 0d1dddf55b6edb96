"""The extra query forms (doublet, neomorpheme) in `eval run`, the report, the audit and the doublet corpus variant,
on small inline test sets; golden values from the scalar definitions (eval.metrics), ir_measures and the paired test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from eval.errors import EvalError
from eval.evaluate import evaluate_language
from eval.metrics import average_overlap, rbo
from eval.models import CharTfidf, EmbeddingCache, load_model
from eval.params import EvalSettings, read_eval_settings
from eval.ranking import SCORES
from eval.stats import paired_randomization_test
from eval.testset import ITEM_SCHEMA, TestSet, read_testset, write_testset
from eval.testset import testset_digest as digest_of_set  # imported by another name: pytest collects test*

from .golden import MEASURES_BEFORE_NDCG, assert_json_close
from .testsets import EXTRA_CORPUS, forms_testset, make_testset

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"

def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def form_pair_row(result: dict, corpus: str, form_id: str, reference: str) -> dict:
    (row,) = [r for r in result["per_form_pair"]
              if r["corpus"] == corpus and r["form_id"] == form_id and r["reference"] == reference]
    return row


@pytest.mark.parametrize("model_name", ["tfidf-char", "m-use"])
def test_a_doublet_written_as_the_masculine_ranks_as_the_masculine(tmp_path, forms_data, model_name):
    ts = read_testset(forms_data, "pt")
    model = CharTfidf() if model_name == "tfidf-char" else load_model("m-use")
    result, _ = evaluate_language(ts, model, EmbeddingCache(tmp_path / "cache"), EvalSettings(), progress=False)
    for corpus in ("masculine", "feminine"):
        vs_m = form_pair_row(result, corpus, "doublet:advogado", "masculine")
        assert (vs_m["AO"], vs_m["RBO(p=0.98)"], vs_m["identical_top1"]) == (1.0, 1.0, True)
        assert vs_m["AP_form"] == vs_m["AP_reference"]
        # against the feminine query it is the masculine query's M x F symmetry
        vs_f = form_pair_row(result, corpus, "doublet:advogado", "feminine")
        (pair,) = [p for p in result["per_pair"] if p["corpus"] == corpus and p["pair_id"] == "ptq-Lawyer"]
        assert (vs_f["AO"], vs_f["RBO(p=0.98)"]) == (pair["AO"], pair["RBO(p=0.98)"])
    counts = result["counts"]["forms"]
    assert counts == {"doublet": {"queries": 4, "pairs_vs_M": 4, "pairs_vs_F": 4},
                      "neomorpheme": {"queries": 2, "pairs_vs_M": 2, "pairs_vs_F": 2}}


def test_form_figures_equal_the_definitions_and_ir_measures(tmp_path, forms_data):
    """Each doublet query ranked here from its own scores (self-matches dropped, ties by id descending):
    AO/RBO against the masculine query's ranking from the scalar definitions, AP and MAP from ir_measures."""
    import ir_measures
    from ir_measures import AP, Qrel, ScoredDoc

    ts = read_testset(forms_data, "pt")
    model = CharTfidf()
    result, _ = evaluate_language(ts, model, EmbeddingCache(tmp_path / "cache"), EvalSettings(), progress=False)
    docs = ts.corpus_for("masculine")
    ids, sources = docs["id"].to_list(), docs["source_ids"].to_list()
    vecs = model.encode(docs["text"].to_list())
    queries = ts.queries
    text_of = dict(zip(queries["id"].to_list(), queries["text"].to_list()))
    source_of = dict(zip(queries["id"].to_list(), queries["source_ids"].to_list()))

    def scores(qid: str) -> np.ndarray:
        return np.asarray((vecs @ model.encode([text_of[qid]], role="query")[0])).ravel()

    def ranked(qid: str, drop: set[str]) -> list[str]:
        s = scores(qid)
        keep = [i for i in range(len(ids)) if not set(sources[i]) & drop]
        return [ids[i] for i in sorted(keep, key=lambda i: (-s[i], [-ord(c) for c in ids[i]]))]

    doublets = queries.filter(pl.col("form") == "doublet")
    masc = {p: q for q, p in queries.filter(pl.col("gender") == "masculine").select("id", "pair_id").iter_rows()}
    ao, rbo_values, run, qrels = [], [], [], []
    for qid, pair_id in doublets.select("id", "pair_id").iter_rows():
        drop = set(source_of[qid]) | set(source_of[masc[pair_id]])
        rx, rm = ranked(qid, drop), ranked(masc[pair_id], drop)
        ao.append(average_overlap(rx, rm))
        rbo_values.append(rbo(rx, rm, 0.98))
        s = scores(qid)
        kept = [i for i in range(len(ids)) if not set(sources[i]) & set(source_of[qid])]
        run += [ScoredDoc(qid, ids[i], float(s[i])) for i in kept]
        relevant = set(ts.qrels.filter(pl.col("query_id") == qid)["doc_id"]) & {ids[i] for i in kept}
        qrels += [Qrel(qid, d, 1) for d in relevant]
        row = form_pair_row(result, "masculine", qid, "masculine")
        assert row["AO"] == pytest.approx(ao[-1], abs=1e-9) and row["RBO(p=0.98)"] == pytest.approx(rbo_values[-1], abs=1e-9)
    expected_ap = {m.query_id: m.value for m in ir_measures.iter_calc([AP], qrels, run)}
    per_query = {r["query_id"]: r for r in result["per_query"] if r["corpus"] == "masculine"}
    for qid, value in expected_ap.items():
        assert per_query[qid]["AP"] == pytest.approx(value, abs=1e-9)
        assert per_query[qid]["form"] == "doublet" and per_query[qid]["gender"] == "inclusive"
    block = result["corpora"]["masculine"]["forms"]["doublet"]
    assert block["MAP"]["value"] == pytest.approx(np.mean(list(expected_ap.values())), abs=1e-9)
    assert block["MAP"]["n"] == len(expected_ap) == 4
    assert block["symmetry"]["vs_M"]["AO"]["value"] == pytest.approx(np.mean(ao), abs=1e-9)
    assert block["symmetry"]["vs_M"]["RBO(p=0.98)"]["value"] == pytest.approx(np.mean(rbo_values), abs=1e-9)
    first_relevant = [float(ranked(q, set(source_of[q]))[0] in set(ts.qrels.filter(pl.col("query_id") == q)["doc_id"]))
                      for q in doublets["id"].to_list()]
    assert block["accuracy"]["acc@1"]["value"] == pytest.approx(np.mean(first_relevant))
    lo, hi = block["MAP"]["ci95"]
    assert lo <= block["MAP"]["value"] <= hi


def test_paired_gaps_are_the_paired_test_of_the_per_query_values(tmp_path, forms_data):
    ts = read_testset(forms_data, "pt")
    settings = EvalSettings(permutation_resamples=2000)
    result, _ = evaluate_language(ts, CharTfidf(), EmbeddingCache(tmp_path / "cache"), settings, progress=False)
    per_query = {(r["corpus"], r["query_id"]): r for r in result["per_query"]}
    for corpus in ("masculine", "feminine"):
        for form in ("doublet", "neomorpheme"):
            parity = result["corpora"][corpus]["forms"][form]["parity"]
            for reference, short in (("masculine", "M"), ("feminine", "F")):
                rows = [r for r in result["per_form_pair"] if r["corpus"] == corpus and r["form"] == form and r["reference"] == reference]
                for measure in ("AP", "acc@1"):
                    diffs = np.array([per_query[(corpus, r["form_id"])][measure] - per_query[(corpus, r["reference_id"])][measure]
                                      for r in rows if r["AP_form"] is not None and r["AP_reference"] is not None])
                    gap = parity[f"paired_{measure}_{form}-{measure}_{short}"]
                    assert gap["n"] == len(diffs) > 0
                    assert gap["value"] == pytest.approx(diffs.mean(), abs=1e-12)
                    assert gap["p_value"] == paired_randomization_test(diffs, resamples=2000, seed=0)


def test_extra_forms_leave_the_masculine_and_feminine_figures_as_they_were(tmp_path):
    """The same set with and without its extra forms: every M/F figure, row and worst pair is the same (dense
    model: scores are exact, so the form queries in a block change no other query's scores)."""
    with_forms, plain = forms_testset(), make_testset("pt")
    model, cache = load_model("m-use"), EmbeddingCache(tmp_path / "cache")
    a, _ = evaluate_language(with_forms, model, cache, EvalSettings(), progress=False)
    b, _ = evaluate_language(plain, model, cache, EvalSettings(), progress=False)
    for corpus in ("masculine", "feminine"):
        assert "forms" in a["corpora"][corpus] and "forms" not in b["corpora"][corpus]
        assert {k: v for k, v in a["corpora"][corpus].items() if k != "forms"} == b["corpora"][corpus]
    assert a["per_pair"] == b["per_pair"] and a["worst_pairs"] == b["worst_pairs"]
    assert [r for r in a["per_query"] if r["gender"] != "inclusive"] == b["per_query"]
    # the qrels lines of the extra forms' queries are counted with the others
    assert {k: v for k, v in a["counts"].items() if k not in ("forms", "qrels_relevant")} == \
        {k: v for k, v in b["counts"].items() if k != "qrels_relevant"}
    assert a["counts"]["qrels_relevant"] > b["counts"]["qrels_relevant"]
    assert "per_form_pair" not in b and "forms" not in b["counts"]


def test_a_set_without_extra_forms_gives_the_result_of_the_toolkit_before_forms(tmp_path):
    """tests/eval/fixtures/language-result-v2-before-forms-tfidf-char-pt.json was written by the toolkit before
    the extra forms (commit 3fb761a) from this same set (`eval run --data data --model tfidf-char --store-only`);
    compared key by key in order, floats to a relative 1e-12 (golden.py says why not byte for byte)."""
    write_testset(make_testset("pt"), tmp_path / "data")
    (tmp_path / "params.yaml").write_text(f"eval:\n  measures: [{', '.join(MEASURES_BEFORE_NDCG)}]\n", encoding="utf-8")
    done = run_cli("run", "--data", "data", "--model", "tfidf-char", "--store", "store", "--store-only",
                   "--cache", "cache", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (stored,) = (tmp_path / "store").rglob("pt.json")
    golden = FIXTURES / "language-result-v2-before-forms-tfidf-char-pt.json"
    result = json.loads(stored.read_bytes())
    # that toolkit did not name how scores are made (they were not exact yet); every figure is the same
    assert result["settings"].pop("scores") == SCORES
    # nor the set's content digest the store now keys results on (issue 38): the set's own, recomputed
    assert result["testset"].pop("digest") == digest_of_set(tmp_path / "data", "pt")
    assert_json_close(result, json.loads(golden.read_bytes()))


def test_the_doublet_corpus_variant_is_an_eval_option(tmp_path):
    ts = forms_testset(corpus_doublets=True)
    model, cache = load_model("m-use"), EmbeddingCache(tmp_path / "cache")
    default, _ = evaluate_language(ts, model, cache, EvalSettings(), progress=False)
    assert list(default["corpora"]) == ["masculine", "feminine"]
    three, _ = evaluate_language(ts, model, cache, EvalSettings(corpora=("masculine", "feminine", "doublet")), progress=False)
    assert list(three["corpora"]) == ["masculine", "feminine", "doublet"]
    doublet_corpus = ts.corpus_for("doublet")
    assert three["corpora"]["doublet"]["documents"] == doublet_corpus.height
    assert doublet_corpus.filter(pl.col("form") == "doublet").height == len(EXTRA_CORPUS) > 0
    for corpus in ("masculine", "feminine"):  # a model not fitted on the corpus: the M/F corpora as by default
        assert three["corpora"][corpus] == default["corpora"][corpus]
    # the doublet corpus's rows: AP of a query over it, from the per-query rows, equal a fresh ranking's
    rows = [r for r in three["per_query"] if r["corpus"] == "doublet"]
    assert len(rows) == ts.queries.height and "forms" in three["corpora"]["doublet"]
    assert three["worst_pairs"]["doublet"] and all("abogad" not in p["masculine"] for p in three["worst_pairs"]["doublet"])

    write_testset(make_testset("pt"), tmp_path / "plain")
    with pytest.raises(EvalError, match=r"build\.forms\.corpus: true"):
        evaluate_language(read_testset(tmp_path / "plain", "pt"), model, cache, EvalSettings(corpora=("doublet",)), progress=False)


def test_eval_corpora_is_read_from_params_and_checked(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("eval:\n  corpora: [masculine, doublet]\n", encoding="utf-8")
    assert read_eval_settings(params).corpora == ("masculine", "doublet")
    assert read_eval_settings(params).describe()["corpora"] == ["masculine", "doublet"]
    assert "corpora" not in EvalSettings().describe()  # the default keeps the settings (and stored results) as before
    params.write_text("eval:\n  corpora: [masculine, neutral]\n", encoding="utf-8")
    with pytest.raises(EvalError, match="eval.corpora"):
        read_eval_settings(params)


def test_the_report_shows_the_forms_beside_masculine_and_feminine(tmp_path, forms_data):
    from eval.report import form_tables, tables_markdown

    out = tmp_path / "out"
    done = run_cli("run", "--data", str(forms_data), "--model", "tfidf-char", "--out", str(out), "--cache",
                   str(tmp_path / "cache"), "--quiet")
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("tfidf-char__*.json")
    doc = json.loads(path.read_text())
    (table,) = [t for t in form_tables([doc]) if t.anchor == "forms-pt-masculine"]
    assert [cells[0] for _, _, cells in table.rows] == ["masculine", "feminine", "doublet", "neomorpheme"]
    doublet = table.rows[2][2]
    figures = doc["languages"]["pt"]["corpora"]["masculine"]["forms"]["doublet"]
    assert doublet[1] == figures["MAP"] and doublet[3] == figures["symmetry"]["vs_M"]["AO"]
    assert doublet[-5] == figures["parity"]["paired_AP_doublet-AP_M"]
    md = (out / "tables.md").read_text()
    assert "PT, masculine corpora: query forms side by side" in md and "| tfidf-char | neomorpheme |" in md
    assert md == tables_markdown([doc])
    assert (out / "plots" / "forms.png").stat().st_size > 0

    from eval.report import summary_metrics
    from eval.site import build_site

    metrics = summary_metrics([doc])["tfidf-char"]["pt"]["masculine"]
    assert metrics["paired_AP_doublet-AP_M"] == figures["parity"]["paired_AP_doublet-AP_M"]["value"]
    index = build_site([path], tmp_path / "site")
    html = index.read_text()
    assert 'id="forms"' in html and 'id="forms-pt-feminine"' in html and "figures/forms.png" in html
    assert (tmp_path / "site" / "figures" / "forms.png").is_file()


def test_the_audit_counts_the_pairs_a_form_excludes():
    """Three models, tau = 2, k = 1, rho = 0.5; served = a relevant title at rank 1 and AP >= 0.5. Pair x1 (doublet vs M):
    two models serve M and fail the doublet -> form-excluded; x2: one model only -> not; x3: two models fail M and
    serve the doublet -> reference-excluded."""
    from eval.audit_figures import form_exclusion
    from eval.params import AuditSettings

    # (form query served?, masculine query served?) per model, per pair
    served = {"x1": [(False, True), (False, True), (True, True)],
              "x2": [(False, True), (True, True), (True, True)],
              "x3": [(True, False), (True, False), (False, False)]}
    blocks = {}
    for j, name in enumerate(("a", "b", "c")):
        per_query, per_form_pair = [], []
        for pair, outcomes in served.items():
            fx, fm = outcomes[j]
            per_query += [{"corpus": "masculine", "query_id": f"doublet:{pair}", "acc@1": float(fx), "AP": 0.9 if fx else 0.1},
                          {"corpus": "masculine", "query_id": f"m:{pair}", "acc@1": float(fm), "AP": 0.9 if fm else 0.1}]
            per_form_pair.append({"corpus": "masculine", "form": "doublet", "reference": "masculine", "pair_id": pair,
                                  "form_id": f"doublet:{pair}", "reference_id": f"m:{pair}",
                                  "AP_form": 0.9 if fx else 0.1, "AP_reference": 0.9 if fm else 0.1})
        blocks[name] = {"per_query": per_query, "per_form_pair": per_form_pair}
    out = form_exclusion(blocks, "masculine", AuditSettings(k=1, rho=0.5, tau=2, bootstrap_resamples=200))
    vs_m = out["doublet"]["vs_M"]
    assert vs_m["pairs_scored"] == 3
    assert (vs_m["form_excluded"]["count"], vs_m["reference_excluded"]["count"]) == (1, 1)
    assert vs_m["form_excluded"]["value"] == pytest.approx(1 / 3)
    assert vs_m["form_excluded_pairs"] == [{"form_id": "doublet:x1", "reference_id": "m:x1"}]
    assert vs_m["both_failed"]["count"] == 0
    assert form_exclusion({n: {"per_query": b["per_query"]} for n, b in blocks.items()}, "masculine",
                          AuditSettings(k=1, rho=0.5, tau=2)) == {}


def test_audit_reports_form_exclusion_across_real_models(tmp_path, forms_data):
    from eval.audit import run_audit
    from eval.audit_figures import form_exclusion
    from eval.audit_report import audit_markdown
    from eval.params import AuditSettings

    settings = AuditSettings(k=1, rho=0.0, tau=1, bootstrap_resamples=100)
    doc, runs = run_audit(forms_data, ["pt"], ["tfidf-char", "m-use"], EmbeddingCache(tmp_path / "cache"),
                          EvalSettings(bootstrap_resamples=100, permutation_resamples=100), settings, mitigation=False,
                          progress=False)
    blocks = {run["model"]["name"]: run["languages"]["pt"] for run in runs}
    for corpus in ("masculine", "feminine"):
        forms = doc["languages"]["pt"]["corpora"][corpus]["forms"]
        assert set(forms) == {"doublet", "neomorpheme"} and set(forms["doublet"]) == {"vs_M", "vs_F"}
        assert forms == form_exclusion(blocks, corpus, settings)
        # recount pair by pair from the runs' per-query rows: served = a relevant title at rank 1 (rho 0)
        rows = [r for r in runs[0]["languages"]["pt"]["per_form_pair"]
                if r["corpus"] == corpus and r["form"] == "doublet" and r["reference"] == "masculine"]
        hit = {name: {r["query_id"]: r["acc@1"] for r in b["per_query"] if r["corpus"] == corpus} for name, b in blocks.items()}
        expected = sum(any(hit[n][r["reference_id"]] == 1 and hit[n][r["form_id"]] == 0 for n in hit) for r in rows)
        assert forms["doublet"]["vs_M"]["form_excluded"]["count"] == expected
    assert "pairs the extra query forms exclude" in audit_markdown(doc)


def test_a_result_stored_before_forms_were_measured_is_rerun(tmp_path, forms_data):
    args = ["run", "--data", str(forms_data), "--model", "tfidf-char", "--store", str(tmp_path / "store"), "--store-only",
            "--cache", str(tmp_path / "cache"), "--quiet"]
    assert run_cli(*args).returncode == 0
    (stored,) = (tmp_path / "store").rglob("pt.json")
    again = run_cli(*args)
    assert "stored result matches" in again.stdout
    doc = json.loads(stored.read_text())
    del doc["figures"]["counts"]["forms"]  # as the toolkit before the forms wrote it
    stored.write_text(json.dumps(doc), encoding="utf-8")
    rerun = run_cli(*args)
    assert rerun.returncode == 0 and "stored result matches" not in rerun.stdout
    assert "forms" in json.loads(stored.read_text())["figures"]["counts"]



def test_a_graded_gap_reaches_the_forms_figures_tables_and_metrics(tmp_path, forms_data):
    """Gap(nDCG@10) listed: each extra form's paired nDCG@10 gap against the masculine and feminine query is in the
    results (from the per-query values), the forms table (columns after AP's) and the metrics row."""
    from eval.report import form_tables, summary_metrics

    settings = EvalSettings(bootstrap_resamples=50, permutation_resamples=200).with_measures("nDCG@10", "Gap(nDCG@10)")
    result, _ = evaluate_language(read_testset(forms_data, "pt"), CharTfidf(), EmbeddingCache(tmp_path / "c"), settings,
                                  progress=False)
    block = result["corpora"]["masculine"]
    rows = {r["query_id"]: r for r in result["per_query"] if r["corpus"] == "masculine"}
    pairs = [r for r in result["per_form_pair"] if r["corpus"] == "masculine" and r["form"] == "doublet"
             and r["reference"] == "masculine"]
    diffs = [rows[p["form_id"]]["nDCG@10"] - rows[p["reference_id"]]["nDCG@10"] for p in pairs
             if rows[p["form_id"]]["nDCG@10"] is not None and rows[p["reference_id"]]["nDCG@10"] is not None]
    gap = block["forms"]["doublet"]["parity"]["paired_nDCG@10_doublet-nDCG@10_M"]
    assert gap["n"] == len(diffs) > 0 and gap["value"] == pytest.approx(np.mean(diffs), abs=1e-12)
    # as a results document holds it (its rows written as lists)
    doc = {"model": {"name": "tfidf-char"}, "languages": {"pt": json.loads(json.dumps(result, default=list))}}
    (table,) = [t for t in form_tables([doc]) if t.anchor == "forms-pt-masculine"]
    assert table.columns[-9:] == ["AP gap vs M", "p", "AP gap vs F", "p", "nDCG@10 gap vs M", "p", "nDCG@10 gap vs F", "p", "n"]
    doublet = next(cells for _, _, cells in table.rows if cells[0] == "doublet")
    assert doublet[-5]["value"] == gap["value"]
    metrics = summary_metrics([doc])["tfidf-char"]["pt"]["masculine"]
    assert metrics["paired_nDCG@10_doublet-nDCG@10_M"] == gap["value"] and "nDCG@10_doublet" in metrics
