"""annotation.vectors: the titles' embeddings pushed as Argilla vectors for "find similar".

Against the real local stack: argilla-server 2.8.0 takes the vector fields and the records' vectors (read back
here through the SDK, equal to the eval model's own encoding), and its in-memory osmem-server refuses the k-NN
query that "find similar" sends, which the push reports as an error saying what to configure."""

from __future__ import annotations

import hashlib
import json

import httpx
import numpy as np
import pytest

from annotation import AnnotationError, translations
from annotation.cli import main
from annotation.params import VectorParams, load_params
from annotation.vectors import Embedder, with_vectors
from eval.models import load_model, unit_rows
from tests.annotation.conftest import PT_TITLES, translations_frame, write_params, write_tiny_testset


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


# --- without a server ---------------------------------------------------------------------------------------

def test_the_option_is_off_by_default_and_checked(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(json.dumps({"annotation": {}}))
    assert load_params(path).vectors is None
    path.write_text(json.dumps({"annotation": {"vectors": {"model": "m-use"}}}))
    assert load_params(path).vectors == VectorParams("m-use")
    for section, message in (({"model": ""}, "annotation.vectors.model is ''"),
                             ({"model": "m-use", "dims": 3}, "unknown key(s) annotation.vectors.dims"),
                             ({}, "model")):
        path.write_text(json.dumps({"annotation": {"vectors": section}}))
        with pytest.raises(AnnotationError) as exc:
            load_params(path)
        assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)


def test_without_vectors_the_hash_is_the_one_of_before(tmp_path):
    """Off, nothing changes: the content hash is still sha256 of [fields, metadata, suggestions], so datasets
    pushed before the option existed see their records unchanged."""
    specs = translations.record_specs(translations_frame(), "pt")
    for spec in specs:
        suggestions = {q: [s.value, s.score, s.agent] for q, s in spec.suggestions.items()}
        payload = json.dumps([spec.fields, spec.metadata, suggestions], sort_keys=True, ensure_ascii=False)
        assert spec.content_hash() == hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
    # With vectors the hash covers the model (name, revision), not the floats' last bits.
    (tmp_path / "params.yaml").write_text("eval: {}\n", encoding="utf-8")  # the defaults (a named params file must exist)
    embedded, dimension = with_vectors(specs, Embedder("tfidf-char", tmp_path / "params.yaml"))
    assert dimension == 4096
    assert all(e.content_hash() != s.content_hash() for e, s in zip(embedded, specs))
    nudged = [e.__class__(**{**e.__dict__, "vectors": {k: [x + 1e-9 for x in v] for k, v in e.vectors.items()}})
              for e in embedded]
    assert [n.content_hash() for n in nudged] == [e.content_hash() for e in embedded]


