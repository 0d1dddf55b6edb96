"""BEIR/MTEB-shaped files beside a release's own (params.yaml ``release.beir``; releases/beir.py): one folder per
language, query form and corpus, read as they are by `datasets` (the loader MTEB uses) with BEIR's field names;
today's files and readers unchanged; the card names both; off, the release is what it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from eval.testset import FEMININE, MASCULINE, NEUTRAL, read_testset
from releases import make_release, verify_release

LOAD = """
import json, sys, datasets
folder = sys.argv[1]
corpus = datasets.load_dataset("json", data_files=folder + "/corpus.jsonl", split="train")
queries = datasets.load_dataset("json", data_files=folder + "/queries.jsonl", split="train")
qrels = datasets.load_dataset("csv", data_files=folder + "/qrels/test.tsv", delimiter="\\t", split="train")
print(json.dumps({"corpus": corpus.to_list(), "queries": queries.to_list(), "qrels": qrels.to_list(),
                  "columns": [corpus.column_names, queries.column_names, qrels.column_names]}))
"""


def with_beir(project) -> None:
    params = yaml.safe_load(project.params.read_text(encoding="utf-8"))
    params["release"]["beir"] = True
    project.params.write_text(yaml.safe_dump(params), encoding="utf-8")
    project.commit("release.beir")


def test_each_query_form_over_each_corpus_is_a_beir_folder_datasets_reads(project, tmp_path):
    with_beir(project)
    release = project.root / "release"
    manifest = make_release(project.data, "0.1.0", release, project.params)
    assert verify_release(release).ok
    listed = {f["path"] for f in manifest["files"]}
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    for lang in ("pt", "es"):
        ts = read_testset(release, lang)  # today's reader, today's files: unchanged
        assert ts.queries.equals(read_testset(project.data, lang).queries)
        configs = sorted(p.name for p in (release / lang / "beir").iterdir())
        # the fixture: masculine, feminine and neutral queries, each with a relevant title in both corpora
        assert configs == sorted(f"{form}-queries_{corpus}-corpus" for form in (MASCULINE, FEMININE, NEUTRAL)
                                 for corpus in (MASCULINE, FEMININE))
        for name in configs:
            folder = release / lang / "beir" / name
            assert {f"{lang}/beir/{name}/{f}" for f in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")} <= listed
            done = subprocess.run([sys.executable, "-c", LOAD, str(folder)], env=env, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 0, done.stderr[-2000:]
            loaded = json.loads(done.stdout.splitlines()[-1])
            assert loaded["columns"] == [["_id", "title", "text"], ["_id", "text"], ["query-id", "corpus-id", "score"]]
            form, corpus_form = name.removesuffix("-corpus").split("-queries_")
            corpus = ts.corpus_for(corpus_form).sort("id")
            assert [(r["_id"], r["text"]) for r in loaded["corpus"]] == list(corpus.select("id", "text").iter_rows())
            queries = ts.queries_of_form(form)
            qrels = {(q, d, r) for q, d, r in ts.qrels.select("query_id", "doc_id", "relevance").iter_rows()
                     if q in set(queries["id"]) and d in set(corpus["id"]) and r > 0}
            assert {(r["query-id"], r["corpus-id"], r["score"]) for r in loaded["qrels"]} == qrels
            # every query of the form that has a relevant title in this corpus, and no other
            assert sorted((r["_id"], r["text"]) for r in loaded["queries"]) == sorted(
                queries.filter(queries["id"].is_in([q for q, _, _ in qrels])).select("id", "text").iter_rows())
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "`queries.parquet`, `corpus.parquet`" in card and "### The same sets in BEIR/MTEB's shape" in card
    assert "- `pt`: `masculine-queries_masculine-corpus`" in card and "GenericDataLoader(" in card


def test_off_by_default_the_release_holds_todays_files_only(project):
    """The versions published before release.beir are remade byte for byte: no beir folder, the same card."""
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    assert not (release / "pt" / "beir").exists()
    assert "BEIR" not in (release / "README.md").read_text(encoding="utf-8")


def test_a_harness_on_the_beir_folders_gives_evals_ndcg_with_every_title_ranked(project):
    """What the card says: a harness's nDCG@10 on a folder (its own rankings of queries.jsonl over corpus.jsonl,
    scored by ir-measures, trec_eval's nDCG) is eval run --self-match keep's, per query form and corpus."""
    import ir_measures
    import numpy as np

    from eval.evaluate import evaluate
    from eval.models import EmbeddingCache, ModelBase, ModelMeta
    from eval.params import EvalSettings
    from eval.ranking import similarity_scores

    class Letters(ModelBase):  # dense and fitted to nothing: both sides encode a text the same way
        cacheable = False
        meta = ModelMeta("letters", "1", 27)

        def encode(self, texts, role="passage"):
            out = np.ones((len(texts), 27), dtype=np.float32)
            for i, text in enumerate(texts):
                for c in text.lower():
                    if "a" <= c <= "z":
                        out[i, ord(c) - 97] += 1
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    with_beir(project)
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    doc = evaluate(release, ["pt"], Letters(), EmbeddingCache(project.root / "c"), EvalSettings(self_match="keep"), progress=False)
    compared = 0
    for folder in sorted((release / "pt" / "beir").iterdir()):
        form, corpus_form = folder.name.removesuffix("-corpus").split("-queries_")
        corpus = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
        queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
        qrels = [ir_measures.Qrel(q, d, int(s)) for q, d, s in
                 (line.split("\t") for line in (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:])]
        scores = similarity_scores(Letters().encode([q["text"] for q in queries]), Letters().encode([d["text"] for d in corpus]))
        run = [ir_measures.ScoredDoc(q["_id"], d["_id"], float(scores[i, j])) for i, q in enumerate(queries)
               for j, d in enumerate(corpus)]
        harness = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, run)[ir_measures.nDCG @ 10]
        ours = doc["languages"]["pt"]["corpora"][corpus_form]["retrieval"]["nDCG@10"][form]
        assert ours["n"] == len(queries) and abs(ours["value"] - harness) < 1e-12, (folder.name, ours, harness)
        compared += 1
    assert compared == 6


def test_a_release_with_beir_folders_is_replaced_by_the_next_one_and_a_users_file_among_them_is_refused(project):
    """A release folder is replaced whole only when it holds nothing but what make writes: the BEIR copies are
    among that, a user's file beside them is not (issue 38's rule, config.files.write_folder_atomically)."""
    from config.files import OutputPathError

    with_beir(project)
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    make_release(project.data, "0.1.1", release, project.params)
    assert json.loads((release / "manifest.json").read_text(encoding="utf-8"))["version"] == "0.1.1"
    note = next((release / "pt" / "beir").iterdir()) / "my-notes.txt"
    note.write_text("mine", encoding="utf-8")
    try:
        make_release(project.data, "0.1.2", release, project.params)
    except OutputPathError as exc:
        assert "my-notes.txt" in str(exc)
    else:
        raise AssertionError("a release folder holding a user's file was replaced")
    assert note.read_text(encoding="utf-8") == "mine"
