"""What `pip install .` puts into site-packages (docs/architecture.md, "Installed names"): one project package,
`gendered_job_titles`, holding the checkout's folders (`gendered_job_titles.eval`, `gendered_job_titles.config`,
...), and the `gjt-*` commands; no generic top-level name (`eval`, `config`, `languages`, ...).

The fast tests check the build's import qualifier (scripts/setuptools_build.py) against hand-written
expectations and the sources against what it cannot qualify. The slow ones build the wheel from the checkout,
install it without dependencies into a new plain venv whose only other path is the project .venv's
site-packages directory (added by a .pth after the install, so neither pip nor the editable install's finder,
which only a site directory's .pth runs, sees the checkout), and use it from a folder outside the checkout.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from setuptools.errors import SetupError

from scripts.setuptools_build import PROJECT_PACKAGE, SHORT_NAMES, qualify_imports
from tests.test_reliability_probe import INTERRUPTED_AT, interrupted_at_import

PROJECT = Path(__file__).resolve().parents[1]
# Without the test run's PYTHONPATH (it may name the checkout, whose folders would be found by their short names).
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
COMMANDS = {"gjt-builder": "builder", "gjt-annotation": "annotation", "gjt-releases": "releases",
            "gjt-eval": "eval"}


def tracked(*paths: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(PROJECT), "ls-files", "-z", "--", *paths], capture_output=True,
                         check=True).stdout
    return sorted(p.decode() for p in out.split(b"\0") if p)


def sources() -> list[Path]:
    """Every Python file of the checkout's packages, benchmarks, scripts and tests."""
    return [PROJECT / p for p in tracked(*SHORT_NAMES, "benchmarks", "scripts", "tests") if p.endswith(".py")]


# ---- the build's import qualifier -------------------------------------------------------------------------

def test_qualify_imports_prefixes_each_form_of_a_project_import_and_keeps_every_other_line():
    source = ("import os\n"
              "import config\n"
              "import eval as eval_pkg\n"
              "import eval.models as models\n"
              "from eval.testset import (read_testset,\n"
              "                          write_testset)\n"
              "from languages import Language  # the pack reader\n"
              "from .errors import ReleaseError\n"
              "from evaluation import x\n"
              "def f():\n"
              "    from builder.lexicon import WordList; import config as cfg\n"
              "text = 'from eval.testset import read_testset'\n"
              "título = 'ç'; import  languages\r\n"
              "\x0cimport os\n")
    expected = ("import os\n"
                "from gendered_job_titles import config\n"
                "from gendered_job_titles import eval as eval_pkg\n"
                "import gendered_job_titles.eval.models as models\n"
                "from gendered_job_titles.eval.testset import (read_testset,\n"
                "                          write_testset)\n"
                "from gendered_job_titles.languages import Language  # the pack reader\n"
                "from .errors import ReleaseError\n"
                "from evaluation import x\n"
                "def f():\n"
                "    from gendered_job_titles.builder.lexicon import WordList; "
                "from gendered_job_titles import config as cfg\n"
                "text = 'from eval.testset import read_testset'\n"
                "título = 'ç'; from gendered_job_titles import languages\r\n"
                "\x0cimport os\n")
    assert qualify_imports(source, "m.py") == expected


@pytest.mark.parametrize("statement, advice", [
    ("import eval.testset", "binds the short name 'eval'"),
    ("import os, config", "one project module per statement"),
])
def test_qualify_imports_refuses_what_it_cannot_qualify_naming_the_file_and_line(statement, advice):
    with pytest.raises(SetupError, match=rf"^m\.py:2: .*{advice}"):
        qualify_imports(f"x = 1\n{statement}\n", "m.py")


def test_every_module_imports_in_a_form_the_build_qualifies():
    for path in sources():
        if path.parts[len(PROJECT.parts)] in SHORT_NAMES:
            qualify_imports(path.read_text(encoding="utf-8"), str(path.relative_to(PROJECT)))


def test_no_module_renames_a_project_package_or_names_one_in_a_string():
    """`import eval as eval_pkg` dodged the builtin `eval`; `from eval import __version__` needs no dodge. A
    package named in a string (`resources.files("annotation")`, `import_module("builder.german")`) is not
    qualified by the build and misses the installed package: name it relative to `__package__`."""
    found = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(PROJECT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Import):
                found += [f"{where}: import {a.name} as {a.asname}" for a in node.names
                          if a.asname and a.name in SHORT_NAMES]
            elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str) and node.args[0].value.split(".")[0] in SHORT_NAMES
                  and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
                  in {"import_module", "files", "find_spec", "__import__"}
                  and not path.is_relative_to(PROJECT / "tests")):  # tests run in the checkout only
                found.append(f"{where}: {ast.unparse(node)}")
    assert found == []


def test_the_installed_packages_are_the_checkout_folders():
    setuptools = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {str(Path(p).parent) for p in tracked(*SHORT_NAMES) if "__pycache__" not in p}
    assert sorted(setuptools["packages"]) == sorted(f"{PROJECT_PACKAGE}.{f.replace('/', '.')}" for f in folders)
    assert setuptools["package-dir"] == {f"{PROJECT_PACKAGE}.{name}": name for name in SHORT_NAMES}


