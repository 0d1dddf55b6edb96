"""Persistent translation cache: SQLite in WAL mode, keyed by (translator, version, src, tgt, sentence).

Web answers are committed one by one as they arrive (``builder.translate.translate_sentences``), so a
killed run loses no answer already received; offline batches are committed per batch. A rerun translates
only what is missing. A blank or non-text cached output is never used: it counts as missing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from builder.characters import unsafe_character
from builder.errors import BuildError
from config.files import storage_problem  # also eval's embedding cache: one reading of SQLite's storage errors

# Keys per statement: SQLite caps the parameters of one statement (999 before SQLite 3.32).
CHUNK = 500
KEY = "translator=? AND version=? AND src=? AND tgt=?"  # the primary key's leading columns: an index range


def select_in(db: sqlite3.Connection, query: str, fixed: tuple, keys: list[str]) -> Iterator[tuple]:
    """The rows of ``query``, whose parameters are ``fixed`` then the keys of its ``IN ({keys})``, for every key,
    ``CHUNK`` keys a statement. Both SQLite caches (translations here, the lexicon's answers in
    builder.lexicon.LookupStore) look up through it."""
    for i in range(0, len(keys), CHUNK):
        chunk = keys[i : i + CHUNK]
        yield from db.execute(query.format(keys=",".join("?" * len(chunk))), (*fixed, *chunk))


def _answer(output) -> bool:
    """Whether a stored output can be a translator's answer: text with a visible character, and none that no
    title holds."""
    return isinstance(output, str) and bool(output.strip()) and unsafe_character(output) is None


class TranslationCache:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise BuildError(f"{self.path.parent}: --cache must be a folder, and this is a file; pass another --cache")
        if self.path.is_dir():
            raise BuildError(f"{self.path}: is a folder, expected the SQLite translation cache; remove it")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS translations (translator TEXT, version TEXT, src TEXT, tgt TEXT,"
                " sentence TEXT, output TEXT, PRIMARY KEY (translator, version, src, tgt, sentence))"
            )
            self._db.commit()
            self._check_columns()
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from None
        except OSError as exc:
            raise BuildError(f"{self.path}: cannot open the translation cache ({exc.strerror or exc}); "
                             "pass another --cache") from None

    def _corrupt(self, exc: Exception) -> BuildError:
        if "locked" in str(exc):
            return BuildError(f"{self.path}: the translation cache is locked by another run ({exc}); wait for it "
                              "to finish or pass another --cache")
        cause = storage_problem(self.path, exc)
        if cause:  # the disk or the folder, not the cache: the answers stored so far are intact
            return BuildError(f"{self.path}: cannot write the translation cache: {cause} ({exc}); free some space or "
                              "make it writable and run again (the answers already stored are kept), or pass another --cache")
        return BuildError(f"{self.path}: the translation cache is corrupt or not an SQLite file ({exc}); "
                          "delete it (answers already paid for are lost) or pass another --cache")

    def _check_columns(self) -> None:
        columns = [row[1] for row in self._db.execute("PRAGMA table_info(translations)")]
        expected = ["translator", "version", "src", "tgt", "sentence", "output"]
        if columns != expected:
            raise BuildError(f"{self.path}: table 'translations' has columns {columns}, expected {expected}; "
                             "this is not a translation cache, pass another --cache")

    def get_many(self, translator: str, version: str, src: str, tgt: str, sentences: list[str]) -> dict[str, str]:
        # A blank or non-text output was never a translator's answer (web answers are checked before they are
        # stored): it counts as missing rather than build a set with holes; so does one holding a character no
        # title holds (builder.characters), which only a damaged or tampered cache holds: it is asked again.
        key = (translator, version, src, tgt)
        try:
            stored = self._db.execute(f"SELECT COUNT(*) FROM translations WHERE {KEY}", key).fetchone()[0]
            if stored <= 2 * len(sentences):
                # A rebuild asks for (nearly) everything stored under the key: reading the key's rows in index
                # order is a third faster than looking each sentence up (chains read five steps so, issue 13).
                wanted = set(sentences)
                rows = self._db.execute(f"SELECT sentence, output FROM translations WHERE {KEY}", key).fetchall()
                return {s: o for s, o in rows if s in wanted and _answer(o)}
            rows = select_in(self._db, f"SELECT sentence, output FROM translations WHERE {KEY} AND sentence IN ({{keys}})",
                             key, sentences)
            return {s: o for s, o in rows if _answer(o)}
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from None

    def put_many(self, translator: str, version: str, src: str, tgt: str, results: dict[str, str]) -> None:
        try:
            self._db.executemany(
                "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?, ?)",
                [(translator, version, src, tgt, s, o) for s, o in results.items()],
            )
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from None

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def close(self) -> None:
        self._db.close()
