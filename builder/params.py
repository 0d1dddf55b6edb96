"""Reads the builder's sections (`source:`, `build:`) of params.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from builder.errors import BuildError

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


def templates_for(build: dict, lang: str, translator: str) -> dict:
    """Lookup order: templates[lang][translator], templates[lang].default, templates.default[translator],
    templates.default.default."""
    t = build.get("templates", {})
    for scope, key in ((lang, translator), (lang, "default"), ("default", translator), ("default", "default")):
        found = (t.get(scope) or {}).get(key)
        if found:
            if "{title}" not in found.get("masculine", "") or "{title}" not in found.get("feminine", ""):
                raise BuildError(f"params.yaml: build.templates.{scope}.{key} needs 'masculine' and 'feminine' with {{title}}")
            return {"masculine": found["masculine"], "feminine": found["feminine"], "lowercase": bool(found.get("lowercase", False))}
    raise BuildError("params.yaml: build.templates.default.default is missing")


def strip_pattern_for(build: dict, lang: str) -> str:
    patterns = build.get("strip", {})
    if lang not in patterns:
        raise BuildError(f"params.yaml: no build.strip pattern for language {lang!r} (have: {sorted(patterns)})")
    return patterns[lang]
