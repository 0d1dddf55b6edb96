"""Language packs: one YAML declaration per language, read by the builder, eval and the release card.

A pack (``languages/packs/<code>.yaml``, keys in docs/new-language.md) holds everything language-specific:
name, default translator, templates per translator, the strip pattern, the ending-rule gender tables, the
lexicon gender layer's resources and rules, the mitigation's normalisation rules, web-translator codes and
the paper's Table-1 row. ``load(code)`` returns it as a frozen ``Language``; a missing or malformed key is a
``LanguageError`` naming the file and the key.

Folders searched, first match wins: ``extra_dirs`` given by the caller (params.yaml ``language_packs``), then
``$GJT_LANGUAGE_PACKS`` (``os.pathsep``-separated), then the built-in ``languages/packs``. So a user adds a
language by writing one file in a folder of their own.

This package imports nothing from builder/ or eval/: both read it. It reads YAML through config/ (shared ground).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from config import load_yaml as _load_yaml  # the one YAML reader (caps, libyaml, exact error lines)
from config import yaml_error_where

BUILTIN_DIR = Path(__file__).resolve().parent / "packs"
PACKS_ENV = "GJT_LANGUAGE_PACKS"
GENDERS = {"m": "masculine", "f": "feminine", "n": "neutral"}
# A language code: lowercase ISO 639 with optional subtags (pt, pt-br). Always matched whole (``is_code``:
# fullmatch), never with ``match`` and ``$``, which accepts a trailing newline ("pt\n").
CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})*")
ROUTES = ("mt", "reference")  # builder: translate the English titles, or start from the dataset's own translations
# The pack values of gender_layer: builder/layers.py registers a layer under each but "rules" (the ending rules).
GENDER_LAYERS = ("lexicon", "german", "dutch", "polish", "rules")


class LanguageError(Exception):
    """A language pack that is missing or wrong; the message names the file and the key."""


def is_code(text: object) -> bool:
    """Whether ``text`` is a language code as a whole (no path separator, no markup, no trailing newline)."""
    return isinstance(text, str) and CODE.fullmatch(text) is not None


def check_code(text: object, what: str = "--lang") -> str:
    """``text`` when it is a language code, else a ``LanguageError`` naming ``what`` (the option or file that
    gave it). The one check of every entry point: the CLIs' ``--lang``, test-set folder names, results keys."""
    if not is_code(text):
        shown = repr(text) if len(repr(text)) <= 60 else repr(text)[:57] + "..."
        raise LanguageError(f"{what} {shown} is not a language code (a lowercase ISO 639 code such as pt, or pt-br)")
    return text


def compile_strip(pattern: str) -> re.Pattern:
    """A strip pattern compiled as the builder matches it (case-insensitive), when it is one: a regular expression
    with a named group ``title``. The one check of the pack's ``strip`` and params.yaml ``build.strip.<code>``;
    a ValueError says what is wrong, and the caller names the file and key."""
    try:
        compiled = re.compile(pattern, re.IGNORECASE | re.UNICODE)
    except re.error as exc:
        raise ValueError(f"is not a valid regular expression ({exc}); fix the pattern") from None
    if "title" not in compiled.groupindex:
        raise ValueError(f"is {pattern!r}; expected a pattern with a named group (?P<title>...)")
    return compiled


def languages_under(root, list_languages) -> list[str]:
    """``list_languages(root)`` (the format's listing, passed in: this package imports none of eval) with every
    folder name checked by ``check_code``: a folder like ``x<img src=x onerror=...>`` holding a test set is
    refused, naming it, before its name reaches a file name, a dataset name or a page."""
    from pathlib import Path

    found = list_languages(root)
    for name in found:
        check_code(name, f"{Path(root) / name}: a test-set folder whose name")
    return found


@dataclass(frozen=True)
class SpacyPipeline:
    name: str
    install: str  # the command that installs it, shown when it is missing


@dataclass(frozen=True)
class GenderRules:
    """The ending-rule gender check (builder/gender.py), used where no lexicon is declared and for the article."""

    head_last: bool  # the head noun is the last word (German compounds), else the first (Romance)
    suffixes: tuple[tuple[str, str], ...]  # (ending, gender), checked in order: longer endings first
    weak: frozenset[str]  # endings common-gender nouns share with inflecting ones (pt -o/-a)
    articles: dict[str, str]  # indefinite article -> gender
    agreement: tuple[tuple[str, str], ...]  # endings of agreeing adjectives and participles -> gender
    phrase_end: frozenset[str]  # words that end the head's noun phrase
    spacy_pipeline: SpacyPipeline | None


