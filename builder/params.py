"""Reads the builder's sections (`source:`, `build:`) of params.yaml; language-specific values come from the
language packs (languages/), which params.yaml may override per language."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from builder.errors import BuildError
from languages import Language, LanguageError, load, resolve

REPO_ROOT = Path(__file__).resolve().parents[1]


def params_path(path: str | Path | None = None) -> Path:
    """params.yaml given, else the one in the working directory, else the repository's."""
    if path is not None:
        return Path(path)
    here = Path("params.yaml")
    return here if here.is_file() else REPO_ROOT / "params.yaml"


def load_params(path: str | Path | None = None) -> dict:
    p = params_path(path)
    if not p.is_file():
        raise BuildError(f"{p}: params file not found (pass --params FILE)")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise BuildError(f"{p}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise BuildError(f"{p}: expected a mapping of sections (source, build, ...), found {type(data).__name__}")
    for section in ("source", "build"):
        if section not in data:
            raise BuildError(f"{p}: missing section {section!r}")
    validate_build(data, p)
    return data


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


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def validate_build(data: dict, path: Path | str = "params.yaml") -> None:
    """Check every ``source:``/``build:`` value the builder uses, before any translating starts; each
    error names the key."""
    from builder.postprocess import SELF_MATCH_POLICIES
    from builder.translators import TRANSLATORS, is_translator_name

    def fail(key: str, value, expected: str):
        raise BuildError(f"{path}: {key} is {value!r}; expected {expected}")

    def mapping(key: str, value) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            fail(key, value, "a mapping")
        return value

    source = mapping("source", data.get("source"))
    for key in ("dir", "base_url"):
        if source.get(key) is not None and not isinstance(source[key], str):
            fail(f"source.{key}", source[key], "a string or null")
    if isinstance(source.get("base_url"), str) and not re.match(r"https?://", source["base_url"]):
        fail("source.base_url", source["base_url"], "an http:// or https:// URL")
    packs = data.get("language_packs")
    if packs is not None and (not isinstance(packs, list) or any(not isinstance(d, str) for d in packs)):
        fail("language_packs", packs, "a list of folders (strings) or null")
    build = mapping("build", data.get("build"))
    for lang, name in mapping("build.translator", build.get("translator")).items():
        if not is_translator_name(name):
            fail(f"build.translator.{lang}", name, f"one of {', '.join(TRANSLATORS)} or a chain such as bergamot>apertium")
    for name, size in mapping("build.batch_size", build.get("batch_size")).items():
        if not _is_int(size) or size < 1:
            fail(f"build.batch_size.{name}", size, "an integer >= 1")
    web = mapping("build.web", build.get("web"))
    checks = {"concurrency": (_is_int, 1, "an integer >= 1"), "retries": (_is_int, 0, "an integer >= 0"),
              "timeout_s": (_is_number, 1e-9, "a number of seconds > 0"),
              "backoff_s": (_is_number, 0, "a number of seconds >= 0")}
    for key, (kind, minimum, expected) in checks.items():
        if key in web and (not kind(web[key]) or web[key] < minimum):
            fail(f"build.web.{key}", web[key], expected)
    if web.get("libre_url") is not None and not (isinstance(web["libre_url"], str) and re.match(r"https?://", web["libre_url"])):
        fail("build.web.libre_url", web["libre_url"], "an http:// or https:// URL or null")
    if isinstance(web.get("libre_url"), str) and re.match(r"https?://[^/]*@", web["libre_url"]):
        # Never repeat the credentials in the message: the file is the place they must not be.
        raise BuildError(f"{path}: build.web.libre_url holds a user or password; secrets are never stored in files: "
                         "pass the URL with --libre-url or $LIBRE_URL, the key with $LIBRE_API_KEY")
    for lang, pattern in mapping("build.strip", build.get("strip")).items():
        if not isinstance(pattern, str):
            fail(f"build.strip.{lang}", pattern, "a regular expression string")
        try:
            compiled = re.compile(pattern, re.IGNORECASE | re.UNICODE)
        except re.error as exc:
            raise BuildError(f"{path}: build.strip.{lang} is not a valid regular expression ({exc}); fix the pattern") from None
        if "title" not in compiled.groupindex:
            fail(f"build.strip.{lang}", pattern, "a pattern with a named group (?P<title>...)")
    for scope, entries in mapping("build.templates", build.get("templates")).items():
        for key, template in mapping(f"build.templates.{scope}", entries).items():
            if not isinstance(template, dict) or any(
                    not isinstance(template.get(g), str) or "{title}" not in template[g] for g in ("masculine", "feminine")):
                fail(f"build.templates.{scope}.{key}", template, "a mapping with 'masculine' and 'feminine' strings containing {title}")
    policy = build.get("self_match_policy", "keep_derived")
    if policy not in SELF_MATCH_POLICIES:
        fail("build.self_match_policy", policy, f"one of {', '.join(SELF_MATCH_POLICIES)}")


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
