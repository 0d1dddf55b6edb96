"""Runs argilla-server against osmem-server; executed with ``.venv-argilla/bin/python``.

osmem-server (an in-memory OpenSearch-compatible server) rejects Painless scripts, which argilla-server's
OpenSearch engine uses in exactly three methods. This launcher registers a subclass under the engine name
``opensearch`` that does those three updates as read-modify-write of the stored document, then serves the
app with uvicorn. Only the test stack uses it; real deployments run argilla-server against OpenSearch or
Elasticsearch unchanged.

Usage: python argilla_launcher.py HOST PORT   (settings come from the ARGILLA_* environment variables)
"""

from __future__ import annotations

import dataclasses
import sys

import uvicorn
from argilla_server.constants import SEARCH_ENGINE_OPENSEARCH
from argilla_server.search_engine.base import SearchEngine
from argilla_server.search_engine.commons import es_index_name_for_dataset
from argilla_server.search_engine.opensearch import OpenSearchEngine


@SearchEngine.register(engine_name=SEARCH_ENGINE_OPENSEARCH)
@dataclasses.dataclass
class ScriptlessOpenSearchEngine(OpenSearchEngine):
    async def _replace_source(self, index_name: str, record_id: str, change) -> None:
        stored = await self.client.get(index=index_name, id=record_id)
        source = stored["_source"]
        change(source)
        await self.client.index(index=index_name, id=record_id, body=source, refresh=True)

    async def update_record_response(self, response) -> None:
        record = response.record
        new = self._map_record_response_to_es(response)

        def change(source: dict) -> None:
            kept = [r for r in source.get("responses") or [] if str(r.get("id")) != str(response.id)]
            source["responses"] = [*kept, new]

        await self._replace_source(es_index_name_for_dataset(record.dataset), str(record.id), change)

    async def delete_record_response(self, response) -> None:
        record = response.record

        def change(source: dict) -> None:
            source["responses"] = [r for r in source.get("responses") or [] if str(r.get("id")) != str(response.id)]

        await self._replace_source(es_index_name_for_dataset(record.dataset), str(record.id), change)

    async def delete_record_suggestion(self, suggestion) -> None:
        def change(source: dict) -> None:
            (source.get("suggestions") or {}).pop(suggestion.question.name, None)

        await self._replace_source(
            es_index_name_for_dataset(suggestion.record.dataset), str(suggestion.record_id), change
        )


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    uvicorn.run("argilla_server:app", host=host, port=port, access_log=False, log_level="warning")


if __name__ == "__main__":
    main()
