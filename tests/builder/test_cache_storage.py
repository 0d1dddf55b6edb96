"""The caches on a full disk or a read-only filesystem say so (never "corrupt, delete it": the translation
cache holds answers paid for); the lexicon cache rebuilds an entry that is not JSON or not of its shape, and
refuses a file of another shape with the advice to delete it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import pytest

from builder.cache import TranslationCache
from builder.errors import BuildError
from builder.lexicon import Lexicon, LexiconError, LookupStore, WordList
from languages import load

ANSWERS = {f"sentence {i} " + "x" * 200: f"frase {i} " + "y" * 200 for i in range(2000)}


def _full(db: sqlite3.Connection) -> None:
    """The database may not grow by one page: SQLite answers SQLITE_FULL, as it does on a full disk."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")


@contextlib.contextmanager
def tmpfs(where: Path, size: str):
    """A real small filesystem (root only; skipped elsewhere)."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", f"t22-{uuid.uuid4().hex[:8]}", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_full_disk_is_named_as_such_and_the_cache_is_kept(tmp_path):
    cache = TranslationCache(tmp_path / "translations.sqlite")
    cache.put_many("libre", "1", "en", "pt", {"Lawyer": "Advogado"})
    _full(cache._db)
    with pytest.raises(BuildError) as err:
        cache.put_many("libre", "1", "en", "pt", ANSWERS)
    message = str(err.value)
    assert "is full" in message and "corrupt" not in message and "delete it" not in message, message
    assert "answers already stored are kept" in message
    cache.close()
    assert TranslationCache(tmp_path / "translations.sqlite").get_many("libre", "1", "en", "pt", ["Lawyer"]) == {"Lawyer": "Advogado"}


def test_a_really_full_disk_and_a_read_only_filesystem(tmp_path):
    with tmpfs(tmp_path / "disk", "256k") as disk:
        cache = TranslationCache(disk / "translations.sqlite")
        cache.put_many("libre", "1", "en", "pt", {"Lawyer": "Advogado"})
        with pytest.raises(BuildError) as err:
            cache.put_many("libre", "1", "en", "pt", ANSWERS)
        assert "is full" in str(err.value) and "corrupt" not in str(err.value), str(err.value)
        cache.close()
        for extra in disk.glob("translations.sqlite-*"):
            extra.unlink()
        store = LookupStore(disk / "lexicon.sqlite")
        with pytest.raises(LexiconError) as err:
            store.save("ns", {k: v for k, v in ANSWERS.items()})
        assert "is full" in str(err.value) and "cannot write the lexicon cache" in str(err.value), str(err.value)
        store.close()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        with pytest.raises(BuildError) as err:
            TranslationCache(disk / "translations.sqlite").put_many("libre", "1", "en", "pt", {"Nurse": "Enfermeiro"})
        assert "read-only" in str(err.value) and "corrupt" not in str(err.value), str(err.value)


def test_a_full_disk_while_the_lexicon_cache_grows(tmp_path):
    store = LookupStore(tmp_path / "lexicon.sqlite")
    _full(store._db)
    with pytest.raises(LexiconError) as err:
        store.save("ns", ANSWERS)
    assert str(err.value).startswith(f"{tmp_path / 'lexicon.sqlite'}: cannot write the lexicon cache: the disk")


@pytest.mark.parametrize("stored", ["not json {", json.dumps({"a": 1}), json.dumps([["x"]]), "42", '"trunc',
                                    json.dumps([[1, 2, 3, 4, 5]])])
def test_bad_lexicon_entries_are_computed_again_and_replaced(tmp_path, stored):
    path = tmp_path / "lexicon.sqlite"
    fresh = Lexicon("es", load("es").lexicon, LookupStore(tmp_path / "fresh.sqlite"))
    expected = fresh.analyse(["ingeniera"])["ingeniera"], fresh.generate("árbitro", ("n", "f", "sg"))
    words = WordList("es", load("es").lexicon, LookupStore(tmp_path / "fresh.sqlite"))
    expected_known = words.known(["ingeniera"])
    first = Lexicon("es", load("es").lexicon, LookupStore(path))
    first.analyse(["ingeniera"]), first.generate("árbitro", ("n", "f", "sg"))
    WordList("es", load("es").lexicon, LookupStore(path)).known(["ingeniera"])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE lookups SET value = ?", (stored,))
    lex = Lexicon("es", load("es").lexicon, LookupStore(path))
    assert (lex.analyse(["ingeniera"])["ingeniera"], lex.generate("árbitro", ("n", "f", "sg"))) == expected
    assert WordList("es", load("es").lexicon, LookupStore(path)).known(["ingeniera"]) == expected_known
    with sqlite3.connect(path) as db:  # replaced by the answers computed again
        assert stored not in {v for (v,) in db.execute("SELECT value FROM lookups")}


@pytest.mark.parametrize("damage", ["garbage", "other-table-shape"])
def test_a_lexicon_cache_of_another_shape_is_one_error_with_the_fix(tmp_path, damage):
    path = tmp_path / "lexicon.sqlite"
    if damage == "garbage":
        path.write_bytes(b"not a database\n" * 200)
    else:
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE lookups (a, b)")
    with pytest.raises(LexiconError) as err:
        LookupStore(path)
    assert str(err.value).startswith(f"{path}: ") and "delete the file to rebuild it" in str(err.value)
