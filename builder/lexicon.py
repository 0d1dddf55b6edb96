"""A real morphological lexicon and word list per language, the ground truth of the gender layer.

- ``Lexicon``: an Apertium lttoolbox dictionary (Debian packages ``apertium-es-pt``, ``apertium-eng-spa``, …)
  run through ``lt-proc``: analysis (surface form -> lemma + part of speech + gender ``m``/``f``/``mf``
  + number) and generation (lemma + tags -> surface form, or nothing when the dictionary cannot make it).
  One ``lt-proc -z`` process per batch of words; null-flush mode keeps every word apart, so no multiword
  entry spans two of them. The stream format is parsed by ``apertium-streamparser``.
- ``WordList``: a Hunspell dictionary (Debian ``hunspell-pt-br``, ``hunspell-es``, …) read by the
  ``hunspell`` command: which words are spelled as the language spells them. It proves spelling, not
  meaning: it accepts a rule-made feminine the lexicon cannot generate (*bombeira*) and tells a loanword in
  use (*designer*) from an untranslated word.

Both memoise per process and, given a ``LookupStore`` (``cache/lexicon.sqlite`` in a build), on disk, keyed by
the Debian package versions of the dictionaries: a rebuild from cached translations runs no lexicon process.
A missing program or file is a ``LexiconError`` naming the ``apt-get install`` command: the build never falls
back silently to a weaker check.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from builder.cache import select_in
from builder.errors import BuildError
from builder.translators import package_version
from languages import LexiconRules

APERTIUM_DIR = Path("/usr/share/apertium")
HUNSPELL_DIRS = (Path("/usr/share/hunspell"), Path("/usr/share/myspell/dicts"))
RESERVED = re.compile(r"[\[\]{}^$/\\<>@*#~|+]")  # special in the Apertium stream format
GENDER_TAGS = ("mf", "m", "f")  # Apertium: common gender, masculine, feminine
NUMBER_TAGS = ("sg", "pl", "sp")


class LexiconError(BuildError):
    """A lexicon or word list this language needs is not installed."""


def install_command(rules: LexiconRules) -> str:
    """The apt-get line that installs what a language pack's ``lexicon`` section names."""
    return f"apt-get install apertium lttoolbox hunspell {rules.package} {rules.hunspell_package}"


@dataclass(frozen=True)
class Reading:
    lemma: str
    pos: str  # n, adj, vblex, pr, …
    gender: str | None  # m, f, mf or None
    number: str | None
    tags: tuple[str, ...]


def _gender(tags: list[str]) -> str | None:
    for g in GENDER_TAGS:
        if g in tags:
            return g
    return None


class LookupStore:
    """Answers of the lexicon and the word list kept on disk (SQLite), one namespace per resource version.

    Every answer costs only a few milliseconds to make again: an entry that is not JSON, or not of the shape its
    reader expects (``valid``), is treated as missing, computed again and replaced. A file that is not SQLite or
    whose table has another shape is an error with the advice to delete it (it is rebuilt); a full disk or a
    read-only folder is an error saying so."""

    COLUMNS = ["namespace", "key", "value"]

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute("CREATE TABLE IF NOT EXISTS lookups (namespace TEXT, key TEXT, value TEXT, "
                             "PRIMARY KEY (namespace, key))")
            columns = [row[1] for row in self._db.execute("PRAGMA table_info(lookups)")]
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None
        except OSError as exc:
            raise LexiconError(f"{self.path}: cannot open the lexicon cache ({exc.strerror or exc}); check the "
                               "--cache folder and the free space") from None
        if columns != self.COLUMNS:
            raise LexiconError(f"{self.path}: table 'lookups' has columns {columns}, expected {self.COLUMNS}; this is "
                               "not a lexicon cache: delete the file to rebuild it, or pass another --cache")

    def _error(self, exc: Exception) -> LexiconError:
        from builder.cache import storage_problem

        cause = storage_problem(self.path, exc)
        if cause:
            return LexiconError(f"{self.path}: cannot write the lexicon cache: {cause} ({exc}); free some space or "
                                "make it writable and run again, or pass another --cache")
        return LexiconError(f"{self.path}: unreadable lexicon cache ({exc}); delete the file to rebuild it")

    def get_many(self, namespace: str, keys: list[str], valid: Callable[[object], bool] | None = None) -> dict[str, object]:
        """The stored answers among ``keys``; one that is not JSON, or that ``valid`` refuses, counts as missing
        (its caller computes it again and ``save`` replaces it)."""
        try:
            rows = list(select_in(self._db, "SELECT key, value FROM lookups WHERE namespace = ? AND key IN ({keys})",
                                  (namespace,), keys))
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None
        found: dict[str, object] = {}
        for key, text in rows:
            try:
                value = json.loads(text) if isinstance(text, (str, bytes)) else ...
            except ValueError:
                continue
            if value is not ... and (valid is None or valid(value)):
                found[key] = value
        return found

    def save(self, namespace: str, answers: dict[str, object]) -> None:
        if answers:
            try:
                with self._db:
                    self._db.executemany("INSERT OR REPLACE INTO lookups VALUES (?, ?, ?)",
                                         [(namespace, k, json.dumps(v, ensure_ascii=False)) for k, v in answers.items()])
            except sqlite3.DatabaseError as exc:
                raise self._error(exc) from None

    def close(self) -> None:
        self._db.close()


