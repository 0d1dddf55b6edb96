"""Measures as named objects: names round-trip, a new measure is one class and one params.yaml line, and
the default measures give the figures stored before measures were objects."""

import json
from pathlib import Path

import numpy as np
import pytest

from eval import measures
from eval.errors import EvalError
from eval.evaluate import evaluate
from eval.measures import DEFAULT_MEASURES, QueryMeasure, parse_measure, register
from eval.models import CharTfidf, EmbeddingCache
from eval.params import EvalSettings, read_eval_settings
from eval.report import tables_markdown
from eval.testset import write_testset

from .conftest import make_testset

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", [*DEFAULT_MEASURES, "RBO(p=0.9)", "acc@3"])
def test_a_measure_prints_as_its_name(name):
    assert str(parse_measure(name)) == name
    assert parse_measure(name) == parse_measure(name) and len({parse_measure(name), parse_measure(name)}) == 1


@pytest.mark.parametrize("bad, says", [
    ("NDCG@10", "unknown measure 'NDCG'"),
    ("RBO(p=2)", r"RBO persistence p must be in \(0, 1\), got 2"),
    ("RBO(0.9)", "parameters are key=value"),
    ("RBO(p=high)", "p='high' is not a number"),
    ("RBO(q=0.9)", "unexpected keyword argument 'q'"),
    ("acc@0", "acc@k needs a cut-off k >= 1, got 0"),
    ("AO AP", "not a measure name"),
])
def test_a_bad_measure_name_says_what_is_wrong(bad, says):
    with pytest.raises(EvalError, match=says):
        parse_measure(bad)


def test_settings_name_their_measures_and_refuse_repeats():
    settings = EvalSettings(measures=("AO", "RBO(p=0.900)", "AP", "acc@1", "Gap( AP)"))
    assert settings.measures == ("AO", "RBO(p=0.9)", "AP", "acc@1", "Gap(AP)") and settings.rbo_name == "RBO(p=0.9)"
    assert settings.accuracy_k == (1,) and settings.with_measures("acc@1", "acc@10").accuracy_k == (1, 10)
    with pytest.raises(EvalError, match=r"measures \['AO'\] are listed twice"):
        EvalSettings(measures=("AO", "AO", "AP", "acc@1", "Gap(AP)"))
    with pytest.raises(EvalError, match="must include a pair measure"):
        EvalSettings(measures=("AP", "acc@1", "Gap(AP)"))


@pytest.fixture
def reciprocal_rank(monkeypatch):
    """A toy measure as a newcomer writes it: one class, registered; removed again after the test."""
    monkeypatch.setattr(measures, "MEASURES", dict(measures.MEASURES))

    @register
    class ReciprocalRank(QueryMeasure):
        name = "RR"
        definition = "1 / rank of the first relevant item (0 when none is retrieved)"

        def per_query(self, queries):
            retrieved = queries.first_hit < queries.ranking.shape[1]
            with np.errstate(divide="ignore"):
                rr = np.where(retrieved, 1.0 / (queries.first_hit + 1), 0.0)
            return np.where(queries.n_relevant > 0, rr, np.nan)

    return ReciprocalRank


def test_a_new_measure_is_one_class_and_one_params_line(tmp_path, reciprocal_rank):
    data = tmp_path / "data"
    write_testset(make_testset("pt"), data)
    params = tmp_path / "params.yaml"
    params.write_text("eval:\n  measures: [AO, RBO(p=0.98), AP, acc@1, acc@5, acc@10, identical_top1, Gap(AP), Gap(acc@1), RR]\n", encoding="utf-8")
    settings = read_eval_settings(params)
    doc = evaluate(data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), settings, progress=False)
    block = doc["languages"]["pt"]
    assert doc["settings"]["metrics"]["RR"].startswith("1 / rank")
    rows = [r for r in block["per_query"] if r["corpus"] == "masculine"]
    scored = [r for r in rows if r["RR"] is not None]
    assert scored and len(scored) == sum(r["AP"] is not None for r in rows)
    for r in scored:  # RR from its definition against the first relevant position that acc@k sees
        first = 1 if r["acc@1"] else 5 if r["acc@5"] else 10 if r["acc@10"] else None
        assert r["RR"] == 1.0 if first == 1 else (1 / 5 <= r["RR"] < 1 / 1 if first == 5 else
                                                  1 / 10 <= r["RR"] < 1 / 5 if first == 10 else r["RR"] < 1 / 10)
    for gender in ("feminine", "masculine"):
        fig = block["corpora"]["masculine"]["retrieval"]["RR"][gender]
        values = [r["RR"] for r in scored if r["gender"] == gender]
        assert fig["n"] == len(values) and fig["value"] == pytest.approx(np.mean(values), abs=1e-12)
    table = tables_markdown([doc])
    assert "## RR over masculine corpora" in table and f"| tfidf-char | {block['corpora']['masculine']['retrieval']['RR']['feminine']['value']:.3f}" in table
    # the figures of the other measures do not move when one is added
    plain = evaluate(data, ["pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    for key in ("symmetry", "MAP", "accuracy", "parity"):
        assert plain["languages"]["pt"]["corpora"]["masculine"][key] == block["corpora"]["masculine"][key]


def test_default_measures_give_the_figures_stored_before_they_were_objects(tmp_path):
    """tests/eval/fixtures/results-v1-tfidf-char-small.json was written by `python -m eval run --model tfidf-char`
    on conftest's pt and es sets before measures were objects (commit 3610dcf)."""
    data = tmp_path / "data"
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), data)
    stored = json.loads((FIXTURES / "results-v1-tfidf-char-small.json").read_text(encoding="utf-8"))
    doc = evaluate(data, ["es", "pt"], CharTfidf(), EmbeddingCache(tmp_path / "c"), EvalSettings(), progress=False)
    doc = json.loads(json.dumps(doc))
    for block in doc["languages"].values():
        del block["timing"]
    doc["testset"]["root"] = stored["testset"]["root"]
    # The content digests name the files' bytes, which changed when the format gained the `form` column
    # (same items, same qrels): the figures are what must not change.
    def without_digests(d: dict) -> dict:
        d = json.loads(json.dumps(d))
        d["testset"].pop("version"), d["testset"].pop("languages")
        for block in d["languages"].values():
            block.pop("testset_version")
        return d

    assert doc.pop("schema_version") == 2 and "schema_version" not in stored
    assert without_digests(doc) == without_digests(stored)
    doc["testset"] = stored["testset"]
    for lang, block in doc["languages"].items():
        block["testset_version"] = stored["languages"][lang]["testset_version"]
    assert (FIXTURES / "results-v1-tfidf-char-small.tables.md").read_text(encoding="utf-8") == tables_markdown([doc])
