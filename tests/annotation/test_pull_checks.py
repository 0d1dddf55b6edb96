"""`annotation pull` runs every line it is about to write through the corrections reader
(builder/corrections.py check_line): a malformed answer from Argilla is one error line and nothing is written."""

from __future__ import annotations

import json
import types

import pytest

import annotation.cli as cli
from annotation.pull import Fetched, PulledRecord, Vote

GOOD = {"masculine": "parteiro", "feminine": "parteira", "gender_marking": "gendered"}


def _serve(monkeypatch, answers: dict, annotator: str = "ana", stamp: str = "2026-01-01T10:00:00Z"):
    record = PulledRecord("pt-translation-Midwife", {"machine_masculine": "parteiro", "machine_feminine": "parteiro"},
                          {"source_id": "Midwife"}, [Vote(annotator, answers, stamp)])

    class Client:
        def datasets(self, name, workspace=None):
            return object() if "translation" in name else None

    server = types.SimpleNamespace(url="http://127.0.0.1:1", client=Client())
    monkeypatch.setattr(cli, "connect", lambda *a, **k: server)
    monkeypatch.setattr(cli, "ensure_workspace", lambda server, name: "ws")
    monkeypatch.setattr(cli, "fetch_submitted", lambda server, dataset: Fetched([record]))
    monkeypatch.setattr(cli, "agreement", lambda records, answers: [])


def test_a_well_formed_answer_is_written(monkeypatch, tmp_path, capsys):
    _serve(monkeypatch, dict(GOOD))
    out = tmp_path / "pt.jsonl"
    assert cli.main(["pull", "--lang", "pt", "--out", str(out)]) == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["feminine"] == "parteira"


@pytest.mark.parametrize("answers, annotator, stamp", [
    (dict(GOOD, feminine="parte\x00ira"), "ana", "2026-01-01T10:00:00Z"),  # NUL
    (dict(GOOD, feminine="parte\x1bira"), "ana", "2026-01-01T10:00:00Z"),  # another control character
    (dict(GOOD, feminine="parte\ud800ira"), "ana", "2026-01-01T10:00:00Z"),  # a lone surrogate
    (dict(GOOD, feminine="\u200b\u200b"), "ana", "2026-01-01T10:00:00Z"),  # no visible character
    (dict(GOOD), "", "2026-01-01T10:00:00Z"),  # no annotator name
], ids=["nul", "control", "surrogate", "invisible", "blank-annotator"])
def test_a_malformed_answer_is_one_error_and_nothing_is_written(monkeypatch, tmp_path, capsys, answers, annotator, stamp):
    _serve(monkeypatch, answers, annotator, stamp)
    out = tmp_path / "pt.jsonl"
    before = json.dumps({"kind": "relevance", "lang": "pt", "query_source_id": "Lawyer", "doc_source_id": "Attorney",
                         "relevant": True, "record_id": "r1", "annotators": ["rui"],
                         "submitted_at": "2025-01-01T00:00:00Z"}) + "\n"
    out.write_text(before)
    rc = cli.main(["pull", "--lang", "pt", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and err.startswith("error: Argilla dataset ") and len(err.splitlines()) == 1, err
    assert "record pt-translation-Midwife" in err and "nothing was written" in err
    assert out.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pt.jsonl"]
