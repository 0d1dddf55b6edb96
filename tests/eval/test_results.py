"""Typed results: old documents stay readable, the store is keyed by model, revision and language, and
`eval run` reruns only what is not stored."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eval.errors import EvalError
from eval.results import SCHEMA_VERSION, LanguageResult, RunResult, read_store
from eval.testset import write_testset

from .testsets import make_testset

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "results-v1-tfidf-char-small.json"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_a_document_written_before_schema_versions_reads_and_round_trips(tmp_path):
    old = RunResult.from_disk(FIXTURE)
    assert old.schema_version == 1 and set(old.languages) == {"es", "pt"}
    assert old.languages["pt"]["corpora"]["masculine"]["symmetry"]["RBO(p=0.98)"]["n"] == 4
    again = RunResult.from_disk(old.to_disk(tmp_path / "run.json"))
    assert again == old
    newer = json.loads(FIXTURE.read_text(encoding="utf-8")) | {"schema_version": SCHEMA_VERSION + 1}
    (tmp_path / "newer.json").write_text(json.dumps(newer), encoding="utf-8")
    with pytest.raises(EvalError, match=f"newer.json: results schema version {SCHEMA_VERSION + 1}.*upgrade"):
        RunResult.from_disk(tmp_path / "newer.json")
    with pytest.raises(EvalError, match="not an eval results file"):
        RunResult.from_document({"model": {}}, "x.json")


def test_eval_run_reruns_only_new_combinations_and_collect_puts_them_together(tmp_path):
    data = tmp_path / "data"
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), data)
    out, cache = tmp_path / "runs", tmp_path / "cache"
    common = ("--data", str(data), "--model", "tfidf-char", "--out", str(out), "--cache", str(cache), "--quiet")
    first = run_cli("run", *common, "--lang", "pt")
    assert first.returncode == 0, first.stderr
    [stored_pt] = (out / "store" / "tfidf-char").glob("*/pt.json")
    assert stored_pt.parent.name == "ngrams=2-3-4_buckets=4096_idf=unfitted"  # the revision as loaded
    before = stored_pt.stat().st_mtime_ns
    second = run_cli("run", *common, "--lang", "pt", "--lang", "es")
    assert second.returncode == 0, second.stderr
    assert "tfidf-char pt: stored result matches" in second.stdout and "tfidf-char es: masculine corpus AO" in second.stdout
    assert stored_pt.stat().st_mtime_ns == before
    docs = {p: json.loads(p.read_text(encoding="utf-8")) for p in out.glob("tfidf-char__*.json")}
    [(doc_path, doc)] = [(p, d) for p, d in docs.items() if set(d["languages"]) == {"pt", "es"}]
    assert doc["schema_version"] == SCHEMA_VERSION
    # other settings do not match the stored results: rerun
    params = tmp_path / "params.yaml"
    params.write_text("eval:\n  seed: 1\n", encoding="utf-8")
    third = run_cli("run", *common, "--lang", "pt", "--params", str(params), "--out", str(tmp_path / "seed1"))
    assert "stored result matches" not in third.stdout
    forced = run_cli("run", *common, "--lang", "pt", "--force")
    assert forced.returncode == 0 and "stored result matches" not in forced.stdout and stored_pt.stat().st_mtime_ns != before
    # the store alone gives the same document
    results = read_store(out / "store")
    assert sorted(r.lang for r in results) == ["es", "pt"] and all(isinstance(r, LanguageResult) for r in results)
    collected = run_cli("collect", str(out / "store"), "--out", str(tmp_path / "collected"))
    assert collected.returncode == 0, collected.stderr
    again = json.loads((tmp_path / "collected" / doc_path.name).read_text(encoding="utf-8"))
    assert again["languages"] == doc["languages"] and again["settings"] == doc["settings"]
    md = doc_path.with_suffix(".md").name
    assert (tmp_path / "collected" / md).read_text() == (out / md).read_text()


def _as_plain(doc):
    """The document with every ResultRows as the list of dicts it stands for: what json.dumps is given."""
    from eval.results import ResultRows

    if isinstance(doc, ResultRows):
        return list(doc)
    if isinstance(doc, dict):
        return {k: _as_plain(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_as_plain(v) for v in doc]
    return doc


def test_write_json_writes_the_bytes_json_dumps_writes(tmp_path, monkeypatch):
    """``write_json`` encodes values itself (json.dump with an indent is json's slow Python encoder): the reference
    is json.dumps(indent=1, ensure_ascii=False) of the same document with its rows as lists, on every kind of value
    json writes, rows at several depths and in several slices, and the errors json raises."""
    import numpy as np
    import polars as pl

    from eval import results
    from eval.results import ResultRows, write_json

    monkeypatch.setattr(results, "_ROWS_PER_SLICE", 3)  # rows cross slice boundaries
    frame = pl.DataFrame({
        "corpus": ["masculine", "feminine", None, "ç\"\\\n\t\u0001😀", "x", "y", "z"],
        "form": [None, "doublet", None, None, "neomorpheme", None, None],
        "AP": [0.1, None, float("nan"), float("inf"), -float("inf"), 1e-300, -0.0],
        "n": [1, None, 3, -4, 2**40, 0, 7],
        "top": [True, False, None, True, True, False, True],
        "ids": [["a", "b"], [], None, ["c"], ["d"], ["e"], ["f", "g", "h"]],
    })
    rows = ResultRows(frame, omit_none=("form",))
    doc = {
        "schema_version": 2, "none": None, "yes": True, "no": False, "float": 0.30000000000000004, "big": 10**30,
        "np": np.float64(0.25), "nan": float("nan"), "empty": {}, "empty_list": [], "tuple": (1, "a", None),
        "keys": {1: "int", 2.5: "float", True: "true", None: "none", "ü": "str"},
        "languages": {"pt": {"per_query": rows, "per_pair": ResultRows(frame.head(0)), "nested": [[rows], {"r": rows}]}},
        "text": "ação \u2028 </script>",
    }
    write_json(tmp_path / "doc.json", doc)
    assert (tmp_path / "doc.json").read_text(encoding="utf-8") == json.dumps(_as_plain(doc), indent=1, ensure_ascii=False) + "\n"
    assert len(rows) == 7 and "form" not in list(rows)[0] and list(rows)[1]["form"] == "doublet"
    for bad, error in (({"x": object()}, "not JSON serializable"), ({"x": np.int64(3)}, "not JSON serializable"),
                       ({(1, 2): 3}, "keys must be str, int, float, bool or None")):
        with pytest.raises(TypeError, match=error):
            json.dumps(bad)
        with pytest.raises(TypeError, match=error):
            write_json(tmp_path / "bad.json", bad)
        assert not (tmp_path / "bad.json").exists()
