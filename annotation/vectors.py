"""Vectors for Argilla's "find similar" (``annotation.vectors:`` in params.yaml; off unless set).

With ``annotation.vectors: {model: m-use}`` a push embeds each record's titles (``RecordSpec.vector_texts``:
the English title and the proposed title of a translation record, the English query and document titles of a
relevance record) with that eval model, adds one vector field per text to the dataset and sends the vectors
with the records. Argilla keeps the vectors in its database; "find similar" asks its search engine for the
nearest ones (a k-NN query), which needs Elasticsearch 8 or OpenSearch 2 behind argilla-server. The local
stack's in-memory osmem-server stores the vectors but refuses k-NN queries, so after a push the search is tried
once and a refusal is an error that says what to configure (docs/annotation.md, "Vectors and find similar").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from annotation import AnnotationError
from annotation.push import PushReport, RecordSpec, get_or_create_dataset, sync_records
from annotation.server import Server, _rg, server_errors
from eval.errors import EvalError

CONFIGURE = ("run argilla-server on Elasticsearch 8 or OpenSearch 2 with k-NN (ARGILLA_SEARCH_ENGINE=elasticsearch or "
             "opensearch, ARGILLA_ELASTICSEARCH=<its URL>; after a switch, python -m argilla_server search-engine "
             "reindex), or remove annotation.vectors from params.yaml")


@dataclass(frozen=True)
class Embedder:
    """The eval model of ``annotation.vectors`` and the params file whose ``eval:`` names the embedding cache."""

    name: str
    params: str | Path = "params.yaml"


def load_embedder(model_name: str | None, params_path: str | Path = "params.yaml") -> Embedder | None:
    """The model annotation.vectors names, checked by loading it; None when the option is off. An unknown or
    unloadable model is an AnnotationError naming the key."""
    if model_name is None:
        return None
    _embed_texts(model_name, [], params_path)
    return Embedder(model_name, params_path)


def _embed_texts(model_name: str, texts: list[str], params_path: str | Path):
    # eval's one public entry point for vectors (docs/architecture.md): its model records and embedding cache;
    # imported here, where it is used: it loads numpy, scipy and the model records, which a push without vectors
    # never needs
    from eval.evaluate import embed_texts

    try:
        return embed_texts(model_name, texts, params=params_path)
    except EvalError as exc:
        raise AnnotationError(f"annotation.vectors.model: {exc}; python -m eval models lists the models, or remove "
                              f"annotation.vectors from params.yaml") from None


def embed(embedder: Embedder, texts: list[str]):
    """``({text: its vector}, the model's ModelMeta)``: unit-length vectors by eval (role "passage": the titles
    are compared with each other, none is a query)."""
    unique = sorted(set(texts))
    matrix, meta = _embed_texts(embedder.name, unique, embedder.params)
    # An all-zero vector has no direction: cosine similarity is undefined and OpenSearch's cosinesimil space
    # refuses to index it, so such a text gets no vector.
    return {text: [float(x) for x in row] for text, row in zip(unique, matrix) if row.any()}, meta


def with_vectors(specs: list[RecordSpec], embedder: Embedder) -> tuple[list[RecordSpec], int]:
    """``specs`` with a vector for each of their ``vector_texts`` (none where the text is None or its vector all
    zeros), and the vectors' dimension."""
    vecs, meta = embed(embedder, [t for s in specs for t in s.vector_texts.values() if t is not None])
    source = f"{meta.name}@{meta.revision}"
    out = [replace(s, vectors={name: vecs[t] for name, t in s.vector_texts.items() if t in vecs},
                   vector_source=source) for s in specs]
    return out, meta.dimension


def vector_fields(titles: dict[str, str], dimension: int) -> list:
    rg = _rg()
    return [rg.VectorField(name=name, title=title, dimensions=dimension) for name, title in titles.items()]


def ensure_vector_fields(server: Server, dataset, wanted: list) -> None:
    """Add the vector fields the dataset lacks (Argilla takes new vector fields on a dataset with records; the
    records get their vectors when the push resends them, their hash having changed). A field of the same name
    and another dimension (another model) cannot be changed: refused."""
    with server_errors(server.url):
        have = {v.name: v for v in dataset.settings.vectors}
        for field in wanted:
            old = have.get(field.name)
            if old is None:
                field.dataset = dataset
                field.create()
                dataset.settings.vectors.add(field)
            elif old.dimensions != field.dimensions:
                raise AnnotationError(
                    f"dataset {dataset.name} has the vector field {field.name!r} with {old.dimensions} dimensions; "
                    f"the model of annotation.vectors gives {field.dimensions}. Use the model it was made with, or "
                    f"push to a new dataset: raise annotation.dataset_version in params.yaml (or pass --version)")


def knn_refusal(exc: Exception) -> str | None:
    """The search engine's reason when ``exc`` is argilla-server passing on a refused k-NN query, else None."""
    text = str(exc)
    if "knn" not in text.lower():
        return None
    # argilla-server wraps the engine's JSON error; its "reason" says what was refused.
    found = re.search(r'reason\\*"\s*:\s*\\*"([^"\\]+)', text)
    return found.group(1) if found else text.splitlines()[0][:200]


def check_similar_search(server: Server, dataset, spec: RecordSpec) -> None:
    """Ask the server for the records nearest to ``spec``'s first vector, as "find similar" does; a refused
    k-NN query is an AnnotationError that says what to configure."""
    from argilla._exceptions import ArgillaAPIError

    rg = _rg()
    name, value = next(iter(spec.vectors.items()))
    query = rg.Query(similar=rg.Similar(name=name, value=value))
    with server_errors(server.url):
        try:
            list(dataset.records(query=query, limit=1, with_suggestions=False, with_responses=False))
        except ArgillaAPIError as exc:
            reason = knn_refusal(exc)
            if reason is None:
                raise  # any other failure: server_errors words it
            raise AnnotationError(
                f"the records and their vectors are on Argilla at {server.url}, but its search engine refused "
                f"a similarity (k-NN) query ({reason}), so \"find similar\" will not work there; {CONFIGURE}") from None


def push_dataset(server: Server, params, name: str, settings, specs: list[RecordSpec],
                 vector_titles: dict[str, str], embedder: Embedder | None) -> PushReport:
    """Create or update dataset ``name`` and upsert ``specs``; with an embedder, with their vectors, the vector
    fields ``vector_titles`` and a similarity search tried once after the push."""
    if embedder is None:
        dataset = get_or_create_dataset(server, params.workspace, name, settings)
        return sync_records(server, dataset, specs, params.batch_size)
    specs, dimension = with_vectors(specs, embedder)
    settings.vectors = vector_fields(vector_titles, dimension)
    dataset = get_or_create_dataset(server, params.workspace, name, settings)
    ensure_vector_fields(server, dataset, vector_fields(vector_titles, dimension))
    report = sync_records(server, dataset, specs, params.batch_size)
    with_a_vector = next((s for s in specs if s.vectors), None)
    if with_a_vector is not None:
        try:
            check_similar_search(server, dataset, with_a_vector)
        except AnnotationError as exc:
            raise AnnotationError(f"{report}; {exc}") from None
    return report