@dataclass(frozen=True)
class LexiconRules:
    """The lexicon gender layer (builder/inflection.py): which Debian files and which documented rules."""

    package: str  # the Apertium package holding both dictionaries
    analyser: str  # file under /usr/share/apertium/<package>/
    generator: str
    hunspell_package: str
    hunspell_dicts: tuple[str, ...]
    phrase_end: frozenset[str]
    noun_rules: tuple[tuple[str, str], ...]  # (masculine ending, feminine ending), longest first
    adjective_rules: tuple[tuple[str, str], ...]
    common_endings: tuple[str, ...]
    irregular: dict[str, str]  # masculine -> feminine no ending rule makes
    loanwords: frozenset[str]
    common_nouns: frozenset[str]
    # "and" words inside the head's phrase: the words after one agree with the head as the words before it do
    # (ingeniera eléctrica y electrónica, chefe jurídica e secretária)
    coordinating: frozenset[str] = frozenset()
    # masculine -> feminine of adjectives the lexicon reads otherwise (es adjunto: only a verb form of adjuntar)
    adjectives: dict[str, str] = field(default_factory=dict)
    # adjectives that in a job title qualify the person, wherever they stand (ingénieure en logiciel distinguée,
    # not a distinguished software): past a complement they agree with the head, whatever the complement's gender
    person_adjectives: frozenset[str] = frozenset()
    # the prepositions for "of": an infinitive after one is a calque of English -ing (director de xestionar)
    genitive: frozenset[str] = frozenset()


@dataclass(frozen=True)
class AdjectiveBeforeHead:
    """Head-last languages: an adjective before a changed head takes the masculine ending (leitende -> leitender)."""

    ending: str
    append: str
    min_length: int


@dataclass(frozen=True)
class MitigationRules:
    """The normalisation of feminine titles to a canonical form (eval/mitigation.py, docs/audit.md)."""

    suffixes: tuple[tuple[str, str], ...]  # (feminine suffix, canonical suffix)
    lexicon: dict[str, str]
    keep_words: frozenset[str]
    keep_suffixes: tuple[str, ...]
    stop_words: frozenset[str]
    feminine_nouns: frozenset[str]
    feminine_noun_suffixes: tuple[str, ...]
    min_stem: int
    remove_pattern: str | None  # removed before the rules (German inclusive spellings: ingenieur*in)
    adjective_before_changed_head: AdjectiveBeforeHead | None


# How a doublet writes the feminine ending beside the masculine word (builder/forms.py, docs/forms.md):
# style -> (text before the ending, text after it): ingeniero/a, engenheiro(a), ingénieur·e, Ingenieur:in, Ingenieur*in.
FORM_STYLES = {"slash": ("/", ""), "parenthesis": ("(", ")"), "middot": ("·", ""), "colon": (":", ""), "star": ("*", ""),
               "slash_hyphen": ("/-", "")}  # German Ingenieur/-in
IRREGULAR_POLICIES = ("full_word", "none")


@dataclass(frozen=True)
class DoubletRules:
    """The doublet job ads write (ingeniero/a mecánico/a): made from a confirmed masculine/feminine pair."""

    style: str  # the canonical style, the one the test set's doublet items use (a FORM_STYLES key)
    variants: tuple[str, ...]  # other styles in use, made on request (builder.forms.doublet(style=...))
    endings: tuple[tuple[str, str], ...]  # (masculine ending, feminine ending) written short; first match wins
    irregular: str  # a word pair no ending makes (actor/actriz): full_word (written m/f) | none (no doublet)


@dataclass(frozen=True)
class NeomorphemeRules:
    """The neutral neomorpheme form (es/pt -e, it -ə): a proposal in use, never the standard language."""

    endings: tuple[tuple[str, str, str], ...]  # (masculine ending, feminine ending, neutral ending); first match wins
    respell: tuple[tuple[str, str], ...]  # spelling kept before the new ending (es medic+e -> médique: [ce, que])


@dataclass(frozen=True)
class FormsRules:
    doublet: DoubletRules | None
    neomorpheme: NeomorphemeRules | None


