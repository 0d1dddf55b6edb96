"""Reads ``corrections/<lang>.jsonl`` (written by ``python -m annotation pull``; format in docs/FORMAT.md) and the
term rules beside it, ``corrections/<lang>.rules.jsonl`` (written by ``python -m annotation rule --apply``).

Every language in ``params.yaml`` has both files, empty until its first pull or rule: ``prepare_corrections`` (the
``corrections@<lang>`` stage of dvc.yaml) creates them, so ``postprocess@<lang>`` can depend on its own
language's files alone (DVC refuses a dependency that does not exist).

The one reader and writer of that format: ``check_line`` and ``read_lines`` check every line as docs/FORMAT.md
gives it, and ``write_lines`` writes only lines ``check_line`` accepts, so a file annotation writes is always one
the builder reads (``annotation/corrections.py`` reads and writes the file through them). The same holds for the
rules file: ``check_rule``, ``read_rule_lines`` and ``write_rules`` (``annotation/rules.py`` writes through them;
builder/rules.py applies the rules in every build).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from builder.characters import unsafe_character
from builder.errors import CorrectionsError
from config.files import write_file_atomically

# What each flag of a translation correction does: the one definition, shown in the annotation UI's question help,
# its guidelines and docs/FORMAT.md (a test checks they say the same).
FLAG_MEANINGS = {
    "not_a_job_title": "the English title is not a person's job title: the source is dropped from the language "
                       "unless a corrected title is given",
    "wrong_sense": "the translation names another thing or occupation: give the corrected title; without one the "
                   "source is dropped from the language",
    "untranslatable": "no title in the language names it: the source is dropped from the language unless a "
                      "corrected title is given",
}
FLAGS = (None, *FLAG_MEANINGS)
# Flags that drop a source when the line gives no title (every flag: a flagged title is a wrong one).
DROPPING_FLAGS = tuple(FLAG_MEANINGS)
MARKINGS = ("gendered", "neutral", "masculine_only", "feminine_only")
KIND_TRANSLATION = "translation"
KIND_RELEVANCE = "relevance"
# The fields of a line of each kind (docs/FORMAT.md), besides "kind": every one required, no other allowed.
FIELDS = {
    KIND_TRANSLATION: ("lang", "source_id", "record_id", "masculine", "feminine", "gender_marking", "flag",
                       "annotators", "submitted_at"),
    KIND_RELEVANCE: ("lang", "query_source_id", "doc_source_id", "record_id", "relevant", "annotators",
                     "submitted_at"),
}
# Fields a translation line may carry: ``review``, the round of the maintainers' review the line belongs to
# (docs/review.md; the items it gives are ``reviewed``, not a person's ``corrected``), and ``reason``, one line
# saying why the title was changed or dropped. Lines written before they existed lack them and stay valid.
OPTIONAL_FIELDS = {KIND_TRANSLATION: ("review", "reason"), KIND_RELEVANCE: ()}
# A review round's name names it in the items' provenance (``review:<round>``).
ROUND_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


# The fields of a term rule (docs/FORMAT.md), each required; ``touched`` only in lines written before the build
# applied the rules (the ids an older `annotation rule --apply` wrote correction lines for; not read).
RULE_FIELDS = ("id", "lang", "find", "replace", "english_word", "annotators", "submitted_at")
RULE_OLD_FIELDS = ("touched",)
# Optional fields of a rule: ``part_of_word`` (true: ``find`` also matches inside a word, the German compound
# *bohrtechniker*; default false: whole words only), ``reason`` (why), ``review`` (the review round that wrote it).
RULE_OPTIONAL_FIELDS = ("part_of_word", "reason", "review")
# A rule's id names it in the items' provenance (``rule:<id>``, joined with ``+``) and in stats.json.
RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class TermRule:
    """A reviewed fix of a term: in every title of the language holding ``find`` as whole words, ``replace``
    instead (builder/rules.py applies it)."""

    id: str
    find: str
    replace: str
    english_word: str | None
    annotators: tuple[str, ...]
    line: int = 0  # where it stands in its file
    part_of_word: bool = False  # match inside words too (German compounds), not only whole words

    @property
    def term(self) -> str:
        """``find`` as the titles hold it: lowercased, single spaces."""
        return " ".join(self.find.lower().split())

    @property
    def replacement(self) -> str:
        return " ".join(self.replace.lower().split())

    @property
    def word(self) -> str | None:
        """The English word as the English titles are split (lowercased, commas as spaces)."""
        return self.english_word.lower().replace(",", " ").strip() if self.english_word is not None else None

    def same_fix(self, other: "TermRule") -> bool:
        """The same term, replacement and English word as ``other``: a second such rule is refused when written."""
        return (self.term, self.replacement, self.word, self.part_of_word) == (
            other.term, other.replacement, other.word, other.part_of_word)


@dataclass(frozen=True)
class TranslationCorrection:
    source_id: str
    masculine: str | None
    feminine: str | None
    gender_marking: str | None
    flag: str | None
    annotators: tuple[str, ...]
    review: str | None = None  # the maintainers' review round (docs/review.md); None: a person's Argilla answer
    reason: str | None = None

    @property
    def drops(self) -> bool:
        """The line drops its source: a flag and no title (docs/FORMAT.md, FLAG_MEANINGS)."""
        return self.flag in DROPPING_FLAGS and not (self.masculine or self.feminine)


@dataclass
class Corrections:
    translations: dict[str, TranslationCorrection] = field(default_factory=dict)
    relevance: dict[tuple[str, str], bool] = field(default_factory=dict)  # (query_source_id, doc_source_id)
    path: Path | None = None
    # The line each correction came from: source_id, or (query_source_id, doc_source_id), -> line number.
    lines: dict = field(default_factory=dict)
    rules: list[TermRule] = field(default_factory=list)  # in the order of the rules file
    rules_path: Path | None = None  # the rules file read (None: there is none)


def rules_path_of(corrections_path: str | Path) -> Path:
    """The rules file beside a corrections file: ``corrections/pt.jsonl`` -> ``corrections/pt.rules.jsonl``."""
    return Path(corrections_path).with_suffix(".rules.jsonl")


def _text(obj: dict, key: str, where: str, *, nullable: bool = False) -> str | None:
    """``obj[key]``: a string with a visible character and no control character, line separator or lone
    surrogate (None allowed when ``nullable``)."""
    value = obj[key]
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise CorrectionsError(f"{where}: {key} is {value!r}; expected a string{' or null' if nullable else ''} "
                               "(docs/FORMAT.md)")
    ch = unsafe_character(value)  # the characters no title holds (builder.characters), as the source reader's
    if ch is not None and unicodedata.category(ch) == "Cs":
        raise CorrectionsError(f"{where}: {key} holds a lone surrogate (\\u{ord(ch):04x}), which is no character; "
                               "write the character itself (the file is UTF-8)")
    if ch is not None:
        raise CorrectionsError(f"{where}: {key} holds the control character U+{ord(ch):04X}; remove it")
    if not any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in value):
        fix = "give the title, or null to keep the machine text" if nullable else "give a value"
        raise CorrectionsError(f"{where}: {key} {value!r} has no visible character; {fix}")
    return value


def _annotators(obj: dict, where: str) -> None:
    """``annotators``: a list of one or more names (a correction's and a term rule's)."""
    annotators = obj["annotators"]
    if not isinstance(annotators, list) or not annotators:
        raise CorrectionsError(f"{where}: annotators is {annotators!r}; expected a list of one or more names, "
                               'e.g. ["ana"]')
    for i, name in enumerate(annotators):
        _text({f"annotators[{i}]": name}, f"annotators[{i}]", where)


def check_line(obj: object, where: str, lang: str | None = None) -> dict:
    """``obj`` when it is a correction line as docs/FORMAT.md gives it (with ``lang``, of that language), else a
    CorrectionsError naming ``where``: the one check of the corrections format, for the builder and annotation."""
    if not isinstance(obj, dict):
        raise CorrectionsError(f"{where}: expected a JSON object")
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in FIELDS:  # a list or a mapping there is refused too, not a TypeError
        raise CorrectionsError(f"{where}: kind {kind!r}; expected {KIND_TRANSLATION!r} or {KIND_RELEVANCE!r}")
    fields = FIELDS[kind]
    unknown = [k for k in obj if k != "kind" and k not in fields and k not in OPTIONAL_FIELDS[kind]]
    if unknown:
        raise CorrectionsError(f"{where}: unknown field(s) {unknown} in a {kind} correction; its fields are "
                               f"{['kind', *fields]} (docs/FORMAT.md)")
    missing = [k for k in fields if k not in obj]
    if missing:
        raise CorrectionsError(f"{where}: missing field(s) {missing} for a {kind} correction (docs/FORMAT.md)")
    _text(obj, "lang", where)
    if lang is not None and obj["lang"] != lang:
        raise CorrectionsError(f"{where}: lang {obj['lang']!r} in the corrections file of {lang!r}; give the file of "
                               "that language")
    for key in ("record_id", "submitted_at"):
        _text(obj, key, where)
    _annotators(obj, where)
    if kind == KIND_TRANSLATION:
        _text(obj, "source_id", where)
        _text(obj, "masculine", where, nullable=True)
        _text(obj, "feminine", where, nullable=True)
        if obj["flag"] not in FLAGS:
            raise CorrectionsError(f"{where}: flag {obj['flag']!r} not one of {FLAGS}")
        dropping = obj["flag"] in DROPPING_FLAGS and obj["masculine"] is None and obj["feminine"] is None
        if obj["gender_marking"] not in MARKINGS and not (dropping and obj["gender_marking"] is None):
            raise CorrectionsError(f"{where}: gender_marking {obj['gender_marking']!r} not one of {MARKINGS} (null only "
                                   "on a line that drops its source: a flag and no title)")
        if obj.get("review") is not None:
            check_round(obj["review"], f"{where}: review")
        if obj.get("reason") is not None:
            _text(obj, "reason", where)
    else:
        _text(obj, "query_source_id", where)
        _text(obj, "doc_source_id", where)
        if not isinstance(obj["relevant"], bool):
            raise CorrectionsError(f"{where}: relevant must be true or false, got {obj['relevant']!r}")
    return obj


def check_round(value: object, where: str) -> str:
    """A review round's name (``review`` of a line, ``annotation pull --review``), else a CorrectionsError."""
    if not isinstance(value, str) or not ROUND_ID.fullmatch(value):
        raise CorrectionsError(f"{where} {value!r}; expected the round's name (letters, digits, '_', '.', '-'), e.g. "
                               '"0.5.0-r1"')
    return value


