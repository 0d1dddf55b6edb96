"""Malformed results files fed to `eval report` and `eval compare`: one `error:` line and exit status 2 (or a
report of what is valid, exit 0), never a traceback. Eight hand-made cases, then a hypothesis fuzz test."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
GOOD = json.loads((REPO / "tests" / "eval" / "fixtures" / "results-v1-tfidf-char-small.json").read_text())


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def _first_language(doc: dict) -> str:
    return next(iter(doc["languages"]))


def _cases() -> dict[str, bytes]:
    lang = _first_language(GOOD)
    wrong_types = copy.deepcopy(GOOD)
    wrong_types["languages"][lang] = "not a mapping"
    missing = {k: v for k, v in GOOD.items() if k != "languages"}
    lists = copy.deepcopy(GOOD)
    lists["languages"] = [lists["languages"][lang]]
    schema = dict(GOOD, schema_version=99)
    model = dict(GOOD, model=["a", "b"])
    figures = copy.deepcopy(GOOD)
    figures["languages"][lang] = {k: [] for k in figures["languages"][lang]}
    text = json.dumps(GOOD).encode()
    return {"wrong-types": json.dumps(wrong_types).encode(), "missing-keys": json.dumps(missing).encode(),
            "truncated": text[: len(text) // 2], "not-json": b"\x89PNG\r\n\x1a\n not json at all",
            "schema-version": json.dumps(schema).encode(), "lists-for-dicts": json.dumps(lists).encode(),
            "model-not-a-string": json.dumps(model).encode(), "figures-emptied": json.dumps(figures).encode(),
            "top-level-list": b"[1, 2, 3]"}


def _check(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode in (0, 2), (done.returncode, done.stderr[-2000:])
    if done.returncode == 2:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and done.stderr.startswith("error: "), done.stderr[-2000:]


@pytest.mark.parametrize("name", list(_cases()))
@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_malformed_results_file_is_one_error_line(tmp_path, name, command):
    bad = tmp_path / f"{name}.json"
    bad.write_bytes(_cases()[name])
    args = ["report", str(bad), "--out", str(tmp_path / "site")] if command == "report" else ["compare", str(bad)]
    done = _eval(*args, cwd=tmp_path)
    _check(done)
    assert done.returncode == 2 and str(bad) in done.stderr, done.stderr[-2000:]
    if command == "report":
        assert not (tmp_path / "site").exists()


def _mutations():
    json_values = st.recursive(st.none() | st.booleans() | st.integers(-5, 10**12) | st.floats(allow_nan=True)
                               | st.text(max_size=8), lambda kids: st.lists(kids, max_size=3)
                               | st.dictionaries(st.text(max_size=6), kids, max_size=3), max_leaves=8)

    def paths(doc, prefix=()):
        yield prefix
        if isinstance(doc, dict):
            for k, v in doc.items():
                yield from paths(v, (*prefix, k))
        elif isinstance(doc, list):
            for i, v in enumerate(doc[:3]):
                yield from paths(v, (*prefix, i))

    every = [p for p in paths(GOOD) if p][:4000]
    return st.lists(st.tuples(st.sampled_from(every), json_values | st.just("__delete__")), min_size=1, max_size=4)


def _apply(doc, edits):
    doc = copy.deepcopy(doc)
    for path, value in edits:
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            if value == "__delete__":
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    return doc


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=_mutations(), command=st.sampled_from(["report", "compare"]))
def test_fuzzed_results_files_never_give_a_traceback(tmp_path_factory, edits, command):
    tmp = tmp_path_factory.mktemp("fuzz")
    bad = tmp / "r.json"
    bad.write_text(json.dumps(_apply(GOOD, edits), allow_nan=True))
    args = ["report", str(bad), "--out", str(tmp / "site")] if command == "report" else ["compare", str(bad)]
    _check(_eval(*args, cwd=tmp))
