"""The intended arrows between the packages (docs/architecture.md), read from every module's imports.

Data flows one way, builder -> annotation -> releases -> eval, through the test-set format (eval/testset.py)
and the one reader of params.yaml (config/); languages/ holds the language declarations. Every ``import`` and
``from ... import`` is parsed (ast), also those inside functions, relative ones resolved to their package.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("builder", "annotation", "releases", "eval", "languages", "config")
FORMAT = "eval.testset"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module top) for every import of ``path`` that names a project package;
    ``from eval import testset`` counts as ``eval.testset``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            if name.split(".")[0] in PACKAGES:
                found.append((name, node.lineno, id(node) in top))
    return found


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    return {module_name(path): imports(path)
            for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}


def is_in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(allowed) -> list[str]:
    """``module:line imports name`` for every import ``allowed(module, name)`` refuses."""
    return [f"{module}:{line} imports {name}" for module, found in graph().items()
            for name, line, _top in found if not allowed(module, name)]


def test_the_parser_sees_imports_inside_functions_and_relative_ones():
    found = imports(REPO / "releases" / "make.py")
    assert any(name == "releases.manifest" for name, _, _ in found)  # from .manifest import ...
    assert any(name == FORMAT and top for name, _, top in found)
    assert "eval.mitigation" in {name for name, _, top in imports(REPO / "eval" / "audit.py") if not top}


def test_the_format_and_config_import_none_of_the_packages():
    def allowed(module: str, name: str) -> bool:
        if module == FORMAT:
            return False
        if is_in(module, "config"):
            return is_in(name, "config")
        return True

    bad = violations(allowed)
    assert bad == [], "the format module and config/ are shared ground; they import no project package:\n" + "\n".join(bad)


def test_eval_imports_only_eval_the_format_languages_and_config():
    allowed = ("eval", "languages", "config")
    bad = violations(lambda module, name: not is_in(module, "eval")
                     or any(is_in(name, p) for p in allowed))
    assert bad == [], "eval reads test sets through the format, nothing of builder, annotation or releases:\n" + "\n".join(bad)


def test_releases_import_no_builder_code():
    bad = violations(lambda module, name: not (is_in(module, "releases") and is_in(name, "builder")))
    assert bad == [], "releases read what the builder wrote through the format, not its code:\n" + "\n".join(bad)


def test_languages_import_none_of_the_four_packages():
    bad = violations(lambda module, name: not is_in(module, "languages")
                     or not any(is_in(name, p) for p in ("builder", "annotation", "releases", "eval")))
    assert bad == [], "languages/ declares languages and imports none of the packages that use them:\n" + "\n".join(bad)


@pytest.mark.parametrize("package", ["builder", "annotation", "releases"])
def test_the_format_is_imported_at_module_top(package):
    """An import inside a function hides the dependency from a reader (and from dvc.yaml's deps). The command
    line (``<package>/__main__.py``) is the exception: each command imports what it runs when it runs, so that
    --help loads no polars (tests/test_startup.py), and dvc.yaml's deps are traced from the commands themselves."""
    hidden = [f"{module}:{line}" for module, found in graph().items()
              if is_in(module, package) and module != f"{package}.__main__"
              for name, line, top in found if is_in(name, FORMAT) and not top]
    assert hidden == []


def test_the_format_module_and_eval_package_stay_light():
    """Reading a release needs polars only: importing the format (or ``eval``) loads no model library."""
    code = ("import sys, eval, eval.testset; heavy = {'numpy', 'torch', 'sentence_transformers', 'sklearn', 'scipy'}"
            " & {m.split('.')[0] for m in sys.modules}; print(sorted(heavy))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]", done.stdout


# Inside eval (docs/architecture.md, "A measure", "A model"): measures are pure functions of rankings, declared in
# one module over eval.metrics; models are records and a protocol that know nothing of measures or results; the
# modules that read results (tables, metrics rows, site, audit figures) find every figure through the measures
# and never rank anything themselves.
EVAL_LAYERS = {
    "eval.metrics": (),
    "eval.measures": ("eval.metrics", "eval.errors"),
    "eval.models": ("eval.errors", "eval.exact_use"),
    "eval.exact_use": (),
}
RESULT_READERS = ("eval.report", "eval.site", "eval.audit_report", "eval.pair_matrix", "eval.audit_figures",
                  "eval.mitigation_effect")


def test_eval_measures_and_models_stand_alone_and_readers_rank_nothing():
    def allowed(module: str, name: str) -> bool:
        if module in EVAL_LAYERS:
            return name == module or any(is_in(name, ok) for ok in EVAL_LAYERS[module]) or name == "eval"
        if module in RESULT_READERS:
            return not any(is_in(name, m) for m in ("eval.evaluate", "eval.ranking", "eval.relevance"))
        return True

    bad = violations(allowed)
    assert bad == [], "eval's measures and models import only their own ground; readers of results rank nothing:\n" + "\n".join(bad)