def _json_lines(path: Path, what: str):
    """``(line number, object, where)`` of every non-blank line of the JSON-lines file ``path``; any line that is
    not UTF-8 JSON a CorrectionsError naming file:line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CorrectionsError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    # Split on b"\n" only: str.splitlines would also split on a lone CR or U+2028 and shift the line numbers.
    for lineno, raw_line in enumerate(raw.split(b"\n"), 1):
        where = f"{path}:{lineno}"
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorrectionsError(f"{where}: not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode the file "
                                   "as UTF-8 (python -m annotation writes it so)") from None
        if lineno == 1 and line.startswith("\ufeff"):
            raise CorrectionsError(f"{where}: starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM")
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorrectionsError(f"{where}: not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise CorrectionsError(f"{where}: JSON nested too deep; one flat object per line expected") from None
        yield lineno, obj, where


def read_lines(path: Path, lang: str | None = None) -> list[tuple[int, dict]]:
    """``(line number, line)`` of every correction of the file ``path``, each checked by ``check_line``."""
    return [(lineno, check_line(obj, where, lang)) for lineno, obj, where in _json_lines(path, "corrections file")]


def write_lines(path: str | Path, lines: list[dict], lang: str | None = None) -> Path:
    """Replace the corrections file ``path`` with ``lines`` (one JSON object a line, UTF-8, keys in the order
    given), whole or not at all. Every line is checked by ``check_line`` before anything is written: a line the
    reader would refuse is a CorrectionsError naming it, and the file stays as it was."""
    path = Path(path)
    for i, line in enumerate(lines, 1):
        check_line(line, f"{path}: line {i} to write", lang)
    return write_file_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def check_rule(obj: object, where: str, lang: str | None = None) -> dict:
    """``obj`` when it is a term rule as docs/FORMAT.md gives it (with ``lang``, of that language), else a
    CorrectionsError naming ``where`` and the fix: the one check of the rules format, for the builder and
    annotation. What a rule does to a title (empty it, write the other gender's word) is the annotator's call."""
    if not isinstance(obj, dict):
        raise CorrectionsError(f"{where}: expected a JSON object (a term rule, docs/FORMAT.md)")
    unknown = [k for k in obj if k not in RULE_FIELDS and k not in RULE_OLD_FIELDS and k not in RULE_OPTIONAL_FIELDS]
    if unknown:
        raise CorrectionsError(f"{where}: unknown field(s) {unknown} in a term rule; its fields are {list(RULE_FIELDS)} "
                               "(docs/FORMAT.md)")
    missing = [k for k in RULE_FIELDS if k not in obj]
    if missing:
        example = {"id": '"id": "r1"', "lang": f'"lang": "{lang or "pt"}"'}
        hint = f" (e.g. {', '.join(example[k] for k in missing)})" if set(missing) <= set(example) else ""
        if "touched" in obj:
            hint += "; a rule written before builds applied the rules: add them (the correction lines it wrote stay valid)"
        raise CorrectionsError(f"{where}: missing field(s) {missing} for a term rule{hint} (docs/FORMAT.md)")
    rule_id = obj["id"]
    if not isinstance(rule_id, str) or not RULE_ID.fullmatch(rule_id):
        raise CorrectionsError(f"{where}: id {rule_id!r}; expected letters, digits, '_', '.' or '-' (up to 64, "
                               'starting with a letter or digit), e.g. "r1"')
    _text(obj, "lang", where)
    if lang is not None and obj["lang"] != lang:
        raise CorrectionsError(f"{where}: lang {obj['lang']!r} in the rules file of {lang!r}; give the file of "
                               "that language")
    _text(obj, "find", where)
    replace = obj["replace"]
    if not isinstance(replace, str):
        raise CorrectionsError(f"{where}: replace is {replace!r}; expected a string (\"\" removes the words)")
    if replace.strip():  # "" (or spaces) removes the words found; any other text is checked as every text is
        _text(obj, "replace", where)
    word = obj["english_word"]
    if word is not None:
        _text(obj, "english_word", where)
        if len(word.replace(",", " ").split()) != 1:
            raise CorrectionsError(f"{where}: english_word {word!r} is not one word; give one word of the English "
                                   "titles (e.g. \"account\"), or null for every title")
    _text(obj, "submitted_at", where)
    _annotators(obj, where)
    if not isinstance(obj.get("part_of_word", False), bool):
        raise CorrectionsError(f"{where}: part_of_word is {obj['part_of_word']!r}; expected true or false (or leave it "
                               "out: whole words only)")
    for key in ("reason", "review"):
        if obj.get(key) is not None:
            _text(obj, key, where)
    touched = obj.get("touched", [])
    if not isinstance(touched, list) or not all(isinstance(t, str) for t in touched):
        raise CorrectionsError(f"{where}: touched is {touched!r}; expected a list of source ids (or leave it out)")
    return obj


def _unique_ids(lines: list[tuple[int, dict]], path: Path) -> None:
    seen: dict[str, int] = {}
    for lineno, obj in lines:
        if obj["id"] in seen:
            raise CorrectionsError(f"{path}:{lineno}: id {obj['id']!r} is already the id of line {seen[obj['id']]}; "
                                   "give each rule its own id")
        seen[obj["id"]] = lineno


def read_rule_lines(path: Path, lang: str | None = None) -> list[tuple[int, dict]]:
    """``(line number, line)`` of every term rule of the rules file ``path``, each checked by ``check_rule``, the
    ids unique."""
    lines = [(lineno, check_rule(obj, where, lang)) for lineno, obj, where in _json_lines(path, "rules file")]
    _unique_ids(lines, path)
    return lines


def write_rules(path: str | Path, lines: list[dict], lang: str | None = None) -> Path:
    """Replace the rules file ``path`` with ``lines``, whole or not at all, each checked by ``check_rule`` first."""
    path = Path(path)
    for i, line in enumerate(lines, 1):
        check_rule(line, f"{path}: line {i} to write", lang)
    _unique_ids(list(enumerate(lines, 1)), path)
    return write_file_atomically(path, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))


def read_rules(path: str | Path, lang: str) -> list[TermRule]:
    """The term rules of the rules file ``path``, in its order ([] when there is no such file)."""
    path = Path(path)
    if not path.is_file():
        return []
    return [TermRule(obj["id"], obj["find"], obj["replace"], obj["english_word"], tuple(obj["annotators"]), lineno,
                     bool(obj.get("part_of_word", False)))
            for lineno, obj in read_rule_lines(path, lang)]


def read_corrections(path: str | Path | None, lang: str) -> Corrections:
    if path is None:
        return Corrections()
    path = Path(path)
    rules = rules_path_of(path)
    if not path.is_file() and not rules.is_file():
        raise CorrectionsError(f"{path}: corrections file not found")
    out = Corrections(path=path)
    if rules.is_file():
        out.rules, out.rules_path = read_rules(rules, lang), rules
    if not path.is_file():  # a rules file alone: `annotation rule --apply` in a folder without pulled answers
        return out
    for lineno, obj in read_lines(path, lang):
        if obj["kind"] == KIND_TRANSLATION:
            sid = obj["source_id"]
            out.translations[sid] = TranslationCorrection(
                source_id=sid, masculine=obj["masculine"], feminine=obj["feminine"],
                gender_marking=obj["gender_marking"], flag=obj["flag"], annotators=tuple(obj["annotators"]),
                review=obj.get("review"), reason=obj.get("reason"),
            )
            out.lines[sid] = lineno
        else:
            key = (obj["query_source_id"], obj["doc_source_id"])
            out.relevance[key] = obj["relevant"]
            out.lines[key] = lineno
    return out


def check_source_ids(corrections: Corrections, queries: Iterable[str], corpus: Iterable[str]) -> None:
    """A CorrectionsError naming file:line for the first correction whose English id is not in the source: a
    translation's ``source_id`` must be a query or corpus id, a label's ``query_source_id`` a query id and its
    ``doc_source_id`` a corpus id. Such a line would change nothing yet be counted as applied in stats.json."""
    queries, corpus = set(queries), set(corpus)
    found = []
    for sid in corrections.translations:
        if sid not in queries and sid not in corpus:
            found.append((corrections.lines.get(sid, 0), f"source_id {sid!r} is no id of the English source"))
    for q, d in corrections.relevance:
        if q not in queries:
            found.append((corrections.lines.get((q, d), 0), f"query_source_id {q!r} is no query id of the English source"))
        elif d not in corpus:
            found.append((corrections.lines.get((q, d), 0), f"doc_source_id {d!r} is no corpus id of the English source"))
    if found:
        lineno, problem = min(found)
        raise CorrectionsError(f"{corrections.path}:{lineno}: {problem}; remove the line, or build from the English "
                               "source it was made for")


def prepare_corrections(path: str | Path, lang: str) -> tuple[Corrections, list[Path]]:
    """Check the language's corrections file and its rules file; create each empty (no corrections, no rules)
    when it does not exist yet. Returns what they hold and the files created."""
    path = Path(path)
    created = [p for p in (path, rules_path_of(path)) if not p.exists()]
    if created and not path.parent.is_dir():
        raise CorrectionsError(f"{path.parent}: the corrections folder does not exist; run from the repository root "
                               "(it holds corrections/) or pass --corrections")
    found = read_corrections(path, lang) if len(created) < 2 else Corrections(path=path)  # checked before any is made
    for p in created:
        p.touch()
    return found, created