def test_an_unknown_model_is_one_error_line_before_any_server(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ARGILLA_API_URL", raising=False)
    write_tiny_testset(tmp_path / "data")
    params = write_params(tmp_path / "params.yaml", "vectors-bad", vectors={"model": "no-such-model"})
    rc, out, err = run_cli(["--params", str(params), "push", "translations", "--data", str(tmp_path / "data"),
                            "--lang", "pt"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: annotation.vectors.model: unknown model 'no-such-model'")
    assert "python -m eval models" in err


# --- against the local stack --------------------------------------------------------------------------------

def read_back(stack, workspace: str, name: str):
    """(vector field name → dimensions, record id → {vector name → vector}) through the SDK."""
    import argilla as rg

    client = rg.Argilla(api_url=stack.api_url, api_key=stack.owner_api_key)
    dataset = client.datasets(name, workspace=workspace)
    fields = {v.name: v.dimensions for v in dataset.settings.vectors}
    records = {str(r.id): dict(r.vectors) for r in dataset.records(with_vectors=True, with_responses=False)}
    return fields, records


def assert_vectors(stored: dict, expected_texts: dict[str, dict[str, str | None]], model) -> None:
    """Every record holds, for each vector name, the model's encoding of that text made unit length as eval makes
    every embedding (``eval.models.unit_rows``; float32, bit for bit)."""
    assert set(stored) == set(expected_texts)
    texts = sorted({t for per in expected_texts.values() for t in per.values() if t is not None})
    if model.fits_corpus:
        model.fit(texts)
    encoded = dict(zip(texts, unit_rows(np.asarray(model.encode(texts, role="passage"), dtype=np.float32))))
    for rid, per in expected_texts.items():
        assert set(stored[rid]) == {n for n, t in per.items() if t is not None}, rid
        for name, text in per.items():
            if text is not None:
                np.testing.assert_array_equal(np.asarray(stored[rid][name], dtype=np.float32), encoded[text])


def assert_knn_refused(err: str, dataset: str, report: str) -> None:
    """One error line: the push's report (the records are stored), then the refusal and what to configure."""
    assert err.count("\n") == 1 and err.startswith(f"error: {dataset}: {report}; the records and their vectors"), err
    assert "refused a similarity (k-NN) query ([knn] query is not supported by osmem)" in err
    assert "ARGILLA_SEARCH_ENGINE" in err and "remove annotation.vectors" in err and "Traceback" not in err


EXPECTED_TRANSLATION_TEXTS = {translations.record_id("pt", sid): {"english_vector": en, "proposed_vector": m}
                              for sid, (en, m, _f, _v, _flags) in PT_TITLES.items()}


@pytest.mark.server
@pytest.mark.slow
def test_push_stores_the_vectors_and_osmem_refuses_find_similar(argilla_env, tmp_path, capsys):
    stack = argilla_env
    write_tiny_testset(tmp_path / "data")
    params = write_params(tmp_path / "params.yaml", "vectors", vectors={"model": "m-use"})
    push = ["--params", str(params), "push", "translations", "--data", str(tmp_path / "data"), "--lang", "pt"]
    rc, _, err = run_cli(push, capsys)
    assert rc == 2
    assert_knn_refused(err, "pt-translations-t1", f"{len(PT_TITLES)} new, 0 changed, 0 unchanged")

    fields, stored = read_back(stack, "vectors", "pt-translations-t1")
    assert fields == {"english_vector": 512, "proposed_vector": 512}
    assert_vectors(stored, EXPECTED_TRANSLATION_TEXTS, load_model("m-use"))

    # The search "find similar" sends from the UI (the annotator's own search, by a record's vector) is refused
    # by osmem too: the limit is the search engine's, not the push's.
    import argilla as rg

    dataset_id = rg.Argilla(api_url=stack.api_url, api_key=stack.owner_api_key).datasets(
        "pt-translations-t1", workspace="vectors").id  # other tests' workspaces hold datasets of that name
    with httpx.Client(base_url=stack.api_url, headers={"X-Argilla-Api-Key": stack.owner_api_key}, timeout=30) as http:
        any_record = http.get(f"/api/v1/datasets/{dataset_id}/records", params={"limit": 1}).raise_for_status().json()
        similar = http.post(f"/api/v1/me/datasets/{dataset_id}/records/search",
                            json={"query": {"vector": {"name": "english_vector",
                                                       "record_id": any_record["items"][0]["id"]}}})
    assert similar.status_code == 500 and "[knn] query is not supported by osmem" in similar.text, similar.text

    rc, _, err = run_cli(push, capsys)  # again: nothing to send, the same refusal
    assert rc == 2
    assert_knn_refused(err, "pt-translations-t1", f"0 new, 0 changed, {len(PT_TITLES)} unchanged")


@pytest.mark.server
@pytest.mark.slow
def test_vectors_added_to_a_dataset_pushed_without_them(argilla_env, tmp_path, capsys):
    stack = argilla_env
    write_tiny_testset(tmp_path / "data")
    params = write_params(tmp_path / "params.yaml", "vectors-later")
    push = ["--params", str(params), "push", "translations", "--data", str(tmp_path / "data"), "--lang", "pt"]
    rc, out, err = run_cli(push, capsys)
    assert rc == 0 and err == "" and f"{len(PT_TITLES)} new" in out
    fields, stored = read_back(stack, "vectors-later", "pt-translations-t1")
    assert fields == {} and all(v == {} for v in stored.values())  # off: no vector field, no vectors

    write_params(params, "vectors-later", vectors={"model": "tfidf-char"})
    rc, _, err = run_cli(push, capsys)
    assert rc == 2
    assert_knn_refused(err, "pt-translations-t1", f"0 new, {len(PT_TITLES)} changed, 0 unchanged")  # every record resent with vectors
    fields, stored = read_back(stack, "vectors-later", "pt-translations-t1")
    assert fields == {"english_vector": 4096, "proposed_vector": 4096}
    assert_vectors(stored, EXPECTED_TRANSLATION_TEXTS, load_model("tfidf-char"))

    # Another model of another dimension cannot reuse the fields.
    write_params(params, "vectors-later", vectors={"model": "m-use"})
    rc, _, err = run_cli(push, capsys)
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("error: dataset pt-translations-t1 has the vector field 'english_vector' with 4096 dimensions; "
                          "the model of annotation.vectors gives 512")


@pytest.mark.server
@pytest.mark.slow
def test_push_relevance_with_vectors(argilla_env, tmp_path, capsys):
    stack = argilla_env
    write_tiny_testset(tmp_path / "data")
    params = write_params(tmp_path / "params.yaml", "vectors-rel", vectors={"model": "m-use"},
                          relevance={"audit_sample": 1, "pool_depth": 2})
    rc, _, err = run_cli(["--params", str(params), "push", "relevance", "--data", str(tmp_path / "data"),
                          "--lang", "pt", "--models", "tfidf-char"], capsys)
    assert rc == 2
    fields, stored = read_back(stack, "vectors-rel", "pt-relevance-t1")
    assert_knn_refused(err, "pt-relevance-t1", f"{len(stored)} new, 0 changed, 0 unchanged")
    assert fields == {"query_vector": 512, "document_vector": 512} and stored
    english = {sid: en for sid, (en, *_rest) in PT_TITLES.items()}
    expected = {}
    for rid in stored:  # pt-relevance-<query source>-<document source>; the tiny set's ids hold no "-"
        _lang, _kind, q, d = rid.split("-")
        expected[rid] = {"query_vector": english[q], "document_vector": english[d]}
    assert_vectors(stored, expected, load_model("m-use"))