@dataclass(frozen=True)
class ReferenceRules:
    """The source dataset's own translation of the English titles (builder/reference.py, the reference route)."""

    translated_by: str  # people | machine
    files: dict[str, tuple[str, int]]  # file name -> (SHA-256 at the pinned commit, rows)


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    notes: str
    translator: str | None  # the default translator (params.yaml build.translator.<code> overrides)
    web_codes: dict[str, str]  # web translator -> its code for this language (mymemory: pt-PT)
    templates: dict[str, dict]  # translator (or "default") -> {masculine, feminine, lowercase}
    strip: str  # full-match pattern with a named group ``title`` (params.yaml build.strip.<code> overrides)
    paper_table1: tuple[int, ...] | None  # the paper's Table 1 row (queries M/F, N, T; corpus M/F, N, T)
    # The paper's published figures per model (the paper's model names): Table 2 AO over the masculine corpora,
    # Table 4 MAP (feminine queries, masculine queries) over the masculine corpora.
    paper_table2_ao: dict[str, float]
    paper_table4_map: dict[str, tuple[float, float]]
    gender_rules: GenderRules
    lexicon: LexiconRules | None
    mitigation: MitigationRules | None
    # The hand-checked quality of the offline build (docs/fidelity.md): status stable | experimental (below 85% of
    # sampled pairs correct), the sample's figures, the main error kinds; the release card prints them.
    quality: dict[str, str]
    path: Path  # the pack file it was read from
    # Doublet and neomorpheme forms made from the gender layer's pairs (builder/forms.py); None: no forms declared.
    forms: FormsRules | None = None
    # The default route (params.yaml build.route.<code> overrides): ``mt`` translates the English titles with the
    # templates; ``reference`` starts from the source dataset's own translations (builder/reference.py).
    route: str = "mt"
    # What decides gender: ``lexicon`` (builder/inflection.py, the ``lexicon:`` section), ``german``
    # (builder/german.py: Wiktionary nouns and Hunspell), or ``rules`` (builder/gender.py's ending rules).
    gender_layer: str = "rules"
    reference: ReferenceRules | None = None

    @property
    def experimental(self) -> bool:
        return self.quality.get("status") == "experimental"

    def web_code(self, translator: str) -> str:
        return self.web_codes.get(translator, self.code)


def pack_dirs(extra_dirs=None) -> list[Path]:
    dirs = [Path(d) for d in (extra_dirs or [])]
    dirs += [Path(d) for d in os.environ.get(PACKS_ENV, "").split(os.pathsep) if d]
    return dirs + [BUILTIN_DIR]


def find_pack(code: str, extra_dirs=None) -> Path:
    if not is_code(code):
        raise LanguageError(f"{code!r} is not a language code (lowercase ISO 639 code, e.g. pt)")
    dirs = pack_dirs(extra_dirs)
    for d in dirs:
        p = d / f"{code}.yaml"
        if p.is_file():
            return p
    raise LanguageError(f"no language pack {code}.yaml in {', '.join(str(d) for d in dirs)}; write one "
                        "(docs/new-language.md) or add its folder to params.yaml language_packs / $" + PACKS_ENV)


def available(extra_dirs=None) -> list[str]:
    """Codes of every pack found, first folder wins."""
    return sorted({p.stem for d in pack_dirs(extra_dirs) if d.is_dir() for p in d.glob("*.yaml")})


def load(code: str, extra_dirs=None) -> Language:
    """The declaration of one language (cached per code and folder list)."""
    return _load_file(find_pack(code, extra_dirs))


def resolve(lang: "str | Language", extra_dirs=None) -> Language:
    """A declaration as given, or the pack of a code: for library callers that hold only a code."""
    return lang if isinstance(lang, Language) else load(lang, extra_dirs)


