"""Against a real Argilla server (redis-server + osmem-server + argilla-server on 127.0.0.1): push, an
annotator submits through the API the annotation UI uses, pull, rebuild, re-push, server failures."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import httpx
import polars as pl
import pytest

from annotation import AnnotationError
from annotation.cli import main, push_translations
from annotation.params import load_params
from eval.testset import read_testset
from tests.annotation.conftest import translations_frame, write_english_source, write_params

pytestmark = [pytest.mark.server, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]


# --- what an annotator does -------------------------------------------------------------------------------

def owner_http(stack) -> httpx.Client:
    return httpx.Client(base_url=stack.api_url, headers={"X-Argilla-Api-Key": stack.owner_api_key}, timeout=30)


def create_annotator(stack, username: str, workspace: str) -> str:
    """Create an annotator in the workspace with the SDK (as owner); return the annotator's own API key."""
    import argilla as rg

    owner = rg.Argilla(api_url=stack.api_url, api_key=stack.owner_api_key)
    with warnings.catch_warnings():  # "User with username … not found": the first call creates the user
        warnings.filterwarnings("ignore", message=r"User with username .* not found", category=UserWarning)
        found = owner.users(username)
    user = found or rg.User(username=username, password=f"{username}-password-1",
                                            role="annotator", client=owner).create()
    user.add_to_workspace(owner.workspaces(workspace))
    with owner_http(stack) as http:
        return http.get(f"/api/v1/users/{user.id}").raise_for_status().json()["api_key"]


class Annotator:
    """The calls the Argilla annotation UI makes for a signed-in annotator."""

    def __init__(self, stack, api_key: str):
        self.http = httpx.Client(base_url=stack.api_url, headers={"X-Argilla-Api-Key": api_key}, timeout=30)

    def dataset_id(self, name: str) -> str:
        items = self.http.get("/api/v1/me/datasets").raise_for_status().json()["items"]
        return next(d["id"] for d in items if d["name"] == name)

    def queue(self, dataset_name: str) -> dict[str, dict]:
        """external id -> record, from the annotator's own queue, oldest first (sorted by insertion time)."""
        ds = self.dataset_id(dataset_name)
        oldest_first = {"sort": [{"scope": {"entity": "record", "property": "inserted_at"}, "order": "asc"}]}
        resp = self.http.post(f"/api/v1/me/datasets/{ds}/records/search",
                              params={"include": "responses,suggestions", "limit": 1000}, json=oldest_first)
        return {it["record"]["external_id"]: it["record"] for it in resp.raise_for_status().json()["items"]}

    def pending(self, dataset_name: str, **body) -> list[dict]:
        """The annotator's pending records as the UI asks for them (its filters, no sort unless given)."""
        ds = self.dataset_id(dataset_name)
        ui = {"query": {}, "filters": {"and": [
            {"type": "terms", "scope": {"entity": "response", "property": "status"}, "values": ["pending"]},
            {"type": "terms", "scope": {"entity": "record", "property": "status"}, "values": ["pending"]},
            *body.pop("filters", []),
        ]}, **body}
        resp = self.http.post(f"/api/v1/me/datasets/{ds}/records/search", params={"limit": 1000}, json=ui)
        return [it["record"] for it in resp.raise_for_status().json()["items"]]

    def submit(self, record: dict, values: dict) -> None:
        body = {"values": {q: {"value": v} for q, v in values.items() if v is not None}, "status": "submitted"}
        self.http.post(f"/api/v1/records/{record['id']}/responses", json=body).raise_for_status()


def suggestion_values(annotator: Annotator, record: dict) -> dict:
    """The pre-filled answers, as the UI shows them (suggestions come with their question id)."""
    questions = annotator.http.get(f"/api/v1/datasets/{record['dataset_id']}/questions").raise_for_status().json()
    names = {q["id"]: q["name"] for q in questions["items"]}
    return {names[s["question_id"]]: s["value"] for s in record.get("suggestions") or []}


def server_record_ids(stack, dataset_name: str, workspace: str) -> list[str]:
    import argilla as rg

    owner = rg.Argilla(api_url=stack.api_url, api_key=stack.owner_api_key)
    ds = owner.datasets(dataset_name, workspace=workspace)
    return [str(r.id) for r in ds.records(batch_size=1000, with_suggestions=False, with_responses=False)]


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


