"""The builder's sections of params.yaml (`source:`, `build:`, and the top-level `languages` and
`language_packs`), declared as typed sections read through ``config``: defaults only here, every value checked
before any translating starts, each error naming the key. Language-specific values come from the language
packs (languages/), which params.yaml may override per language."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

import config
from builder.errors import BuildError
from builder.postprocess import SELF_MATCH_POLICIES
from builder.translators import TRANSLATORS, WebSettings, is_translator_name
from eval.testset import EXTRA_FORMS
from languages import ROUTES, Language, LanguageError, Template, compile_strip, load, resolve

REPO_ROOT = config.REPO_ROOT
DEFAULT_TEMPLATES = {"default": {"default": {"masculine": "He is: {title}.", "feminine": "She is: {title}."}}}
DEFAULT_BATCH_SIZE = {"bergamot": 64, "apertium": 1000, "google": 32, "deepl": 32, "libre": 32, "mymemory": 32}


@dataclass(frozen=True)
class SourceParams:
    """``source:``: where the English source is read and downloaded from."""

    dir: str | None = None  # null: $JOBTITLES_SOURCE_DIR, else the shared data folder (builder/source.py)
    base_url: str | None = None  # null: the registry's (builder/source.py)

    def __post_init__(self):
        if self.base_url is not None:
            config.check_url(self.base_url, "source.base_url", ValueError)


@dataclass(frozen=True)
class WebParams:
    """``build.web:``: how the online translators are called (defaults: builder.translators.WebSettings, what
    a translator made without params.yaml uses)."""

    concurrency: int = WebSettings.concurrency
    retries: int = WebSettings.retries
    timeout_s: float = WebSettings.timeout_s
    backoff_s: float = WebSettings.backoff_s
    libre_url: str | None = WebSettings.libre_url

    def __post_init__(self):
        for key, least, expected in (("concurrency", 1, "an integer >= 1"), ("retries", 0, "an integer >= 0"),
                                     ("backoff_s", 0, "a number of seconds >= 0")):
            if getattr(self, key) < least:
                raise ValueError(f"build.web.{key} is {getattr(self, key)!r}; expected {expected}")
        if not self.timeout_s > 0:
            raise ValueError(f"build.web.timeout_s is {self.timeout_s!r}; expected a number of seconds > 0")
        if self.libre_url is not None:
            config.check_url(self.libre_url, "build.web.libre_url", ValueError)
            if re.match(r"https?://[^/]*@", self.libre_url):
                # Never repeat the credentials in the message: the file is the place they must not be.
                raise ValueError("build.web.libre_url holds a user or password; secrets are never stored in files: "
                                 "pass the URL with --libre-url or $LIBRE_URL, the key with $LIBRE_API_KEY")


@dataclass(frozen=True)
class FormsParams:
    """``build.forms:``: the extra forms added to the queries, and whether the corpus gains the doublet items
    (the corpus variant "as ads are written"); builder/forms.py makes them (docs/forms.md)."""

    queries: tuple[str, ...] = EXTRA_FORMS
    corpus: bool = False

    def __post_init__(self):
        unknown = [q for q in self.queries if q not in EXTRA_FORMS]
        if unknown:
            raise ValueError(f"build.forms.queries is {list(self.queries)!r}; expected a list of {', '.join(EXTRA_FORMS)}")
        object.__setattr__(self, "queries", tuple(dict.fromkeys(self.queries)))


@dataclass(frozen=True)
class BuildParams:
    """``build:``: overrides of the language packs per language, and how translators are run."""

    translator: dict[str, str] = field(default_factory=dict)  # {lang: translator or chain}
    route: dict[str, str] = field(default_factory=dict)  # {lang: mt | reference}: overrides the pack's route
    # typed as a pack's templates are (languages.Template): `lowercase: 'yes'` is refused, not read as true
    templates: dict[str, dict[str, Template]] = field(default_factory=lambda: dict(DEFAULT_TEMPLATES))
    strip: dict[str, str] = field(default_factory=dict)  # {lang: pattern with (?P<title>...)}
    self_match_policy: str = "keep_derived"
    batch_size: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_BATCH_SIZE))
    web: WebParams = field(default_factory=WebParams)
    forms: FormsParams = field(default_factory=FormsParams)

    def __post_init__(self):
        for lang, name in self.translator.items():
            if not is_translator_name(name):
                raise ValueError(f"build.translator.{lang} is {name!r}; expected one of {', '.join(TRANSLATORS)} "
                                 "or a chain such as bergamot>apertium")
        for lang, route in self.route.items():
            if route not in ROUTES:
                raise ValueError(f"build.route.{lang} is {route!r}; expected one of {', '.join(ROUTES)}")
        for name, size in self.batch_size.items():
            if size < 1:
                raise ValueError(f"build.batch_size.{name} is {size!r}; expected an integer >= 1")
        for lang, pattern in self.strip.items():
            try:
                compile_strip(pattern)
            except ValueError as exc:
                raise ValueError(f"build.strip.{lang} {exc}") from None
        if self.self_match_policy not in SELF_MATCH_POLICIES:
            raise ValueError(f"build.self_match_policy is {self.self_match_policy!r}; expected one of "
                             f"{', '.join(SELF_MATCH_POLICIES)}")


@dataclass(frozen=True)
class EscoParams:
    """``esco:``: the ESCO source (builder/esco.py), read by ``python -m builder esco`` and, for its ``languages``,
    by the main job, which builds that family from MELO's pinned files into ``<out>-esco/``."""

    dir: str | None = None  # the folder of ESCO's CSV download or a MELO copy; null: MELO, found as the English source
    version: str | None = None  # null: --esco-version, else the folder name's vN.N.N (MELO's: its dataset's)
    corpus: str = "labels"  # labels | preferred (builder.esco.CORPUS_DESIGNS)
    languages: tuple[str, ...] = ()  # the ESCO family `builder defaults` and dvc.yaml build (none unless listed)

    def __post_init__(self):
        if self.corpus not in ("labels", "preferred"):
            raise ValueError(f"esco.corpus is {self.corpus!r}; expected labels or preferred")


