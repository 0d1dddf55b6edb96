"""What an annotator is shown and asked (issue 27), on the real Argilla server and in its real UI.

The suggestions follow the verdict (a masculine-only title is suggested as such and submits with its title
boxes untouched), the doubt and the flags are metadata an annotator sorts and filters by, suggestions carry
a score and an agent, relevance records show the English query and sort by query then rank, answers may say
a translation is wrong, and two annotators per relevance pair give the agreement. Headless Chromium signs in
to the Argilla UI and keeps a screenshot of a translation record and of a relevance record: copied to
$ANNOTATION_SCREENSHOT_DIR, by default <system temp>/gendered-job-titles-artifacts/.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import polars as pl
import pytest

from tests.annotation.conftest import write_params, write_tiny_testset
from tests.annotation.test_argilla_server import Annotator, create_annotator, run_cli, suggestion_values
from tests.eval.test_site import Chromium

pytestmark = [pytest.mark.server, pytest.mark.slow]
PASSWORD = "{}-password-1"  # create_annotator's


def masculine_only_waiter(root: Path) -> None:
    """The tiny set's Waiter as the build gives an occupation without a known feminine: no feminine title."""
    path = root / "pt" / "translations.parquet"
    df = pl.read_parquet(path)
    waiter = pl.col("source_id") == "Waiter"
    df.with_columns(
        pl.when(waiter).then(None).otherwise(pl.col("title_feminine")).alias("title_feminine"),
        pl.when(waiter).then(pl.lit("unverified")).otherwise(pl.col("verdict")).alias("verdict"),
        pl.when(waiter).then(pl.lit(["no_feminine_form"])).otherwise(pl.col("flags")).alias("flags"),
    ).write_parquet(path)


def reinflected_lawyer(root: Path) -> None:
    """The tiny set's Lawyer as the lexicon layer leaves a translator's uninflected feminine: remade."""
    path = root / "pt" / "translations.parquet"
    df = pl.read_parquet(path)
    lawyer = pl.col("source_id") == "Lawyer"
    df.with_columns(
        pl.when(lawyer).then(pl.lit("Ela é uma advogado.")).otherwise(pl.col("output_feminine")).alias("output_feminine"),
        pl.when(lawyer).then(pl.lit("advogado")).otherwise(pl.col("mt_feminine")).alias("mt_feminine"),
        pl.when(lawyer).then(pl.lit("reinflected")).otherwise(pl.col("verdict")).alias("verdict"),
        pl.when(lawyer).then(pl.lit("translator's feminine 'advogado' is not the masculine's inflection"))
        .otherwise(pl.col("reason")).alias("reason"),
        pl.when(lawyer).then(pl.lit(["reinflected_feminine"])).otherwise(pl.col("flags")).alias("flags"),
    ).write_parquet(path)


def metadata_filter(name: str, *values: str) -> dict:
    return {"type": "terms", "scope": {"entity": "metadata", "metadata_property": name}, "values": list(values)}


def discard(annotator: Annotator, record: dict) -> None:
    annotator.http.post(f"/api/v1/records/{record['id']}/responses",
                        json={"values": {}, "status": "discarded"}).raise_for_status()