# --- tests ------------------------------------------------------------------------------------------------

def test_round_trip_push_annotate_pull_rebuild(argilla_env, tmp_path, capsys):
    stack = argilla_env
    source = write_english_source(tmp_path / "en")
    data, cache = tmp_path / "data", tmp_path / "cache"
    build = [sys.executable, "-m", "builder", "build", "--source", str(source), "--lang", "pt",
             "--translator", "bergamot", "--out", str(data), "--cache", str(cache), "--quiet"]
    subprocess.run(build, cwd=REPO, check=True, capture_output=True)
    params = write_params(tmp_path / "params.yaml", "round-trip", min_submitted=2)
    corrections = tmp_path / "corrections" / "pt.jsonl"
    p = ["--params", str(params)]

    # push translations: one record per English source
    n_sources = pl.read_parquet(data / "pt" / "translations.parquet").height
    # one record per English title of the slice (docs/annotation.md): 5 queries and their 14 distinct documents
    assert n_sources == 19 and len((source / "corpus_documents.tsv").read_text().splitlines()) == 14
    rc, out, err = run_cli([*p, "push", "translations", "--data", str(data), "--lang", "pt"], capsys)
    assert rc == 0, err
    assert f"pt-translations-t1: {n_sources} new, 0 changed, 0 unchanged" in out

    ana = Annotator(stack, create_annotator(stack, "ana", "round-trip"))
    rui = Annotator(stack, create_annotator(stack, "rui", "round-trip"))
    queue = ana.queue("pt-translations-t1")
    assert len(queue) == n_sources
    # records are pushed worst first (confidence ascending), and the verdict is there to filter on
    order = [r["metadata"]["confidence"] for r in queue.values()]
    assert order == sorted(order) and len(set(order)) > 1
    assert all("verdict" in r["metadata"] and "severity" in r["metadata"] for r in queue.values())
    # The UI sends no sort by default and argilla-server then shuffles each annotator's queue, so "worst
    # first" is the sort the guidelines name: metadata confidence, in the UI's first order (ascending).
    by_confidence = ana.pending("pt-translations-t1",
                                sort=[{"scope": {"entity": "metadata", "metadata_property": "confidence"}, "order": "asc"}])
    confidences = [r["metadata"]["confidence"] for r in by_confidence]
    assert len(confidences) == n_sources and confidences == sorted(confidences)
    # filtering by the check's verdict gives exactly the records with that verdict
    for verdict in {r["metadata"]["verdict"] for r in queue.values()}:
        only = ana.pending("pt-translations-t1", filters=[
            {"type": "terms", "scope": {"entity": "metadata", "metadata_property": "verdict"}, "values": [verdict]}])
        assert sorted(r["external_id"] for r in only) == sorted(
            k for k, r in queue.items() if r["metadata"]["verdict"] == verdict)
    guidelines = ana.http.get(f"/api/v1/datasets/{ana.dataset_id('pt-translations-t1')}").json()["guidelines"]
    assert "**Gender marking**" in guidelines and "metadata → confidence** (ascending" in guidelines  # written into the dataset
    questions = ana.http.get(f"/api/v1/datasets/{ana.dataset_id('pt-translations-t1')}/questions").json()["items"]
    marking = next(q for q in questions if q["name"] == "gender_marking")
    # the masculine / feminine / neutral, and the answer that confirms a drop with one click (issue 35)
    assert {o["value"] for o in marking["settings"]["options"]} == {
        "gendered", "neutral", "masculine_only", "feminine_only", "no_title"}
    baker = queue["pt-translation-Baker"]
    # Baker: the translator's 'padaria' is a bakery; the lexicon layer already made 'padeira' (verdict reinflected,
    # flagged for review); both annotators confirm it and flag the translator's wrong sense -> decided
    assert suggestion_values(ana, baker) == {"masculine": "padeiro", "feminine": "padeira", "gender_marking": "gendered"}
    assert "Ela é uma padaria." in baker["fields"]["source"]  # the translator's own output stays visible
    assert "(masculine) · padaria (feminine)" in baker["fields"]["titles"].splitlines()[1]
    assert "· padeira (feminine)" in baker["fields"]["titles"].splitlines()[0]
    for who in (ana, rui):
        who.submit(baker, {"masculine": "padeiro", "feminine": "Padeira ", "gender_marking": "gendered",
                           "flag": "wrong_sense"})
    # Lawyer: both accept the machine text -> decided, no text change
    lawyer = queue["pt-translation-Lawyer"]
    for who in (ana, rui):
        who.submit(lawyer, {**suggestion_values(who, lawyer)})
    # Civil engineer: only ana -> decided by one vote
    ana.submit(queue["pt-translation-Civil_Engineer"],
               {"masculine": "engenheiro civil", "feminine": "engenheira civil", "gender_marking": "gendered"})
    # Acupuncturist: they disagree on the gender marking -> a tie, listed for review, not applied
    acu = queue["pt-translation-Acupuncturist"]
    ana.submit(acu, {"masculine": "acupunturista", "feminine": "acupunturista", "gender_marking": "neutral"})
    rui.submit(acu, {"masculine": "acupunturista", "feminine": "acupunturista", "gender_marking": "gendered"})

    # relevance: pool from tfidf-char, then one pair labelled relevant by both
    rc, out, err = run_cli([*p, "push", "relevance", "--data", str(data), "--lang", "pt", "--models", "tfidf-char",
                            "--depth", "3"], capsys)
    assert rc == 0, err
    assert "pt-relevance-t1:" in out and "from the top 3 of tfidf-char" in out
    rel_out = out
    rel_queue = ana.queue("pt-relevance-t1")
    pooled = [r for r in rel_queue.values() if r["metadata"]["origin"] == "pool"]
    assert pooled, "the pool proposed nothing"
    ts = read_testset(data, "pt")
    pair = pooled[0]
    assert "query_source_id" not in pair["metadata"]  # bookkeeping metadata is hidden from annotators
    with owner_http(stack) as http:
        meta = http.get(f"/api/v1/records/{pair['id']}").raise_for_status().json()["metadata"]
    q_src, d_src = meta["query_source_id"], meta["doc_source_id"]
    for who in (ana, rui):
        who.submit(pair, {"relevant": "relevant"})

    # pull
    rc, out, err = run_cli([*p, "pull", "--lang", "pt", "--out", str(corrections)], capsys)
    assert rc == 0, err
    pull_out = out
    lines = {(l["kind"], l.get("source_id") or (l["query_source_id"], l["doc_source_id"])): l
             for l in map(json.loads, corrections.read_text(encoding="utf-8").splitlines())}
    assert set(lines) == {("translation", "Baker"), ("translation", "Lawyer"), ("translation", "Civil_Engineer"),
                          ("relevance", (q_src, d_src))}
    b = lines[("translation", "Baker")]
    # 'Padeira ' equals the suggested text once normalised; with a flag the titles the person left are written out
    # (a flag with no title drops the source: issue 35), normalised
    assert (b["masculine"], b["feminine"], b["flag"], b["annotators"]) == ("padeiro", "padeira", "wrong_sense",
                                                                          ["ana", "rui"])
    assert b["record_id"] == "pt-translation-Baker" and b["submitted_at"].endswith("Z")
    assert (lines[("translation", "Lawyer")]["masculine"], lines[("translation", "Lawyer")]["feminine"]) == (None, None)
    # a title equal to the machine's is no correction (null); the offline translator may inflect it or not
    machine = pl.read_parquet(data / "pt" / "translations.parquet").filter(pl.col("source_id") == "Civil_Engineer")
    civil_fixed = machine["title_feminine"][0] != "engenheira civil"
    assert lines[("translation", "Civil_Engineer")]["feminine"] == ("engenheira civil" if civil_fixed else None)
    assert lines[("relevance", (q_src, d_src))]["relevant"] is True
    assert "1 tie(s) for review" in out and "pt-translation-Acupuncturist: tied on gender_marking" in out
    # agreement on gender_marking over the 3 doubly annotated records: gendered/gendered twice, neutral/gendered
    # once -> kappa = (2/3 - p_e) / (1 - p_e) with p_e = (3/3*2/3 + 0) = 2/3 -> 0
    assert "agreement translation/gender_marking: records with ≥2 annotators 3" in out
    assert "Cohen kappa 0.000" in out
    ties = [json.loads(l) for l in corrections.with_suffix(".ties.jsonl").read_text().splitlines()]
    assert [t["record_id"] for t in ties] == ["pt-translation-Acupuncturist"]

    # rebuild with the corrections: corrected text, its provenance, and the new label in the qrels
    subprocess.run([*build, "--corrections", str(corrections)], cwd=REPO, check=True, capture_output=True)
    rebuilt = read_testset(data, "pt")
    fem = rebuilt.queries.filter(pl.col("source_ids").list.contains("Baker") & (pl.col("gender") == "feminine"))
    assert fem["text"].to_list() == ["padeira"]
    assert fem["status"].to_list() == ["corrected"] and fem["provenance"].to_list() == ["human:ana,rui"]
    civil_f = rebuilt.queries.filter(pl.col("source_ids").list.contains("Civil_Engineer") & (pl.col("gender") == "feminine"))
    assert civil_f["text"].to_list() == ["engenheira civil"]
    # the builder counts a record a person reviewed as corrected, whether or not the text changed
    assert civil_f["status"].to_list() == ["corrected"] and civil_f["provenance"].to_list() == ["human:ana"]
    q_ids = rebuilt.queries.filter(pl.col("source_ids").list.contains(q_src))["id"].to_list()
    d_ids = rebuilt.corpus.filter(pl.col("source_ids").list.contains(d_src))["id"].to_list()
    new_pairs = rebuilt.qrels.filter(pl.col("query_id").is_in(q_ids) & pl.col("doc_id").is_in(d_ids))
    assert new_pairs.height >= 1 and (new_pairs["relevance"] > 0).all()
    assert ts.qrels.filter(pl.col("query_id").is_in(q_ids) & pl.col("doc_id").is_in(d_ids)).height == 0
    n_corrected = sum(t.filter(pl.col("status") == "corrected").height for t in (rebuilt.queries, rebuilt.corpus))
    summary = (f"round trip (pt): {n_sources} translation records and {len(rel_queue)} relevance records pushed; "
               f"{len(lines)} records decided ({sum(k[0] == 'translation' for k in lines)} translations, "
               f"{sum(k[0] == 'relevance' for k in lines)} relevance), 1 tie; rebuilt: {n_corrected} items corrected, "
               f"qrels {ts.qrels.height} -> {rebuilt.qrels.height} lines\n{rel_out}{pull_out}")

    # re-push: nothing new, nothing duplicated (the rebuilt Baker record changed: status corrected)
    rc, out, err = run_cli([*p, "push", "translations", "--data", str(data), "--lang", "pt"], capsys)
    assert rc == 0, err
    ids = server_record_ids(stack, "pt-translations-t1", "round-trip")
    assert len(ids) == len(set(ids)) == n_sources
    assert " 0 new," in out
    rc, out, err = run_cli([*p, "push", "translations", "--data", str(data), "--lang", "pt"], capsys)
    assert f"0 new, 0 changed, {n_sources} unchanged" in out
    # the responses survived the re-push
    assert len(ana.queue("pt-translations-t1")["pt-translation-Baker"]["responses"]) == 1
    # The counts that depend on the offline translator's output (pooled pairs, items corrected, qrels lines):
    # shown by `pytest -rP` in the passed tests' output section (docs/annotation.md), never in the progress line.
    print(summary)