def load_esco_params(path: str | Path | None = None) -> EscoParams:
    p = params_path(path)
    try:
        return config.section(EscoParams, config.read_params(p), "esco", where=p)
    except config.ConfigError as exc:
        raise BuildError(str(exc)) from None


def params_path(path: str | Path | None = None) -> Path:
    """params.yaml given, else the one in the working directory, else the repository's."""
    return config.params_path(path)


def _plain(value):
    """A section as YAML-ready mappings and lists (the builder's functions take the sections as mappings)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def load_params(path: str | Path | None = None) -> dict:
    """The builder's sections of params.yaml, checked and with every default filled in: ``languages``,
    ``language_packs``, ``source`` and ``build`` (as mappings). Errors name the file and the key."""
    p = params_path(path)
    try:
        params = config.read_params(p)
        top = config.pipeline(params, where=p)
        source = config.section(SourceParams, params, "source", where=p)
        build = config.section(BuildParams, params, "build", where=p)
    except config.ConfigError as exc:
        raise BuildError(str(exc)) from None
    return {**_plain(dataclasses.asdict(top)), "source": _plain(dataclasses.asdict(source)),
            "build": _plain(dataclasses.asdict(build))}


def language_for(params: dict, code: "str | Language") -> Language:
    """The declaration of a language code: its pack, searched in params.yaml ``language_packs`` folders, then
    $GJT_LANGUAGE_PACKS, then languages/packs. The entry points call this once and pass the result down."""
    if isinstance(code, Language):
        return code
    try:
        return load(code, params.get("language_packs") or [])
    except LanguageError as exc:
        raise BuildError(str(exc)) from None


def translator_for(params: dict, lang: Language) -> str | None:
    """params.yaml build.translator.<code>, else the pack's default translator."""
    return (params.get("build", {}).get("translator") or {}).get(lang.code) or lang.translator


def route_for(params: dict, lang: Language, given: str | None = None) -> str:
    """--route, else params.yaml build.route.<code>, else the pack's route (``mt`` | ``reference``)."""
    route = given or (params.get("build", {}).get("route") or {}).get(lang.code) or lang.route
    if route not in ROUTES:
        raise BuildError(f"route {route!r} for {lang.code}; expected one of {', '.join(ROUTES)}")
    return route


def templates_for(build: dict, lang: "Language | str", translator: str) -> dict:
    """Lookup order: params.yaml templates[lang][translator], templates[lang].default, then the language pack's
    templates[translator], templates.default, then params.yaml templates.default[translator],
    templates.default.default."""
    lang = resolve(lang)
    t = build.get("templates", {})
    code = lang.code
    for scope, key in ((code, translator), (code, "default"), ("pack", translator), ("pack", "default"),
                       ("default", translator), ("default", "default")):
        found = lang.templates.get(key) if scope == "pack" else (t.get(scope) or {}).get(key)
        if found:
            if scope == "pack":
                scope = f"{lang.path}: templates"
            else:
                scope = f"params.yaml: build.templates.{scope}"
            if "{title}" not in found.get("masculine", "") or "{title}" not in found.get("feminine", ""):
                raise BuildError(f"{scope}.{key} needs 'masculine' and 'feminine' with {{title}}")
            return {"masculine": found["masculine"], "feminine": found["feminine"], "lowercase": bool(found.get("lowercase", False))}
    raise BuildError("params.yaml: build.templates.default.default is missing")


def strip_pattern_for(build: dict, lang: "Language | str") -> str:
    """params.yaml build.strip.<code> when given, else the language pack's strip pattern."""
    lang = resolve(lang)
    return (build.get("strip") or {}).get(lang.code) or lang.strip