def screenshot(stack, username: str, dataset_id: str, name: str, tmp: Path) -> tuple[Path, str]:
    """Sign in to the Argilla UI as ``username`` (typing into its form), open the dataset's annotation view,
    and keep a PNG of it; return the kept path and the text the page shows."""
    browser = Chromium(tmp / f"chromium-{name}")
    try:
        for domain in ("Page", "Runtime"):
            browser.page(f"{domain}.enable")
        browser.page("Emulation.setDeviceMetricsOverride", width=1400, height=1100, deviceScaleFactor=1, mobile=False)

        def js(expression: str):
            return browser.page("Runtime.evaluate", returnByValue=True, expression=expression)["result"].get("value")

        def wait_until(expression: str, what: str, timeout: float = 60.0) -> None:
            deadline = time.monotonic() + timeout
            while not js(expression):
                if time.monotonic() > deadline:
                    raise AssertionError(f"the Argilla UI did not show {what} within {timeout:.0f} s:\n"
                                         + str(js("document.body.innerText"))[:2000])
                time.sleep(0.5)

        browser.page("Page.navigate", url=f"{stack.api_url}/sign-in")
        wait_until("!!document.querySelector('input[type=password]')", "the sign-in form")
        for selector, text in (("input[name=Username]", username), ("input[type=password]", PASSWORD.format(username))):
            js(f"document.querySelector('{selector}').focus()")
            browser.page("Input.insertText", text=text)
        js("document.querySelector('button[type=submit]').click()")
        wait_until("!location.pathname.startsWith('/sign-in')", "the home page after signing in")
        browser.page("Page.navigate", url=f"{stack.api_url}/dataset/{dataset_id}/annotation-mode")
        wait_until("document.body.innerText.includes('Submit')", "a record to annotate")
        time.sleep(1.0)  # the suggestions and fonts settle after the form appears
        text = js("document.body.innerText")
        png = tmp / f"{name}.png"
        png.write_bytes(base64.b64decode(browser.page("Page.captureScreenshot", format="png")["data"]))
    finally:
        browser.close()
    folder = Path(os.environ.get("ANNOTATION_SCREENSHOT_DIR")
                  or Path(tempfile.gettempdir()) / "gendered-job-titles-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    kept = Path(shutil.copy(png, folder / png.name))
    print(f"annotation screenshot: {kept}")
    return kept, text


def test_translation_records_suggest_from_the_verdict_and_sort_by_doubt(argilla_env, tmp_path, capsys):
    stack = argilla_env
    write_tiny_testset(tmp_path / "data")
    masculine_only_waiter(tmp_path / "data")
    reinflected_lawyer(tmp_path / "data")
    # own dataset names and annotators: the session's stack is shared with the other tests, whose annotators
    # look datasets up by name
    params = write_params(tmp_path / "params.yaml", "view-translations", dataset_version="view")
    p = ["--params", str(params)]
    rc, out, err = run_cli([*p, "push", "translations", "--data", str(tmp_path / "data"), "--lang", "pt"], capsys)
    assert rc == 0, err
    vera = Annotator(stack, create_annotator(stack, "vera", "view-translations"))
    name = "pt-translations-view"
    queue = vera.queue(name)

    # flags and severity are metadata the annotator filters by: exactly the records that carry them
    only = vera.pending(name, filters=[metadata_filter("flags", "template_not_stripped")])
    assert [r["external_id"] for r in only] == ["pt-translation-Attorney"]
    serious = vera.pending(name, filters=[metadata_filter("severity", "serious")])
    assert [r["external_id"] for r in serious] == ["pt-translation-Attorney"]
    # the UI's first sort order is ascending: on confidence that is worst first (issue 35)
    worst_first = vera.pending(name, sort=[{"scope": {"entity": "metadata", "metadata_property": "confidence"}, "order": "asc"}])
    assert worst_first[0]["external_id"] == "pt-translation-Attorney"
    confidences = [r["metadata"]["confidence"] for r in worst_first]
    assert confidences == sorted(confidences)
    # suggestions say how sure and who: the record's confidence, and the translation itself (MT) here
    waiter = queue["pt-translation-Waiter"]
    by_question = {s["question_id"]: s for s in waiter["suggestions"]}
    assert {s["agent"] for s in by_question.values()} >= {"MT", "gender check"}
    assert {s["score"] for s in by_question.values()} == {waiter["metadata"]["confidence"]}
    # masculine only: the verdict's marking is suggested and the empty feminine box does not block Submit
    assert suggestion_values(vera, waiter) == {"masculine": "garçom", "gender_marking": "masculine_only"}
    assert waiter["metadata"]["severity"] == "check" and waiter["metadata"]["flags"] == ["no_feminine_form"]
    vera.submit(waiter, {"gender_marking": "masculine_only"})
    # a pair whose feminine box the annotator emptied: the proposed feminine stays
    vera.submit(queue["pt-translation-Nurse"], {"masculine": "enfermeiro", "gender_marking": "gendered"})

    corrections = tmp_path / "corrections" / "pt.jsonl"
    rc, out, err = run_cli([*p, "pull", "--lang", "pt", "--out", str(corrections)], capsys)
    assert rc == 0, err
    lines = {l["source_id"]: l for l in map(json.loads, corrections.read_text(encoding="utf-8").splitlines())}
    assert (lines["Waiter"]["masculine"], lines["Waiter"]["feminine"], lines["Waiter"]["gender_marking"]) == (
        None, None, "masculine_only")
    assert (lines["Nurse"]["masculine"], lines["Nurse"]["feminine"]) == (None, None)

    # the record in the UI: another annotator, who has set every other record aside
    eva = Annotator(stack, create_annotator(stack, "eva", "view-translations"))
    for rid, record in eva.queue(name).items():
        if rid != "pt-translation-Lawyer":
            discard(eva, record)
    png, text = screenshot(stack, "eva", eva.dataset_id(name), "annotation-translation-record", tmp_path)
    assert png.stat().st_size > 10_000
    # the machine's feminine and the proposed one under their own names, and what the layer changed
    for shown in ("Lawyer", "She is a Lawyer. → Ela é uma advogado.",
                  "Proposed: advogado (masculine) · advogada (feminine)",
                  "The translation's own: advogado (masculine) · advogado (feminine)",
                  "The feminine title was changed by the ending rule: 'advogado' → 'advogada'.",
                  "Translator's feminine 'advogado' is not the masculine's inflection.",
                  "Corrected feminine title", "gender check"):
        assert shown in text, shown


def test_relevance_records_group_by_query_take_two_annotators_and_flag_wrong_translations(argilla_env, tmp_path, capsys):
    stack = argilla_env
    write_tiny_testset(tmp_path / "data", relevant=(("Lawyer", "Attorney"), ("Nurse", "Waiter")))
    params = write_params(tmp_path / "params.yaml", "view-relevance", dataset_version="view",
                          relevance={"audit_sample": 0})
    p = ["--params", str(params)]
    rc, out, err = run_cli([*p, "push", "relevance", "--data", str(tmp_path / "data"), "--lang", "pt",
                            "--models", "tfidf-char", "--depth", "3"], capsys)
    assert rc == 0, err
    name = "pt-relevance-view"
    vera = Annotator(stack, create_annotator(stack, "vera", "view-relevance"))
    ivo = Annotator(stack, create_annotator(stack, "ivo", "view-relevance"))
    dataset = vera.http.get(f"/api/v1/datasets/{vera.dataset_id(name)}").raise_for_status().json()
    assert dataset["distribution"] == {"strategy": "overlap", "min_submitted": 2}
    questions = vera.http.get(f"/api/v1/datasets/{dataset['id']}/questions").raise_for_status().json()["items"]
    assert [q["name"] for q in questions] == ["relevant"]  # one question: a number key answers and submits

    # the English query is visible to annotators; sorting by query number then best rank groups each query
    by_query = vera.pending(name, sort=[
        {"scope": {"entity": "metadata", "metadata_property": "query_number"}, "order": "asc"},
        {"scope": {"entity": "metadata", "metadata_property": "best_rank"}, "order": "asc"}])
    keys = [(r["metadata"]["query_number"], r["metadata"]["best_rank"]) for r in by_query]
    assert keys == sorted(keys) and len(by_query) > 1
    first = by_query[0]
    assert first["metadata"]["query_title"] == first["fields"]["query"].splitlines()[0]
    assert "query_source_id" not in first["metadata"]
    one_query = vera.pending(name, filters=[metadata_filter("query_title", first["metadata"]["query_title"])])
    assert {r["metadata"]["query_title"] for r in one_query} == {first["metadata"]["query_title"]}

    vera.submit(first, {"relevant": "not_relevant_translation_wrong"})
    ivo.submit(first, {"relevant": "not_relevant"})
    corrections = tmp_path / "corrections" / "pt.jsonl"
    rc, out, err = run_cli([*p, "pull", "--lang", "pt", "--out", str(corrections)], capsys)
    assert rc == 0, err
    [line] = map(json.loads, corrections.read_text(encoding="utf-8").splitlines())
    assert line["relevant"] is False and line["annotators"] == ["ivo", "vera"]
    [wrong] = map(json.loads, corrections.with_suffix(".translation_wrong.jsonl").read_text().splitlines())
    assert wrong["record_id"] == first["external_id"] and wrong["annotators"] == ["vera"]
    assert "1 relevance answer(s) mark a translation wrong" in out
    # two annotators agreed on one record: one category only, so alpha is undefined rather than n/a
    assert "agreement relevance/relevant: records with ≥2 annotators 1, Krippendorff alpha (nominal) undefined" in out
    figures = [json.loads(l) for l in corrections.with_suffix(".agreement.jsonl").read_text().splitlines()]
    assert figures == [{"kind": "relevance", "question": "relevant", "records": 1, "alpha": "undefined",
                        "kappa": "undefined"}]

    eva = Annotator(stack, create_annotator(stack, "eva", "view-relevance"))
    for record in eva.pending(name)[1:]:
        discard(eva, record)
    png, text = screenshot(stack, "eva", eva.dataset_id(name), "annotation-relevance-record", tmp_path)
    assert png.stat().st_size > 10_000
    for shown in ("Query: English title", "relevant, but a translation is wrong", "not relevant"):
        assert shown in text, shown