def big_translations(root: Path, n: int) -> None:
    from tests.annotation.conftest import ENGLISH
    from tests.english import english_or_skip

    english_or_skip()
    rows = [l.rstrip("\n").split("\t") for l in open(ENGLISH / "corpus_documents.tsv", encoding="utf-8")][:n]
    titles = {sid: (en, en.lower(), en.lower() + "a", "gendered", []) for sid, en in rows}
    (root / "pt").mkdir(parents=True, exist_ok=True)
    translations_frame(titles).write_parquet(root / "pt" / "translations.parquet")


def test_server_stopped_mid_push_then_resumed(argilla_env, tmp_path, monkeypatch):
    stack = argilla_env
    n = 400
    big_translations(tmp_path / "data", n)
    params = load_params(write_params(tmp_path / "params.yaml", "resume", batch_size=20,
                                       dataset_version="r1"))
    outcome: dict = {}

    def push():
        try:
            outcome["report"] = push_translations(tmp_path / "data", "pt", params)
        except AnnotationError as exc:
            outcome["error"] = str(exc)

    worker = threading.Thread(target=push)
    worker.start()
    deadline = time.monotonic() + 120
    with owner_http(stack) as http:
        while time.monotonic() < deadline and worker.is_alive():
            found = http.get("/api/v1/me/datasets").json().get("items", [])
            ds = next((d for d in found if d["name"] == "pt-translations-r1"), None)
            if ds and http.get(f"/api/v1/datasets/{ds['id']}/records", params={"limit": 1}).json()["total"] > 0:
                break
            time.sleep(0.05)
    stack.stop_argilla()  # the uvicorn process, by PID, while records are being sent
    worker.join(120)
    try:
        assert "error" in outcome, f"the push finished before the server stopped: {outcome}"
        assert f"cannot reach Argilla at {stack.api_url}" in outcome["error"]
        assert "Run the command again" in outcome["error"]
    finally:
        stack.start_argilla()
    sent_before = len(server_record_ids(stack, "pt-translations-r1", "resume"))
    assert 0 < sent_before < n
    report = push_translations(tmp_path / "data", "pt", params)
    assert (report.new, report.changed, report.unchanged) == (n - sent_before, 0, sent_before)
    ids = server_record_ids(stack, "pt-translations-r1", "resume")
    assert len(ids) == len(set(ids)) == n


