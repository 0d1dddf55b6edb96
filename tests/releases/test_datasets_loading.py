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