# ---- the wheel, installed -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel `pip wheel .` builds from the checkout's tracked files."""
    tree = tmp_path_factory.mktemp("tree")
    for rel in tracked("pyproject.toml", "README.md", "scripts", *SHORT_NAMES):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_bytes((PROJECT / rel).read_bytes())
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                           str(out), "."], cwd=tree, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    [built] = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A plain venv holding the wheel alone; the dependencies come from the project .venv's site-packages."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           "--no-index", "--disable-pip-version-check", str(wheel)], capture_output=True, text=True,
                          timeout=600, env=CLEAN_ENV)
    assert done.returncode == 0, done.stderr
    [site] = (root / "lib").glob("python3*/site-packages")
    (site / "project_venv_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root


def in_venv(venv: Path, cwd: Path, script: str):
    done = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=CLEAN_ENV)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_wheel_holds_one_project_package_its_data_files_and_the_commands(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/WHEEL")).rsplit("/", 1)[0]
        top_level = archive.read(f"{info}/top_level.txt").decode().split()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert {n.split("/")[0] for n in names} == {PROJECT_PACKAGE, info}
    assert top_level == [PROJECT_PACKAGE]
    for command, package in COMMANDS.items():
        assert f"{command} = {PROJECT_PACKAGE}.{package}." in entry_points
    # every data file the packages read at run time (packs, guidelines): all tracked non-Python files
    data = {f"{PROJECT_PACKAGE}/{p}" for p in tracked(*SHORT_NAMES) if not p.endswith(".py")}
    assert data and data <= set(names), sorted(data - set(names))
    assert {f"{PROJECT_PACKAGE}/languages/packs/pt.yaml", f"{PROJECT_PACKAGE}/annotation/guidelines_relevance.md"} <= data


@pytest.mark.slow
def test_the_installed_package_reads_a_test_set_without_any_short_name(venv, tmp_path):
    from eval.testset import write_testset
    from tests.eval.testsets import make_testset

    written = make_testset("pt")
    write_testset(written, tmp_path / "data")
    outside = tmp_path / "elsewhere"  # no checkout on sys.path: the venv's python starts here
    outside.mkdir()
    got = in_venv(venv, outside, f"""
import importlib.util, json, sys
from gendered_job_titles.eval.testset import read_testset
ts = read_testset({str(tmp_path / 'data')!r}, "pt")
import gendered_job_titles.eval
print(json.dumps({{"queries": ts.queries["id"].to_list(), "corpus": ts.corpus.height, "qrels": ts.qrels.height,
                  "findable": [n for n in {list(SHORT_NAMES)!r} if importlib.util.find_spec(n)],
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in {list(SHORT_NAMES)!r}),
                  "file": gendered_job_titles.eval.__file__}}))
""")
    assert got["queries"] == sorted(written.queries["id"].to_list())
    assert (got["corpus"], got["qrels"]) == (written.corpus.height, written.qrels.height)
    assert got["findable"] == [] and got["loaded"] == []
    assert Path(got["file"]).is_relative_to(venv)


@pytest.mark.slow
def test_every_installed_module_imports_without_a_short_name(venv, tmp_path):
    """A module whose import fails may only miss a third-party package the project .venv lacks as well (the
    Argilla server, which lives in .venv-argilla)."""
    got = in_venv(venv, tmp_path, f"""
import importlib, json, pkgutil, sys
import gendered_job_titles
failed = {{}}
for info in pkgutil.walk_packages(gendered_job_titles.__path__, "gendered_job_titles."):
    if info.name.endswith(".__main__"):  # run, not imported: the commands' test runs them
        continue
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError as exc:
        failed[info.name] = exc.name
names = {list(SHORT_NAMES)!r}
print(json.dumps({{"failed": failed, "imported": sorted(m for m in sys.modules if m.startswith("gendered_job_titles.")),
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in names)}}))
""")
    assert got["loaded"] == []
    assert len(got["imported"]) > 60, got["imported"]
    import importlib.util
    for module, missing in got["failed"].items():
        assert missing.split(".")[0] not in (*SHORT_NAMES, PROJECT_PACKAGE), f"{module} misses {missing}"
        assert importlib.util.find_spec(missing.split(".")[0]) is None, f"{module} misses {missing} in the venv only"


@pytest.mark.slow
def test_the_installed_data_files_are_read_through_the_packages(venv, tmp_path):
    got = in_venv(venv, tmp_path, """
import json
from importlib import resources
from gendered_job_titles import languages
from gendered_job_titles.annotation import relevance, translations
# the guidelines as settings() reads them (settings() itself needs an Argilla client)
read = lambda module, name: resources.files(module.__package__).joinpath(name).read_text(encoding="utf-8")
print(json.dumps({"available": languages.available(), "pt": languages.load("pt").code,
                  "translations": read(translations, "guidelines_translations.md"),
                  "relevance": read(relevance, "guidelines_relevance.md")}))
""")
    assert got["available"] == sorted(p.stem for p in (PROJECT / "languages" / "packs").glob("*.yaml"))
    assert got["pt"] == "pt"
    assert got["translations"] == (PROJECT / "annotation" / "guidelines_translations.md").read_text(encoding="utf-8")
    assert got["relevance"] == (PROJECT / "annotation" / "guidelines_relevance.md").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_installed_commands_run(venv, tmp_path, command):
    done = subprocess.run([str(venv / "bin" / command), "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=CLEAN_ENV)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {command} ") and "Traceback" not in done.stderr  # its own name


@pytest.mark.slow
@pytest.mark.parametrize("package, module, args", INTERRUPTED_AT)
def test_a_ctrl_c_during_the_installed_commands_imports_is_one_line(venv, tmp_path, package, module, args):
    """The wrapper pip wrote for gjt-<package>, run by the venv's python, interrupted at the first import of
    ``module`` under the installed name (tests/test_reliability_probe.py: the same with the checkout's names)."""
    interrupted_at_import(str(venv / "bin" / "python"), str(venv / "bin" / f"gjt-{package}"),
                          module if module == "polars" else f"{PROJECT_PACKAGE}.{module}", args, cwd=tmp_path,
                          env=CLEAN_ENV)