def test_wrong_key_and_down_server_keep_the_corrections_file(argilla_env, tmp_path, monkeypatch, capsys):
    from annotation.testing.stack import free_port

    corrections = tmp_path / "pt.jsonl"
    before = json.dumps({"kind": "relevance", "lang": "pt", "query_source_id": "Lawyer", "doc_source_id": "Paralegal",
                         "record_id": "pt-relevance-Lawyer-Paralegal", "relevant": True, "annotators": ["ana"],
                         "submitted_at": "2026-11-29T15:00:00Z"}) + "\n"
    corrections.write_text(before, encoding="utf-8")
    params = write_params(tmp_path / "params.yaml", "errors")

    monkeypatch.setenv("ARGILLA_API_KEY", "not-the-key")
    rc, _, err = run_cli(["--params", str(params), "pull", "--lang", "pt", "--out", str(corrections)], capsys)
    assert rc == 2 and err.startswith("error: ") and f"Argilla at {argilla_env.api_url} rejected the API key" in err
    assert "not-the-key" not in err  # secrets are never printed

    down = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("ARGILLA_API_URL", down)
    monkeypatch.setenv("ARGILLA_API_KEY", argilla_env.owner_api_key)
    rc, _, err = run_cli(["--params", str(params), "pull", "--lang", "pt", "--out", str(corrections)], capsys)
    assert rc == 2 and f"error: cannot reach Argilla at {down}" in err
    assert corrections.read_text(encoding="utf-8") == before

    monkeypatch.delenv("ARGILLA_API_URL")
    rc, _, err = run_cli(["--params", str(params), "pull", "--lang", "pt", "--out", str(corrections)], capsys)
    assert rc == 2 and "ARGILLA_API_URL is not set" in err