def _optional_str(value) -> bool:
    return value is None or isinstance(value, str)


def valid_readings(value) -> bool:
    """A stored analysis: a list of [lemma, pos, gender, number, tags]."""
    return isinstance(value, list) and all(
        isinstance(r, list) and len(r) == 5 and isinstance(r[0], str) and isinstance(r[1], str) and _optional_str(r[2])
        and _optional_str(r[3]) and isinstance(r[4], list) and all(isinstance(t, str) for t in r[4]) for r in value)


def valid_form(value) -> bool:
    """A stored generated form: a string, or null (the dictionary cannot make it)."""
    return _optional_str(value)


def valid_known(value) -> bool:
    """A stored spelling verdict: true or false."""
    return isinstance(value, bool)


class Lexicon:
    """Analysis and generation with one language's lttoolbox dictionaries."""

    def __init__(self, lang: str, resources: LexiconRules, store: LookupStore | None = None):
        self.lang = lang
        self.resources = resources
        folder = APERTIUM_DIR / resources.package
        self.analyser = folder / resources.analyser
        self.generator = folder / resources.generator
        if shutil.which("lt-proc") is None:
            raise LexiconError(f"{lang}: the lexicon needs lt-proc (Debian lttoolbox); install it with: "
                               f"{install_command(resources)}")
        for f in (self.analyser, self.generator):
            if not f.is_file():
                raise LexiconError(f"{lang}: lexicon file {f} is missing; install it with: {install_command(resources)}")
        self.name = f"apertium:{resources.package}"
        self._analyses: dict[str, list[Reading]] = {}
        self._generated: dict[str, str | None] = {}
        self.store = store
        self.namespace = f"{resources.package}={package_version(resources.package)}:{resources.analyser}:{resources.generator}"

    def _run(self, args: list[str], units: list[str]) -> list[str]:
        text = "".join(u + "\0" for u in units)
        proc = subprocess.run(["lt-proc", "-z", *args], input=text, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise LexiconError(f"{self.lang}: lt-proc {' '.join(args)} failed (exit {proc.returncode}): "
                               f"{proc.stderr.strip()[:300]}; reinstall with: {install_command(self.resources)}")
        out = proc.stdout.split("\0")
        if len(out) < len(units):
            raise LexiconError(f"{self.lang}: lt-proc gave {len(out)} answers for {len(units)} words")
        return [o.strip() for o in out[:len(units)]]

    def analyse(self, words: Iterable[str]) -> dict[str, list[Reading]]:
        """Readings of each word (empty list: the dictionary does not know it)."""
        import streamparser

        words = list(dict.fromkeys(w for w in words if w))
        for w in words:
            # Characters of lt-proc's stream format, or blanks, make no word: never sent (a malformed stream).
            if w not in self._analyses and (RESERVED.search(w) or any(c.isspace() or c == "\0" for c in w)):
                self._analyses[w] = []
        todo = [w for w in words if w not in self._analyses]
        if todo and self.store is not None:
            for key, value in self.store.get_many(self.namespace, [f"a:{w}" for w in todo], valid_readings).items():
                self._analyses[key[2:]] = [Reading(r[0], r[1], r[2], r[3], tuple(r[4])) for r in value]
            todo = [w for w in todo if w not in self._analyses]
        if todo:
            for word, line in zip(todo, self._run([self.analyser.as_posix()], todo)):
                readings: list[Reading] = []
                for unit in streamparser.parse(line):
                    if unit.knownness is not streamparser.known:
                        continue
                    for reading in unit.readings:
                        if len(reading) != 1:  # a word read as two joined units (contractions): not a title's head
                            continue
                        sub = reading[0]
                        tags = list(sub.tags)
                        readings.append(Reading(sub.baseform, tags[0] if tags else "", _gender(tags),
                                                next((t for t in tags if t in NUMBER_TAGS), None), tuple(tags)))
                self._analyses[word] = readings
            if self.store is not None:
                self.store.save(self.namespace, {f"a:{w}": [[r.lemma, r.pos, r.gender, r.number, list(r.tags)]
                                                           for r in self._analyses[w]] for w in todo})
        return {w: self._analyses[w] for w in words}

    def readings(self, word: str) -> list[Reading]:
        """The readings of one word; a word already read is answered from memory without building a batch."""
        known = self._analyses.get(word)
        return known if known is not None else self.analyse([word])[word]

    def generate(self, lemma: str, tags: Iterable[str]) -> str | None:
        tags = tuple(tags)
        known = self._generated.get(self._unit(lemma, tags), False)  # answered from memory, as most are
        return known if known is not False else self.generate_many([(lemma, tags)])[(lemma, tags)]

    @staticmethod
    def _unit(lemma: str, tags: tuple[str, ...]) -> str:
        return "^" + lemma + "".join(f"<{t}>" for t in tags) + "$"

    def generate_many(self, requests: Iterable[tuple[str, tuple[str, ...]]]) -> dict[tuple[str, tuple[str, ...]], str | None]:
        """The surface form of each (lemma, tags), or None when the dictionary cannot make it (``#lemma``)."""
        keys = {(lemma, tuple(tags)): self._unit(lemma, tuple(tags)) for lemma, tags in requests}
        todo = [u for u in dict.fromkeys(keys.values()) if u not in self._generated]
        if todo and self.store is not None:
            self._generated.update((key[2:], form) for key, form in self.store.get_many(self.namespace, [f"g:{u}" for u in todo], valid_form).items())
            todo = [u for u in todo if u not in self._generated]
        if todo:
            for unit, form in zip(todo, self._run(["-g", self.generator.as_posix()], todo)):
                bad = not form or form.startswith(("#", "*", "@")) or "<" in form or "^" in form
                self._generated[unit] = None if bad else form.lower()
            if self.store is not None:
                self.store.save(self.namespace, {f"g:{u}": self._generated[u] for u in todo})
        return {k: self._generated[u] for k, u in keys.items()}


class WordList:
    """Hunspell spelling of one language, through the ``hunspell`` command (one process per batch)."""

    def __init__(self, lang: str, resources: LexiconRules, store: LookupStore | None = None):
        self.lang = lang
        self.resources = resources
        if shutil.which("hunspell") is None:
            raise LexiconError(f"{lang}: the word list needs the hunspell command; install it with: "
                               f"{install_command(resources)}")
        self.dicts = []
        for name in resources.hunspell_dicts:
            found = [d / f"{name}.dic" for d in HUNSPELL_DIRS if (d / f"{name}.dic").is_file()]
            if found:
                self.dicts.append(found[0].with_suffix(""))
        if not self.dicts:
            raise LexiconError(f"{lang}: no Hunspell dictionary {'/'.join(resources.hunspell_dicts)} found; "
                               f"install it with: {install_command(resources)}")
        self.name = "hunspell:" + "+".join(d.name for d in self.dicts)
        self._known: dict[str, bool] = {}
        self.store = store
        self.namespace = f"{resources.hunspell_package}={package_version(resources.hunspell_package)}:{self.name}"

    def known(self, words: Iterable[str]) -> set[str]:
        """The words any of the dictionaries accepts."""
        words = list(dict.fromkeys(w for w in words if w and not any(c.isspace() for c in w)))
        todo = [w for w in words if w not in self._known]
        if todo and self.store is not None:
            self._known.update(self.store.get_many(self.namespace, todo, valid_known))
            todo = [w for w in todo if w not in self._known]
        if todo:
            good: set[str] = set()
            for d in self.dicts:
                # -G prints the correct words of the input, one per line; -i utf-8 fixes the input encoding.
                proc = subprocess.run(["hunspell", "-i", "utf-8", "-d", d.as_posix(), "-G"], input="\n".join(todo) + "\n",
                                      capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    raise LexiconError(f"{self.lang}: hunspell -d {d} failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}")
                good |= {line.strip() for line in proc.stdout.splitlines() if line.strip()}
            for w in todo:
                self._known[w] = w in good
            if self.store is not None:
                self.store.save(self.namespace, {w: self._known[w] for w in todo})
        return {w for w in words if self._known[w]}

    def is_word(self, word: str) -> bool:
        known = self._known.get(word)
        return known if known is not None else bool(self.known([word]))


def hunspell_wordlist(lang: str, package: str, dicts: tuple[str, ...], install: str,
                      store: LookupStore | None = None) -> WordList:
    """A ``WordList`` over Hunspell dictionaries alone, for the layers that need no Apertium (German, Dutch,
    Polish); ``install`` is the command its error names."""
    rules = LexiconRules(package="", analyser="", generator="", hunspell_package=package, hunspell_dicts=dicts,
                         phrase_end=frozenset(), noun_rules=(), adjective_rules=(), common_endings=(), irregular={},
                         loanwords=frozenset(), common_nouns=frozenset())
    try:
        return WordList(lang, rules, store)
    except LexiconError as exc:
        # WordList's message names the Romance layer's Apertium packages, which these layers do not need.
        raise LexiconError(f"{lang}: word list {'/'.join(dicts)} unavailable ({str(exc).split(';')[0]}); "
                           f"install it with: {install}") from None


class BatchedWordLookups:
    """Word-list answers from memory, the questions batched: for a layer whose ``decide(title)`` asks
    ``_is_word`` about words it cannot know in advance (German and Dutch compounds and derived forms).

    ``prepare`` decides every title with provisional answers while recording the questions, answers them in one
    Hunspell batch per word list, and repeats until no new question comes (two or three rounds), so the real
    decisions then ask nothing. The layer provides ``wordlist``, ``english`` (``WordList``s), ``decide`` and a
    ``_nouns`` memo that provisional answers must not outlive."""

    _recording: set[str] | None = None

    def _is_word(self, word: str, english: bool = False) -> bool:
        wordlist = self.english if english else self.wordlist
        known = wordlist._known.get(word)
        if known is not None:
            return known
        if self._recording is not None:
            self._recording.add(("en:" if english else "own:") + word)
            return False
        return wordlist.is_word(word)

    def prepare(self, titles: list[str]) -> None:
        titles = [t for t in dict.fromkeys(titles) if t]
        for _ in range(6):
            self._recording = set()
            self._nouns.clear()
            try:
                for title in titles:
                    self.decide(title)
            finally:
                asked, self._recording = self._recording, None
            self._nouns.clear()
            if not asked:
                break
            self.wordlist.known([w.removeprefix("own:") for w in asked if w.startswith("own:")])
            self.english.known([w.removeprefix("en:") for w in asked if w.startswith("en:")])

    def prepare_labels(self, labels: list[str]) -> None:
        """ESCO's labels need no other lookups than titles (builder/layers.py)."""
        self.prepare(labels)