@functools.lru_cache(maxsize=None)
def _load_file(path: Path) -> Language:
    try:
        data = _load_yaml(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise LanguageError(f"{path}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start:exc.start + 1]!r}); "
                            "save the pack as UTF-8") from None
    except yaml.YAMLError as exc:
        line, problem = yaml_error_where(exc)
        raise LanguageError(f"{path}{line}: not a readable YAML file ({problem}); fix the pack") from None
    except OSError as exc:
        raise LanguageError(f"{path}: not a readable YAML file ({exc})") from None
    return _Reader(path).language(data)


class _Reader:
    """Typed reading of one pack; every failure names the file and the dotted key."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, key: str, what: str):
        what = what if len(what) <= 300 else what[:300] + "…"  # one short line, whatever the value holds
        raise LanguageError(f"{self.path}: {key} {what}")

    def mapping(self, data, key: str, optional: bool = False) -> dict | None:
        if data is None and optional:
            return None
        if not isinstance(data, dict):
            self.fail(key, f"is {data!r}; expected a mapping")
        return data

    def get(self, data: dict, key: str, prefix: str, default=...):
        if key not in data:
            if default is ...:
                self.fail(f"{prefix}{key}", "is missing")
            return default
        return data[key]

    def string(self, value, key: str, optional: bool = False) -> str | None:
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            self.fail(key, f"is {value!r}; expected a non-empty string")
        return value

    def words(self, value, key: str, allow_empty_items: bool = False) -> tuple[str, ...]:
        if not isinstance(value, list) or any(not isinstance(w, str) or (not w and not allow_empty_items) for w in value):
            self.fail(key, f"is {value!r}; expected a list of strings")
        return tuple(value)

    def pairs(self, value, key: str, second: set[str] | None = None) -> tuple[tuple[str, str], ...]:
        ok = isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                                            and p[0] for p in value)
        if not ok:
            self.fail(key, f"is {value!r}; expected a list of [string, string] pairs")
        if second is not None:
            bad = [p for p in value if p[1] not in second]
            if bad:
                self.fail(key, f"has {bad[0]!r}; the second item must be one of {', '.join(sorted(second))}")
            return tuple((a, GENDERS[b]) for a, b in value)
        return tuple((a, b) for a, b in value)

    def str_map(self, value, key: str) -> dict[str, str]:
        value = self.mapping(value, key)
        if any(not isinstance(k, str) or not isinstance(v, str) for k, v in value.items()):
            self.fail(key, "expected a mapping of strings to strings")
        return dict(value)

    def unknown(self, data: dict, allowed: set[str], prefix: str) -> None:
        extra = sorted(set(data) - allowed)
        if extra:
            self.fail(f"{prefix}{extra[0]}", f"is not a pack key (known: {', '.join(sorted(allowed))})")

    def language(self, data) -> Language:
        d = self.mapping(data, "the pack")
        top = {"code", "name", "notes", "translator", "web_codes", "templates", "strip", "paper_table1",
               "paper_table2_ao", "paper_table4_map", "gender_rules", "lexicon", "mitigation", "quality", "forms",
               "route", "gender_layer", "reference"}
        self.unknown(d, top, "")
        code = self.string(self.get(d, "code", ""), "code")
        if code != self.path.stem:
            self.fail("code", f"is {code!r} but the file is {self.path.name}; name the file <code>.yaml")
        strip = self.string(self.get(d, "strip", ""), "strip")
        try:
            compile_strip(strip)
        except ValueError as exc:
            self.fail("strip", str(exc))
        templates = {}
        for name, t in self.mapping(self.get(d, "templates", "", {}) or {}, "templates").items():
            key = f"templates.{name}"
            t = self.mapping(t, key)
            self.unknown(t, {"masculine", "feminine", "lowercase"}, f"{key}.")
            for g in ("masculine", "feminine"):
                if "{title}" not in (self.string(self.get(t, g, f"{key}."), f"{key}.{g}")):
                    self.fail(f"{key}.{g}", "needs {title}")
            if not isinstance(t.get("lowercase", False), bool):
                self.fail(f"{key}.lowercase", "expected true or false")
            templates[str(name)] = dict(t)
        row = self.get(d, "paper_table1", "", None)
        if row is not None and (not isinstance(row, list) or len(row) != 6 or any(
                not isinstance(n, int) or isinstance(n, bool) for n in row)):
            self.fail("paper_table1", f"is {row!r}; expected six integers or null")
        route = self.get(d, "route", "", "mt")
        if route not in ROUTES:
            self.fail("route", f"is {route!r}; expected one of {', '.join(ROUTES)}")
        reference = self.reference(self.mapping(self.get(d, "reference", "", None), "reference", optional=True))
        if route == "reference" and reference is None:
            self.fail("route", "is 'reference' but the pack has no reference: section (the translated files' checksums)")
        lexicon = self.lexicon(self.mapping(self.get(d, "lexicon", "", None), "lexicon", optional=True))
        layer = self.get(d, "gender_layer", "", "lexicon" if lexicon else "rules")
        if layer not in GENDER_LAYERS:
            self.fail("gender_layer", f"is {layer!r}; expected one of {', '.join(GENDER_LAYERS)}")
        if layer == "lexicon" and lexicon is None:
            self.fail("gender_layer", "is 'lexicon' but the pack has no lexicon: section")
        return Language(
            code=code,
            name=self.string(self.get(d, "name", ""), "name"),
            notes=self.string(self.get(d, "notes", "", ""), "notes", optional=True) or "",
            translator=self.string(self.get(d, "translator", "", None), "translator", optional=True),
            web_codes=self.str_map(self.get(d, "web_codes", "", {}) or {}, "web_codes"),
            templates=templates,
            strip=strip,
            paper_table1=tuple(row) if row is not None else None,
            paper_table2_ao=self.figures(self.get(d, "paper_table2_ao", "", {}) or {}, "paper_table2_ao", 1),
            paper_table4_map=self.figures(self.get(d, "paper_table4_map", "", {}) or {}, "paper_table4_map", 2),
            gender_rules=self.gender_rules(self.mapping(self.get(d, "gender_rules", ""), "gender_rules")),
            lexicon=lexicon,
            mitigation=self.mitigation(self.mapping(self.get(d, "mitigation", "", None), "mitigation", optional=True)),
            quality=self.quality(self.get(d, "quality", "", {}) or {}),
            path=self.path,
            forms=self.forms(self.mapping(self.get(d, "forms", "", None), "forms", optional=True)),
            route=route,
            gender_layer=layer,
            reference=reference,
        )

    def reference(self, d: dict | None) -> ReferenceRules | None:
        if d is None:
            return None
        p = "reference."
        self.unknown(d, {"translated_by", "files"}, p)
        by = self.get(d, "translated_by", p)
        if by not in ("people", "machine"):
            self.fail(p + "translated_by", f"is {by!r}; expected people or machine")
        files = self.mapping(self.get(d, "files", p), p + "files")
        wanted = {"queries.tsv", "corpus_documents.tsv", "annotations.tsv"}
        if set(files) != wanted:
            self.fail(p + "files", f"names {sorted(files)}; expected {sorted(wanted)}")
        out = {}
        for name, entry in files.items():
            key = f"{p}files.{name}"
            entry = self.mapping(entry, key)
            self.unknown(entry, {"sha256", "rows"}, key + ".")
            sha, rows = entry.get("sha256"), entry.get("rows")
            if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
                self.fail(key + ".sha256", "expected 64 lowercase hexadecimal digits")
            if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
                self.fail(key + ".rows", "expected a positive integer")
            out[name] = (sha, rows)
        return ReferenceRules(translated_by=by, files=out)

    def forms(self, d: dict | None) -> FormsRules | None:
        if d is None:
            return None
        self.unknown(d, {"doublet", "neomorpheme"}, "forms.")
        doublet = self.mapping(self.get(d, "doublet", "forms.", None), "forms.doublet", optional=True)
        if doublet is not None:
            p = "forms.doublet."
            self.unknown(doublet, {"style", "variants", "endings", "irregular"}, p)
            styles = [self.string(self.get(doublet, "style", p), p + "style")]
            styles += self.words(self.get(doublet, "variants", p, []), p + "variants")
            bad = [x for x in styles if x not in FORM_STYLES]
            if bad:
                self.fail(p + ("style" if bad[0] == styles[0] else "variants"),
                          f"has {bad[0]!r}; expected one of {', '.join(FORM_STYLES)}")
            irregular = self.string(self.get(doublet, "irregular", p), p + "irregular")
            if irregular not in IRREGULAR_POLICIES:
                self.fail(p + "irregular", f"is {irregular!r}; expected one of {', '.join(IRREGULAR_POLICIES)}")
            endings = self.get(doublet, "endings", p)
            if not isinstance(endings, list) or not endings or any(
                    not isinstance(e, list) or len(e) != 2 or not all(isinstance(x, str) for x in e) or e[0] == e[1]
                    for e in endings):
                self.fail(p + "endings", f"is {endings!r}; expected a list of [masculine ending, feminine ending] "
                          "pairs of two different strings ('' for none)")
            doublet = DoubletRules(styles[0], tuple(styles[1:]), tuple((a, b) for a, b in endings), irregular)
        neo = self.mapping(self.get(d, "neomorpheme", "forms.", None), "forms.neomorpheme", optional=True)
        if neo is not None:
            p = "forms.neomorpheme."
            self.unknown(neo, {"endings", "respell"}, p)
            endings = self.get(neo, "endings", p)
            if not isinstance(endings, list) or not endings or any(
                    not isinstance(e, list) or len(e) != 3 or not all(isinstance(x, str) for x in e) or not e[2]
                    for e in endings):
                self.fail(p + "endings", f"is {endings!r}; expected a list of [masculine ending, feminine ending, "
                          "neutral ending] triples (the neutral ending not empty)")
            neo = NeomorphemeRules(tuple((a, b, c) for a, b, c in endings),
                                   self.pairs(self.get(neo, "respell", p, []), p + "respell"))
        return FormsRules(doublet, neo)

    def quality(self, value) -> dict[str, str]:
        q = self.str_map(value, "quality")
        self.unknown(q, {"status", "sample", "errors"}, "quality.")
        if q.get("status", "stable") not in ("stable", "experimental"):
            self.fail("quality.status", f"is {q['status']!r}; expected stable or experimental")
        return q

    def figures(self, value, key: str, width: int) -> dict:
        """model -> a number (width 1) or a list of ``width`` numbers."""
        value = self.mapping(value, key)

        def number(x) -> bool:
            return isinstance(x, (int, float)) and not isinstance(x, bool)

        out = {}
        for model, v in value.items():
            ok = number(v) if width == 1 else isinstance(v, list) and len(v) == width and all(map(number, v))
            if not isinstance(model, str) or not ok:
                self.fail(f"{key}.{model}", f"is {v!r}; expected {'a number' if width == 1 else f'{width} numbers'}")
            out[model] = float(v) if width == 1 else tuple(float(x) for x in v)
        return out

    def gender_rules(self, d: dict) -> GenderRules:
        p = "gender_rules."
        self.unknown(d, {"head_last", "suffixes", "weak", "articles", "agreement", "phrase_end", "spacy_pipeline"}, p)
        head_last = self.get(d, "head_last", p)
        if not isinstance(head_last, bool):
            self.fail(p + "head_last", "expected true or false")
        articles = self.str_map(self.get(d, "articles", p), p + "articles")
        bad = [a for a, g in articles.items() if g not in GENDERS]
        if bad:
            self.fail(f"{p}articles.{bad[0]}", f"must be one of {', '.join(GENDERS)}")
        spacy = self.mapping(self.get(d, "spacy_pipeline", p, None), p + "spacy_pipeline", optional=True)
        if spacy is not None:
            self.unknown(spacy, {"name", "install"}, p + "spacy_pipeline.")
            spacy = SpacyPipeline(self.string(self.get(spacy, "name", p + "spacy_pipeline."), p + "spacy_pipeline.name"),
                                  self.string(self.get(spacy, "install", p + "spacy_pipeline."), p + "spacy_pipeline.install"))
        return GenderRules(
            head_last=head_last,
            suffixes=self.pairs(self.get(d, "suffixes", p), p + "suffixes", set(GENDERS)),
            weak=frozenset(self.words(self.get(d, "weak", p, []), p + "weak")),
            articles={a: GENDERS[g] for a, g in articles.items()},
            agreement=self.pairs(self.get(d, "agreement", p, []), p + "agreement", set(GENDERS)),
            phrase_end=frozenset(self.words(self.get(d, "phrase_end", p), p + "phrase_end")),
            spacy_pipeline=spacy,
        )

    def lexicon(self, d: dict | None) -> LexiconRules | None:
        if d is None:
            return None
        p = "lexicon."
        keys = ("package", "analyser", "generator", "hunspell_package", "hunspell_dicts", "phrase_end", "noun_rules",
                "adjective_rules", "common_endings", "irregular", "loanwords", "common_nouns", "coordinating", "adjectives",
                "person_adjectives", "genitive")
        self.unknown(d, set(keys), p)
        return LexiconRules(
            package=self.string(self.get(d, "package", p), p + "package"),
            analyser=self.string(self.get(d, "analyser", p), p + "analyser"),
            generator=self.string(self.get(d, "generator", p), p + "generator"),
            hunspell_package=self.string(self.get(d, "hunspell_package", p), p + "hunspell_package"),
            hunspell_dicts=self.words(self.get(d, "hunspell_dicts", p), p + "hunspell_dicts"),
            phrase_end=frozenset(self.words(self.get(d, "phrase_end", p), p + "phrase_end")),
            noun_rules=self.pairs(self.get(d, "noun_rules", p), p + "noun_rules"),
            adjective_rules=self.pairs(self.get(d, "adjective_rules", p), p + "adjective_rules"),
            common_endings=self.words(self.get(d, "common_endings", p, []), p + "common_endings"),
            irregular=self.str_map(self.get(d, "irregular", p, {}) or {}, p + "irregular"),
            loanwords=frozenset(self.words(self.get(d, "loanwords", p, []), p + "loanwords")),
            common_nouns=frozenset(self.words(self.get(d, "common_nouns", p, []), p + "common_nouns")),
            coordinating=frozenset(self.words(self.get(d, "coordinating", p, []), p + "coordinating")),
            adjectives=self.str_map(self.get(d, "adjectives", p, {}) or {}, p + "adjectives"),
            person_adjectives=frozenset(self.words(self.get(d, "person_adjectives", p, []), p + "person_adjectives")),
            genitive=frozenset(self.words(self.get(d, "genitive", p, []), p + "genitive")),
        )

    def mitigation(self, d: dict | None) -> MitigationRules | None:
        if d is None:
            return None
        p = "mitigation."
        keys = ("suffixes", "lexicon", "keep_words", "keep_suffixes", "stop_words", "feminine_nouns",
                "feminine_noun_suffixes", "min_stem", "remove_pattern", "adjective_before_changed_head")
        self.unknown(d, set(keys), p)
        suffixes = self.get(d, "suffixes", p)
        if not isinstance(suffixes, list) or any(not isinstance(s, list) or len(s) != 2 or not all(isinstance(x, str) for x in s)
                                                 or not s[0] for s in suffixes):
            self.fail(p + "suffixes", f"is {suffixes!r}; expected a list of [feminine suffix, canonical suffix] pairs")
        min_stem = self.get(d, "min_stem", p, 2)
        if not isinstance(min_stem, int) or isinstance(min_stem, bool) or min_stem < 0:
            self.fail(p + "min_stem", f"is {min_stem!r}; expected an integer >= 0")
        remove = self.string(self.get(d, "remove_pattern", p, None), p + "remove_pattern", optional=True)
        if remove is not None:
            try:
                re.compile(remove)
            except re.error as exc:
                self.fail(p + "remove_pattern", f"is not a valid regular expression ({exc})")
        adj = self.mapping(self.get(d, "adjective_before_changed_head", p, None), p + "adjective_before_changed_head",
                           optional=True)
        if adj is not None:
            q = p + "adjective_before_changed_head."
            self.unknown(adj, {"ending", "append", "min_length"}, q)
            n = self.get(adj, "min_length", q)
            if not isinstance(n, int) or isinstance(n, bool):
                self.fail(q + "min_length", "expected an integer")
            adj = AdjectiveBeforeHead(self.string(self.get(adj, "ending", q), q + "ending"),
                                      self.string(self.get(adj, "append", q), q + "append"), n)
        return MitigationRules(
            suffixes=tuple((a, b) for a, b in suffixes),
            lexicon=self.str_map(self.get(d, "lexicon", p, {}) or {}, p + "lexicon"),
            keep_words=frozenset(self.words(self.get(d, "keep_words", p, []), p + "keep_words")),
            keep_suffixes=self.words(self.get(d, "keep_suffixes", p, []), p + "keep_suffixes"),
            stop_words=frozenset(self.words(self.get(d, "stop_words", p, []), p + "stop_words")),
            feminine_nouns=frozenset(self.words(self.get(d, "feminine_nouns", p, []), p + "feminine_nouns")),
            feminine_noun_suffixes=self.words(self.get(d, "feminine_noun_suffixes", p, []), p + "feminine_noun_suffixes"),
            min_stem=min_stem,
            remove_pattern=remove,
            adjective_before_changed_head=adj,
        )