def test_push_relevance_bad_model_and_bad_depth_are_clear_errors(argilla_env, tmp_path, capsys):
    from tests.annotation.conftest import write_tiny_testset

    write_tiny_testset(tmp_path / "data")
    params = write_params(tmp_path / "params.yaml", "bad-input")
    push = ["--params", str(params), "push", "relevance", "--data", str(tmp_path / "data"), "--lang", "pt"]
    rc, _, err = run_cli([*push, "--models", "tfidf-char", "no-such-model"], capsys)
    assert rc == 2 and "error: --models: unknown model 'no-such-model'" in err and "Traceback" not in err
    # a bad eval: section (the ranking's settings) is the params file's error, not one of the names given
    params.write_text(json.dumps({"annotation": {"workspace": "bad-input", "dataset_version": "t1"},
                                  "eval": {"memory_budget_mb": "lots"}}), encoding="utf-8")
    rc, _, err = run_cli([*push, "--models", "tfidf-char"], capsys)
    assert rc == 2 and err.startswith("error: ") and "eval.memory_budget_mb" in err and "--models" not in err, err
    write_params(params, "bad-input", relevance={"pool_depth": 0})
    rc, _, err = run_cli(push, capsys)
    assert rc == 2 and err == f"error: {params}: annotation.relevance.pool_depth is 0; it must be 1 or more\n"
    with pytest.raises(SystemExit) as stop:
        main([*push, "--depth", "0"])
    assert stop.value.code == 2 and "--depth: '0' is not a whole number of 1 or more" in capsys.readouterr().err
