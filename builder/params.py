"""Reads the builder's sections (`source:`, `build:`) of params.yaml."""

from __future__ import annotations

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
    for section in ("source", "build"):
        if section not in data:
            raise BuildError(f"{p}: missing section {section!r}")
    return data


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
