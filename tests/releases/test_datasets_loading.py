"""A researcher loads a release with Hugging Face `datasets`, offline, in a fresh process."""

import json
import os
import subprocess
import sys

from releases import make_release

LOAD = """
import json, sys, datasets
release = sys.argv[1]
out = {}
for lang in ("pt", "es"):
    items = datasets.load_dataset(release, lang)
    qrels = datasets.load_dataset(release, lang + "-qrels")
    q, c, r = items["queries"].to_list(), items["corpus"].to_list(), qrels["test"].to_list()
    out[lang] = {"splits": sorted(items), "queries": [x["text"] for x in q], "corpus_ids": [x["id"] for x in c],
                 "source_ids": [x["source_ids"] for x in q], "forms": [x["form"] for x in q + c],
                 "qrels": sorted((x["query_id"], x["doc_id"], x["relevance"]) for x in r)}
print(json.dumps(out))
"""


def test_load_dataset_reads_every_language_of_a_release(project, tmp_path):
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", LOAD, str(release)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    from eval.testset import read_testset

    for lang in ("pt", "es"):
        ts = read_testset(release, lang)
        assert loaded[lang]["splits"] == ["corpus", "queries"]
        assert loaded[lang]["queries"] == ts.queries["text"].to_list()
        assert loaded[lang]["corpus_ids"] == ts.corpus["id"].to_list()
        assert loaded[lang]["source_ids"] == ts.queries["source_ids"].to_list()
        assert loaded[lang]["forms"] == ts.queries["form"].to_list() + ts.corpus["form"].to_list()
        assert [tuple(r) for r in loaded[lang]["qrels"]] == sorted(ts.qrels.select("query_id", "doc_id", "relevance").iter_rows())


def test_a_release_with_extra_forms_is_made_verified_and_loaded(project, tmp_path):
    """Doublet and neomorpheme queries (gender inclusive) travel through make, verify and `datasets`."""
    import polars as pl

    from eval.testset import ITEM_SCHEMA, TestSet, validate_items, write_testset
    from releases import verify_release
    from tests.releases.conftest import record_data, small_testset

    base = small_testset("es")
    extra = [{"id": f"{form}:{text}", "text": text, "gender": "inclusive", "form": form, "pair_id": "p1",
              "source_ids": ["en-p1"], "source_texts": ["english p1"], "check_gender": "inclusive",
              "check_method": f"forms:es-{form}", "check_ok": True, "flags": [], "status": "machine",
              "provenance": "fxtranslate:0.5.0"} for form, text in (("doublet", "advogado/a"), ("neomorpheme", "advogade"))]
    queries = pl.concat([validate_items(base.queries, "fixture"),
                         pl.DataFrame(extra, schema=ITEM_SCHEMA)])
    qrels = pl.concat([base.qrels, pl.DataFrame([{"query_id": f"{f}:{t}", "doc_id": d, "relevance": 1}
                                                  for f, t in (("doublet", "advogado/a"), ("neomorpheme", "advogade"))
                                                  for d in ("d-m1", "d-n1")])])
    stats = {**base.stats, "qrels": qrels.height}
    write_testset(TestSet("es", queries, base.corpus, qrels, stats), project.data)
    record_data(project)
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    verify_release(release)
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", LOAD, str(release)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.splitlines()[-1])["es"]
    forms = dict(zip(loaded["queries"], loaded["forms"]))
    assert forms["advogado/a"] == "doublet" and forms["advogade"] == "neomorpheme" and forms["advogado"] == "masculine"
    assert ("doublet:advogado/a", "d-m1", 1) in [tuple(r) for r in loaded["qrels"]]
