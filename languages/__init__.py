"""Language packs: one YAML declaration per language, read by the builder, eval and the release card.

A pack (``languages/packs/<code>.yaml``, keys in docs/new-language.md) holds everything language-specific:
name, default translator, templates per translator, the strip pattern, the ending-rule gender tables, the
lexicon gender layer's resources and rules, the mitigation's normalisation rules, web-translator codes and
the paper's Table-1 row. ``load(code)`` returns it as a frozen ``Language``; a missing or malformed key is a
``LanguageError`` naming the file and the key. The shape of a pack is declared here as dataclasses and checked by
config's typed reader (``config.read_typed``, the one that reads params.yaml); this module then only reshapes what
was read and checks what joins keys (``_language``).

Folders searched, first match wins: ``extra_dirs`` given by the caller (params.yaml ``language_packs``), then
``$GJT_LANGUAGE_PACKS`` (``os.pathsep``-separated), then the built-in ``languages/packs``. So a user adds a
language by writing one file in a folder of their own.

This package imports nothing from builder/ or eval/: both read it. It reads YAML through config/ (shared ground).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import yaml

from config import load_yaml as _load_yaml  # the one YAML reader (caps, libyaml, exact error lines)
from config import Check, NonEmptyStr, read_typed, yaml_error_where  # the one typed reader (params.yaml's too)

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


# --- the shape of a pack ----------------------------------------------------------------------------------------
# A pack is declared by the dataclasses below and read by config's typed reader (config.read_typed), the one engine
# that also reads params.yaml: the field names are the keys a pack may hold, the types what each value must be,
# the defaults what an absent key means. Where the toolkit keeps a value as the pack writes it, the public
# dataclass is the declaration (LexiconRules, MitigationRules, FormsRules, ...); where it reshapes what it reads
# (gender letters to names, sections that may be null, the reference files), a private one (_Pack, _GenderRules,
# ...) declares the file and ``_language`` builds the public objects from it, with the checks across keys.


def _is_regex(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"is not a valid regular expression ({exc}); fix the pattern") from None
    return True


GenderLetter = Literal[tuple(GENDERS)]  # m | f | n, read as masculine | feminine | neutral
# [ending, replacement]: an ending rule (the replacement may be '' for none)
EndingPair = tuple[NonEmptyStr, str]
Regex = Annotated[NonEmptyStr, Check(_is_regex, "a regular expression")]
StripPattern = Annotated[str, Check(compile_strip, "a regular expression with a named group (?P<title>...)")]
TemplateText = Annotated[str, Check(lambda t: "{title}" in t, "a string containing {title}")]
Sha256 = Annotated[str, Check(lambda s: re.fullmatch(r"[0-9a-f]{64}", s), "64 lowercase hexadecimal digits")]
PositiveInt = Annotated[int, Check(lambda n: n >= 1, "a positive integer")]
CountFrom0 = Annotated[int, Check(lambda n: n >= 0, "an integer >= 0")]


@dataclass(frozen=True)
class SpacyPipeline:
    name: NonEmptyStr
    install: NonEmptyStr  # the command that installs it, shown when it is missing


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

    package: NonEmptyStr  # the Apertium package holding both dictionaries
    analyser: NonEmptyStr  # file under /usr/share/apertium/<package>/
    generator: NonEmptyStr
    hunspell_package: NonEmptyStr
    hunspell_dicts: tuple[NonEmptyStr, ...]
    phrase_end: frozenset[NonEmptyStr]
    noun_rules: tuple[EndingPair, ...]  # (masculine ending, feminine ending), longest first
    adjective_rules: tuple[EndingPair, ...]
    common_endings: tuple[NonEmptyStr, ...] = ()
    irregular: dict[str, str] = field(default_factory=dict)  # masculine -> feminine no ending rule makes
    loanwords: frozenset[NonEmptyStr] = frozenset()
    common_nouns: frozenset[NonEmptyStr] = frozenset()
    # "and" words inside the head's phrase: the words after one agree with the head as the words before it do
    # (ingeniera eléctrica y electrónica, chefe jurídica e secretária)
    coordinating: frozenset[NonEmptyStr] = frozenset()
    # masculine -> feminine of adjectives the lexicon reads otherwise (es adjunto: only a verb form of adjuntar)
    adjectives: dict[str, str] = field(default_factory=dict)
    # adjectives that in a job title qualify the person, wherever they stand (ingénieure en logiciel distinguée,
    # not a distinguished software): past a complement they agree with the head, whatever the complement's gender
    person_adjectives: frozenset[NonEmptyStr] = frozenset()
    # the prepositions for "of": an infinitive after one is a calque of English -ing (director de xestionar)
    genitive: frozenset[NonEmptyStr] = frozenset()


@dataclass(frozen=True)
class AdjectiveBeforeHead:
    """Head-last languages: an adjective before a changed head takes the masculine ending (leitende -> leitender)."""

    ending: NonEmptyStr
    append: NonEmptyStr
    min_length: int


@dataclass(frozen=True)
class MitigationRules:
    """The normalisation of feminine titles to a canonical form (eval/mitigation.py, docs/audit.md)."""

    suffixes: tuple[EndingPair, ...]  # (feminine suffix, canonical suffix)
    lexicon: dict[str, str] = field(default_factory=dict)
    keep_words: frozenset[NonEmptyStr] = frozenset()
    keep_suffixes: tuple[NonEmptyStr, ...] = ()
    stop_words: frozenset[NonEmptyStr] = frozenset()
    feminine_nouns: frozenset[NonEmptyStr] = frozenset()
    feminine_noun_suffixes: tuple[NonEmptyStr, ...] = ()
    min_stem: CountFrom0 = 2
    remove_pattern: Regex | None = None  # removed before the rules (German inclusive spellings: ingenieur*in)
    adjective_before_changed_head: AdjectiveBeforeHead | None = None


# How a doublet writes the feminine ending beside the masculine word (builder/forms.py, docs/forms.md):
# style -> (text before the ending, text after it): ingeniero/a, engenheiro(a), ingénieur·e, Ingenieur:in, Ingenieur*in.
FORM_STYLES = {"slash": ("/", ""), "parenthesis": ("(", ")"), "middot": ("·", ""), "colon": (":", ""), "star": ("*", ""),
               "slash_hyphen": ("/-", "")}  # German Ingenieur/-in
IRREGULAR_POLICIES = ("full_word", "none")
FormStyle = Literal[tuple(FORM_STYLES)]
DoubletEnding = Annotated[tuple[str, str], Check(lambda e: e[0] != e[1], "[masculine ending, feminine ending], two "
                                                 "different strings ('' for none)")]
NeomorphemeEnding = tuple[str, str, NonEmptyStr]  # masculine, feminine, neutral ending (the neutral one not empty)


@dataclass(frozen=True)
class DoubletRules:
    """The doublet job ads write (ingeniero/a mecánico/a): made from a confirmed masculine/feminine pair."""

    style: FormStyle  # the canonical style, the one the test set's doublet items use (a FORM_STYLES key)
    # other styles in use, made on request (builder.forms.doublet(style=...)); keyword-only: the only default
    variants: tuple[FormStyle, ...] = field(default=(), kw_only=True)
    # (masculine ending, feminine ending) written short; first match wins
    endings: Annotated[tuple[DoubletEnding, ...], Check(bool, "a non-empty list of [masculine ending, feminine "
                                                              "ending] pairs")]
    # a word pair no ending makes (actor/actriz): full_word (written m/f) | none (no doublet)
    irregular: Literal[IRREGULAR_POLICIES]


@dataclass(frozen=True)
class NeomorphemeRules:
    """The neutral neomorpheme form (es/pt -e, it -ə): a proposal in use, never the standard language."""

    # (masculine ending, feminine ending, neutral ending); first match wins
    endings: Annotated[tuple[NeomorphemeEnding, ...], Check(bool, "a non-empty list of [masculine ending, feminine "
                                                                  "ending, neutral ending] triples")]
    respell: tuple[EndingPair, ...] = ()  # spelling kept before the new ending (es medic+e -> médique: [ce, que])


@dataclass(frozen=True)
class FormsRules:
    doublet: DoubletRules | None = None
    neomorpheme: NeomorphemeRules | None = None


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
    return _language(path, read_typed(_Pack, data, where=path, error=LanguageError))


# The pack file where the toolkit keeps something else than what it reads (see "the shape of a pack" above).
@dataclass(frozen=True)
class _GenderRules:
    """``gender_rules:`` as written: genders as the letters m, f, n (GenderRules holds their names)."""

    head_last: bool
    suffixes: tuple[tuple[NonEmptyStr, GenderLetter], ...]
    articles: dict[str, GenderLetter]
    phrase_end: frozenset[NonEmptyStr]
    weak: frozenset[NonEmptyStr] = frozenset()
    agreement: tuple[tuple[NonEmptyStr, GenderLetter], ...] = ()
    spacy_pipeline: SpacyPipeline | None = None


@dataclass(frozen=True)
class Template:
    """One entry of ``templates:``; Language.templates keeps it as the mapping given (``lowercase`` only if given)."""

    masculine: TemplateText
    feminine: TemplateText
    lowercase: bool | None = None


@dataclass(frozen=True)
class _Quality:
    """``quality:``; Language.quality keeps the keys given, as a mapping of strings."""

    status: Literal["stable", "experimental"] | None = None
    sample: str | None = None
    errors: str | None = None


@dataclass(frozen=True)
class _ReferenceFile:
    sha256: Sha256
    rows: PositiveInt


@dataclass(frozen=True)
class _Reference:
    """``reference:``; ReferenceRules keeps each file as (sha256, rows)."""

    translated_by: Literal["people", "machine"]
    files: dict[str, _ReferenceFile]


REFERENCE_FILES = ("queries.tsv", "corpus_documents.tsv", "annotations.tsv")


@dataclass(frozen=True)
class _Pack:
    """A whole pack file (the keys: docs/new-language.md); a section that may be null is None here."""

    code: NonEmptyStr
    name: NonEmptyStr
    strip: StripPattern
    gender_rules: _GenderRules
    notes: NonEmptyStr | None = None
    translator: NonEmptyStr | None = None
    web_codes: dict[str, str] | None = None
    templates: dict[str, Template] | None = None
    paper_table1: tuple[int, int, int, int, int, int] | None = None
    paper_table2_ao: dict[str, float] | None = None  # model -> AO
    paper_table4_map: dict[str, tuple[float, float]] | None = None  # model -> MAP (feminine, masculine queries)
    lexicon: LexiconRules | None = None
    mitigation: MitigationRules | None = None
    quality: _Quality | None = None
    forms: FormsRules | None = None
    route: Literal[ROUTES] = "mt"
    gender_layer: Literal[GENDER_LAYERS] | None = None  # None: lexicon with a lexicon: section, else rules
    reference: _Reference | None = None


def _language(path: Path, pack: _Pack) -> Language:
    """The pack as the toolkit holds it, after the checks that join keys (and the file's name)."""

    def fail(key: str, what: str) -> typing.NoReturn:
        raise LanguageError(f"{path}: {key} {what if len(what) <= 300 else what[:300] + '…'}")

    if pack.code != path.stem:
        fail("code", f"is {pack.code!r} but the file is {path.name}; name the file <code>.yaml")
    if pack.route == "reference" and pack.reference is None:
        fail("route", "is 'reference' but the pack has no reference: section (the translated files' checksums)")
    layer = pack.gender_layer or ("lexicon" if pack.lexicon is not None else "rules")
    if layer == "lexicon" and pack.lexicon is None:
        fail("gender_layer", "is 'lexicon' but the pack has no lexicon: section")
    reference = None
    if pack.reference is not None:
        files = pack.reference.files
        if set(files) != set(REFERENCE_FILES):
            fail("reference.files", f"names {sorted(files, key=str)}; expected {sorted(REFERENCE_FILES)}")
        reference = ReferenceRules(pack.reference.translated_by, {n: (f.sha256, f.rows) for n, f in files.items()})
    rules = pack.gender_rules
    given = lambda section: {k: v for k, v in dataclasses.asdict(section).items() if v is not None}  # noqa: E731
    return Language(
        code=pack.code,
        name=pack.name,
        notes=pack.notes or "",
        translator=pack.translator,
        web_codes=pack.web_codes or {},
        templates={name: given(t) for name, t in (pack.templates or {}).items()},
        strip=pack.strip,
        paper_table1=pack.paper_table1,
        paper_table2_ao=pack.paper_table2_ao or {},
        paper_table4_map=pack.paper_table4_map or {},
        gender_rules=GenderRules(
            head_last=rules.head_last,
            suffixes=tuple((ending, GENDERS[g]) for ending, g in rules.suffixes),
            weak=rules.weak,
            articles={article: GENDERS[g] for article, g in rules.articles.items()},
            agreement=tuple((ending, GENDERS[g]) for ending, g in rules.agreement),
            phrase_end=rules.phrase_end,
            spacy_pipeline=rules.spacy_pipeline,
        ),
        lexicon=pack.lexicon,
        mitigation=pack.mitigation,
        quality=given(pack.quality) if pack.quality is not None else {},
        path=path,
        forms=pack.forms,
        route=pack.route,
        gender_layer=layer,
        reference=reference,
    )
