"""Issue 35: a correction, once pulled, survives any number of push → pull → build rounds. Against the real Argilla
server: round 1 is answer → pull → build; rounds 2 and 3 are push → pull → build with nobody answering anew. Every
item, qrel and correction line after round 3 equals round 1's; the re-pushed record shows the person's text as
theirs; a draft is said to be skipped; a flag without a title drops its source; a rule reaches every title holding
its term, doubtful ones too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from eval.testset import read_testset
from tests.annotation.conftest import write_english_source, write_params
from tests.annotation.test_annotator_view import discard, screenshot
from tests.annotation.test_argilla_server import Annotator, create_annotator, owner_http, run_cli, suggestion_values

pytestmark = [pytest.mark.server, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


def snapshot(data: Path) -> dict:
    ts = read_testset(data, "pt")
    return {"queries": ts.queries.sort("id").to_dicts(), "corpus": ts.corpus.sort("id").to_dicts(),
            "qrels": ts.qrels.sort("query_id", "doc_id").to_dicts()}


def save_draft(who: Annotator, record: dict, values: dict) -> None:
    body = {"values": {q: {"value": v} for q, v in values.items() if v is not None}, "status": "draft"}
    who.http.post(f"/api/v1/records/{record['id']}/responses", json=body).raise_for_status()


def test_three_rounds_keep_every_correction(argilla_env, tmp_path, capsys):
    stack = argilla_env
    source = write_english_source(tmp_path / "en")
    data, cache = tmp_path / "data", tmp_path / "cache"
    corrections = tmp_path / "corrections" / "pt.jsonl"
    corrections.parent.mkdir()
    corrections.write_text("", encoding="utf-8")
    build = [sys.executable, "-m", "builder", "build", "--source", str(source), "--lang", "pt", "--translator",
             "bergamot", "--out", str(data), "--cache", str(cache), "--quiet", "--corrections", str(corrections)]
    subprocess.run(build, cwd=REPO, check=True, capture_output=True)
    # a dataset version of its own (annotators of other tests may see a pt-translations-t1 of another workspace);
    # two answers per record, so that a second annotator still finds the corrected record pending
    p = ["--params", str(write_params(tmp_path / "params.yaml", "rounds", dataset_version="rounds3",
                                            min_submitted=2))]
    machine = {r["source_id"]: r for r in pl.read_parquet(data / "pt" / "translations.parquet").iter_rows(named=True)}

    rc, out, err = run_cli([*p, "push", "translations", "--data", str(data), "--lang", "pt"], capsys)
    assert rc == 0, err
    ana = Annotator(stack, create_annotator(stack, "ana", "rounds"))
    queue = ana.queue("pt-translations-rounds3")
    settled = [sid for sid, r in machine.items() if r["verdict"] in ("gendered", "reinflected")
               and r["title_masculine"] != r["title_feminine"]]
    assert len(settled) >= 5, settled
    written, flagged, accepted, drafted = settled[:4]
    dropped = next(sid for sid in machine if sid not in settled[:5])
    # a written correction, both forms
    ana.submit(queue[f"pt-translation-{written}"], {
        "masculine": machine[written]["title_masculine"] + " júnior",
        "feminine": machine[written]["title_feminine"] + " júnior", "gender_marking": "gendered",
        "reason": "the English says junior"})
    # wrong sense with the feminine corrected: a flag and a title keeps the title
    ana.submit(queue[f"pt-translation-{flagged}"], {
        "masculine": machine[flagged]["title_masculine"], "feminine": "profissional liberal",
        "gender_marking": "gendered", "flag": "wrong_sense"})
    # the proposal accepted as it is
    ana.submit(queue[f"pt-translation-{accepted}"], suggestion_values(ana, queue[f"pt-translation-{accepted}"]))
    # a drop confirmed with one click: no title, a flag, boxes emptied
    ana.submit(queue[f"pt-translation-{dropped}"], {"gender_marking": "no_title", "flag": "not_a_job_title"})
    # a draft is not pulled
    save_draft(ana, queue[f"pt-translation-{drafted}"], {"masculine": "rascunho", "feminine": "rascunho",
                                                         "gender_marking": "neutral"})
    # relevance: one pair labelled relevant, one not relevant
    rc, out, err = run_cli([*p, "push", "relevance", "--data", str(data), "--lang", "pt", "--models", "tfidf-char",
                            "--depth", "3"], capsys)
    assert rc == 0, err
    rel = list(ana.queue("pt-relevance-rounds3").values())
    ana.submit(rel[0], {"relevant": "relevant"})
    ana.submit(rel[1], {"relevant": "not_relevant"})
    # a term rule on a word of a title nobody answered
    # (the modifier of a settled two-word title, replaced by a complement the lexicon reads: the pair stays settled)
    other = next(sid for sid in settled[4:] if len(machine[sid]["title_masculine"].split()) == 2)
    word = machine[other]["title_masculine"].split()[1]
    rc, out, err = run_cli([*p, "rule", "--data", str(data), "--lang", "pt", "--out", str(corrections), "--find",
                            word, "--replace", "de campo", "--english", machine[other]["source_text"].split()[0],
                            "--apply", "--annotator", "ana"], capsys)
    assert rc == 0, err

    rounds = []
    for n in (1, 2, 3):
        if n > 1:  # a maintainer's round: rebuild, push again, pull again, nobody answers anew
            rc, out, err = run_cli([*p, "push", "translations", "--data", str(data), "--lang", "pt"], capsys)
            assert rc == 0, err
        rc, pulled, err = run_cli([*p, "pull", "--lang", "pt", "--out", str(corrections)], capsys)
        assert rc == 0, err
        assert "skipped: 1 draft and 0 discarded response(s)" in pulled
        if n == 1:
            assert "6 decided record(s) pulled: 6 new, 0 changed, 0 kept" in pulled
        else:
            assert "6 decided record(s) pulled: 0 new, 0 changed, 6 kept as pulled before" in pulled
        subprocess.run(build, cwd=REPO, check=True, capture_output=True)
        rounds.append((snapshot(data), corrections.read_text(encoding="utf-8")))

    assert rounds[1] == rounds[0] and rounds[2] == rounds[0]
    items, lines = rounds[0]
    lines = {json.loads(l).get("source_id"): json.loads(l) for l in lines.splitlines()}
    w = lines[written]
    assert (w["masculine"], w["feminine"], w["reason"]) == (machine[written]["title_masculine"] + " júnior",
                                                            machine[written]["title_feminine"] + " júnior",
                                                            "the English says junior")
    assert lines[flagged]["feminine"] == "profissional liberal" and lines[flagged]["flag"] == "wrong_sense"
    assert (lines[accepted]["masculine"], lines[accepted]["feminine"]) == (None, None)
    assert (lines[dropped]["gender_marking"], lines[dropped]["flag"]) == (None, "not_a_job_title")
    assert drafted not in lines
    texts = {(r["text"], r["status"], r["provenance"]) for part in ("queries", "corpus") for r in items[part]
             if written in r["source_ids"] and r["form"] in ("masculine", "feminine")}
    assert {t for t, _, _ in texts} == {machine[written]["title_masculine"] + " júnior",
                                        machine[written]["title_feminine"] + " júnior"}
    assert {(s, pv) for _, s, pv in texts} == {("corrected", "human:ana")}
    assert not any(dropped in r["source_ids"] for part in ("queries", "corpus") for r in items[part])
    ruled = [r for part in ("queries", "corpus") for r in items[part] if other in r["source_ids"]]
    assert ruled and all(r["status"] == "rule" and "rule:r1" in r["provenance"] for r in ruled)

    # the re-pushed record shows the person's text as theirs; what pull compares with stays the build's proposal
    record = ana.queue("pt-translations-rounds3")[f"pt-translation-{written}"]
    assert suggestion_values(ana, record)["masculine"] == machine[written]["title_masculine"] + " júnior"
    agents = {s["agent"] for s in record["suggestions"] if s["value"] == machine[written]["title_masculine"] + " júnior"}
    assert agents == {"person ana"}
    assert "Corrected by person ana" in record["fields"]["titles"]
    with owner_http(stack) as http:
        meta = http.get(f"/api/v1/records/{record['id']}").raise_for_status().json()["metadata"]
    assert meta["proposed_masculine"] == machine[written]["title_masculine"]

    # the same record in the real UI, as another annotator opens it after round 3 (a screenshot is kept)
    vera = Annotator(stack, create_annotator(stack, "vera", "rounds"))
    for rid, rec in vera.queue("pt-translations-rounds3").items():
        if rid != f"pt-translation-{written}":
            discard(vera, rec)
    png, text = screenshot(stack, "vera", vera.dataset_id("pt-translations-rounds3"), "annotation-re-pushed-record", tmp_path)
    assert png.stat().st_size > 10_000
    assert "Corrected by person ana" in text and machine[written]["title_masculine"] + " júnior" in text
    assert f"Proposed: {machine[written]['title_masculine']} (masculine)" in text
