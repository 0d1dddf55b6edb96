"""Every name a benchmark imports from the project exists.

The benchmarks run by hand, not in the suite, so a function renamed or removed in a package (as
``eval.evaluate.transposed_rows`` was when scores became exact) would leave a benchmark that fails only when
someone runs it. Every ``from <project module> import name`` in benchmarks/*.py, also inside functions, is
resolved here: the module imported, the name looked up in it (or imported as its submodule).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("builder", "annotation", "releases", "eval", "languages", "config")
BENCHMARKS = sorted((REPO / "benchmarks").glob("*.py"))


def project_imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) for every ``from module import name`` of ``path`` whose module is a project package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.module, alias.name, node.lineno) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and not node.level and node.module
            and node.module.split(".")[0] in PACKAGES for alias in node.names]


def missing(module: str, name: str) -> bool:
    found = importlib.import_module(module)
    if hasattr(found, name):
        return False
    try:
        importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError:
        return True
    return False


def test_the_parser_finds_imports_inside_functions():
    found = project_imports(REPO / "benchmarks" / "bench_eval.py")
    assert any(m == "eval.metrics" and n == "symmetry_batch" for m, n, _ in found)  # inside bench_symmetry
    assert missing("eval.evaluate", "no_such_name")  # a name eval lacks is found missing
    assert not missing("eval", "ranking")  # a submodule imported by name


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_every_project_name_a_benchmark_imports_exists(path):
    gone = [f"{path.relative_to(REPO)}:{line}: from {module} import {name}"
            for module, name, line in project_imports(path) if missing(module, name)]
    assert not gone, "benchmarks import names the project no longer has: " + "; ".join(gone)
