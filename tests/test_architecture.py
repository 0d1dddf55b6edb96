"""The intended arrows between the packages (docs/architecture.md), read from every module's imports.

Data flows one way, builder -> annotation -> releases -> eval, through the test-set format (eval/testset.py)
and the one reader of params.yaml (config/); languages/ holds the language declarations. config/ is the bottom:
besides params.yaml it holds what every package shares (YAML reading, and config/files.py: the whole-or-nothing
writers of files and folders and the file-name-safe ``slug``), and imports no project package. Every ``import`` and
``from ... import`` is parsed (ast), also those inside functions, relative ones resolved to their package.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("builder", "annotation", "releases", "eval", "languages", "config")
FORMAT = "eval.testset"
# The bottom module every package may import, the format and eval's standalone layers included: the one writer
# of whole files and whole folders, and ``slug``. It imports no project package (config/ imports none).
BOTTOM = "config.files"


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


@functools.cache  # parsed once for every rule
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
            return is_in(name, BOTTOM) or name == "config"  # ``from config.files import ...`` names config too
        if is_in(module, "config"):
            return is_in(name, "config")
        return True

    bad = violations(allowed)
    assert bad == [], ("the format module and config/ are shared ground; config/ imports no project package, the format "
                       "only the bottom writer (config.files):\n" + "\n".join(bad))


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
            return (name == module or any(is_in(name, ok) for ok in EVAL_LAYERS[module]) or name in ("eval", "config")
                    or is_in(name, BOTTOM))
        if module in RESULT_READERS:
            return not any(is_in(name, m) for m in ("eval.evaluate", "eval.ranking", "eval.relevance"))
        return True

    bad = violations(allowed)
    assert bad == [], "eval's measures and models import only their own ground; readers of results rank nothing:\n" + "\n".join(bad)


# One definition of each concept, at the bottom (docs/architecture.md, "config/ is the bottom"): a whole-or-nothing
# write is a temporary sibling, fsync, one rename and an fsync of the folder, written once in config/files.py;
# YAML is parsed once, by config.load_yaml (its caps on size, depth and aliases, libyaml, the line of an error).
# A call that renames, replaces or flushes a file anywhere else is a second writer with other guarantees.
WRITER_CALLS = {"rename", "replace", "fsync", "mkstemp", "NamedTemporaryFile", "link", "renames"}
YAML_PARSERS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "parse", "compose"}


def _attribute_calls(path: Path) -> list[tuple[str, int, ast.Call]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(ast.unparse(node.func), node.lineno, node) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]


def _is_file_write(func: str, call: ast.Call) -> bool:
    attr = func.rsplit(".", 1)[-1]
    if attr not in WRITER_CALLS:
        return False
    if attr == "replace":  # Path.replace(target) or os.replace(a, b); not str.replace(a, b) nor dataclasses.replace
        return func == "os.replace" or (len(call.args) == 1 and not call.keywords and not func.startswith("dataclasses."))
    if attr == "rename":  # Path.rename(target) or os.rename(a, b); not a polars frame's rename({...}) / rename(columns=)
        return func == "os.rename" or (len(call.args) == 1 and not call.keywords
                                       and not isinstance(call.args[0], (ast.Dict, ast.DictComp, ast.Lambda)))
    return True


def test_files_and_folders_are_replaced_only_by_the_bottom_writers():
    bad = [f"{module_name(path)}:{line} calls {func}"
           for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))
           if module_name(path) != BOTTOM
           for func, line, call in _attribute_calls(path) if _is_file_write(func, call)]
    assert bad == [], ("write outputs with config.files.write_file_atomically / write_folder_atomically (temporary "
                       "sibling, fsync, one rename, fsync of the folder), not a writer of their own:\n" + "\n".join(bad))


def test_the_rule_sees_each_kind_of_private_writer(tmp_path):
    """The check above must be able to fail: each way the six former writers replaced a file is caught."""
    source = tmp_path / "writer.py"
    source.write_text("import os, shutil\n"
                      "def a(tmp, path): tmp.replace(path)\n"
                      "def b(tmp, path): os.replace(tmp, path)\n"
                      "def c(staging, out): staging.rename(out)\n"
                      "def d(fh): os.fsync(fh.fileno())\n"
                      "def e(frame, s): return frame.rename({'a': 'b'}), s.replace('a', 'b')\n", encoding="utf-8")
    found = [(func, line) for func, line, call in _attribute_calls(source) if _is_file_write(func, call)]
    assert found == [("tmp.replace", 2), ("os.replace", 3), ("staging.rename", 4), ("os.fsync", 5)]


def test_yaml_is_parsed_only_by_config():
    bad = [f"{module_name(path)}:{line} calls {func}"
           for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))
           if not is_in(module_name(path), "config")
           for func, line, _call in _attribute_calls(path)
           if func.startswith("yaml.") and func.split(".", 1)[1] in YAML_PARSERS]
    assert bad == [], "read YAML with config.load_yaml (the one reader: caps, libyaml, error lines):\n" + "\n".join(bad)


# What each package may import (docs/architecture.md, "What each package imports"): its own modules and the shared
# ground (config/, languages/, the format), plus what it borrows by name. builder borrows eval's model records and
# embedding cache (builder/reference.py aligns the source's translations with a model) and eval's two exact
# primitives, the score grid and exp (builder/align.py: an alignment the same bits on every machine); annotation
# borrows the builder's reader of the corrections format (the one definition of it) and its term-rules step (so
# `annotation rule` lists what the build will change), its one reader of ESCO's labels in MELO's layout and the title
# normalisation (the review pack's ESCO hints and how often the build agrees with them), eval's one public ranking entry point
# and its one entry point for vectors (with EvalError, what they raise): annotation ranks and embeds what eval
# does, through eval's cache and memory budget.
EVAL_RANKING_API = "eval.evaluate.rank_testset"
EVAL_VECTORS_API = "eval.evaluate.embed_texts"
EVAL_SCORE_GRID = "eval.ranking.score_grid"
EVAL_EXACT_EXP = "eval.exact_use.exp_nonpositive"
SHARED = ("config", "languages", FORMAT)
PACKAGE_IMPORTS = {
    "builder": ("builder", *SHARED, "eval.models", EVAL_SCORE_GRID, EVAL_EXACT_EXP),
    "annotation": ("annotation", *SHARED, "builder.corrections", "builder.errors", "builder.rules", "builder.verdict",
                   "builder.esco", "builder.strip", "eval.errors",
                   EVAL_RANKING_API,
                   EVAL_VECTORS_API),
    "releases": ("releases", *SHARED),
    "eval": ("eval", "config", "languages"),
    "languages": ("languages", "config"),
    "config": ("config",),
}


def package_violations(package: str, allowed: tuple[str, ...], imports_of: dict | None = None) -> list[str]:
    """``module:line imports name`` for every import of ``package`` outside ``allowed`` (names and everything under
    them). The module a from-import reads from (``eval.evaluate`` of ``from eval.evaluate import rank_testset``)
    passes when what the line imports from it is allowed; ``import eval.evaluate`` alone does not."""
    bad = []
    for module, found in (graph() if imports_of is None else imports_of).items():
        if not is_in(module, package):
            continue
        by_line: dict[int, set[str]] = {}
        for name, line, _top in found:
            by_line.setdefault(line, set()).add(name)
        for line, names in sorted(by_line.items()):
            ok = {n for n in names if any(is_in(n, a) for a in allowed)}
            for name in sorted(names - ok):
                if any(a.startswith(name + ".") for a in allowed) and any(n.startswith(name + ".") for n in ok):
                    continue
                bad.append(f"{module}:{line} imports {name}")
    return bad


@pytest.mark.parametrize("package", sorted(PACKAGE_IMPORTS))
def test_each_package_imports_only_its_own_the_shared_ground_and_what_it_borrows(package):
    bad = package_violations(package, PACKAGE_IMPORTS[package])
    assert bad == [], (f"{package} may import {', '.join(PACKAGE_IMPORTS[package])} (docs/architecture.md):\n"
                       + "\n".join(bad))


def test_the_package_rule_refuses_what_annotation_must_not_import():
    """The rule bites: annotation ranking with eval's parts (the encode-and-rank it once re-implemented) is refused,
    the public entry point passes, and ``import eval.evaluate`` (every name of it) is refused."""
    allowed = PACKAGE_IMPORTS["annotation"]
    reimplemented = {"annotation.relevance": [("eval.models", 104, False), ("eval.models.load_model", 104, False),
                                              ("eval.ranking", 105, False), ("eval.ranking.rank_corpus", 105, False)]}
    assert package_violations("annotation", allowed, reimplemented) == [
        "annotation.relevance:104 imports eval.models", "annotation.relevance:104 imports eval.models.load_model",
        "annotation.relevance:105 imports eval.ranking", "annotation.relevance:105 imports eval.ranking.rank_corpus"]
    public = {"annotation.relevance": [("eval.evaluate.rank_testset", 9, True), ("eval.evaluate", 9, True)]}
    assert package_violations("annotation", allowed, public) == []
    whole = {"annotation.relevance": [("eval.evaluate", 9, True)],
             "annotation.cli": [("eval.evaluate.score_corpus", 3, True), ("eval.evaluate", 3, True)]}
    assert sorted(package_violations("annotation", allowed, whole)) == [
        "annotation.cli:3 imports eval.evaluate", "annotation.cli:3 imports eval.evaluate.score_corpus",
        "annotation.relevance:9 imports eval.evaluate"]
    assert package_violations("builder", PACKAGE_IMPORTS["builder"],
                              {"builder.build": [("annotation.corrections", 1, True), ("eval.ranking", 2, True)]}) == [
        "builder.build:1 imports annotation.corrections", "builder.build:2 imports eval.ranking"]


# One validation engine (docs/architecture.md, "one validation engine"): typed YAML is checked by config.read_typed
# against declared dataclasses, params.yaml and the language packs alike. The pack reader declares a pack's shape
# and keeps only the reshaping and the checks across keys; a test of a YAML value's type in languages/ would be a
# second type checker growing back (the hand-written reader it replaced tested dict, list, bool, int, str).
YAML_VALUE_TYPES = {"dict", "list", "tuple", "int", "float", "bool", "Mapping", "Sequence"}


def _type_tests(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            names = {ast.unparse(k).rsplit(".", 1)[-1] for k in kinds}
            if names & YAML_VALUE_TYPES:
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_language_packs_are_type_checked_only_by_config():
    bad = [f"{module_name(path)}:{line} {call}" for path in sorted((REPO / "languages").rglob("*.py"))
           for line, call in _type_tests(path)]
    assert bad == [], ("declare a pack's keys as dataclasses (languages/__init__.py) and let config.read_typed check "
                       "them, not a type test of its own:\n" + "\n".join(bad))


def test_the_type_test_rule_sees_a_hand_written_reader(tmp_path):
    """The rule must be able to fail: the checks of the former pack reader are caught, a code check is not."""
    source = tmp_path / "reader.py"
    source.write_text("def a(d): return isinstance(d, dict)\n"
                      "def b(v): return not isinstance(v, list) or any(not isinstance(w, str) for w in v)\n"
                      "def c(n): return isinstance(n, int) and not isinstance(n, bool)\n"
                      "def d(m): return isinstance(m, collections.abc.Mapping)\n"
                      "def e(t): return isinstance(t, str)\n", encoding="utf-8")
    assert sorted(line for line, _ in _type_tests(source)) == [1, 2, 3, 3, 4]
