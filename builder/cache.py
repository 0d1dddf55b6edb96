"""Persistent translation cache: SQLite in WAL mode, keyed by (translator, version, src, tgt, sentence).

Results are committed as they arrive, so a killed run loses at most the batch in flight and a rerun
translates only what is missing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


class TranslationCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS translations (translator TEXT, version TEXT, src TEXT, tgt TEXT,"
            " sentence TEXT, output TEXT, PRIMARY KEY (translator, version, src, tgt, sentence))"
        )
        self._db.commit()

    def get_many(self, translator: str, version: str, src: str, tgt: str, sentences: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for i in range(0, len(sentences), 500):
            chunk = sentences[i : i + 500]
            rows = self._db.execute(
                "SELECT sentence, output FROM translations WHERE translator=? AND version=? AND src=? AND tgt=?"
                f" AND sentence IN ({','.join('?' * len(chunk))})",
                (translator, version, src, tgt, *chunk),
            )
            found.update(rows)
        return found

    def put_many(self, translator: str, version: str, src: str, tgt: str, results: dict[str, str]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?, ?)",
            [(translator, version, src, tgt, s, o) for s, o in results.items()],
        )
        self._db.commit()

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def close(self) -> None:
        self._db.close()
