"""setuptools commands of the project's build (pyproject.toml's [tool.setuptools] cmdclass).

`BuildOutsideTree`: pip builds a wheel inside the source folder, and setuptools' `build` command writes `build/`
there by default (`pip install .` would leave it behind). This is the same command with its default `build_base`
in a temporary folder, removed when the build process ends. An explicit `--build-base` still wins. (The
`*.egg-info` folder setuptools also writes is ignored by git.)

`QualifiedBuildPy`: installed, the packages live under one project package (`gendered_job_titles.eval`,
`gendered_job_titles.config`, ...: pyproject.toml maps each folder there with `package-dir`), so that nothing
generic (`eval`, `config`, `languages`) lands in site-packages. A checkout keeps its top-level folders, whose
code imports them by their short names (`from eval.testset import read_testset`, `import config`). This
`build_py` copies each module into the wheel with those import statements qualified
(`from gendered_job_titles.eval.testset import read_testset`, `from gendered_job_titles import config`) and
nothing else changed, line for line, so the installed code imports only the project package and no import
alias has to claim the short names in a researcher's process. docs/architecture.md, "Installed names".
"""

from __future__ import annotations

import ast
import atexit
import re
import shutil
import tempfile
from pathlib import Path

from setuptools.command.build import build
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel
from setuptools.errors import SetupError

PROJECT_PACKAGE = "gendered_job_titles"
# The checkout's top-level packages, installed as PROJECT_PACKAGE.<name> (pyproject.toml: package-dir).
SHORT_NAMES = ("builder", "annotation", "releases", "eval", "config", "languages")

_scratch: list[str] = []


def scratch_folder() -> str:
    if not _scratch:
        _scratch.append(tempfile.mkdtemp(prefix="gendered-job-titles-build-"))
        atexit.register(shutil.rmtree, _scratch[0], ignore_errors=True)
    return _scratch[0]


class BuildOutsideTree(build):
    def initialize_options(self) -> None:
        super().initialize_options()
        self.build_base = str(Path(scratch_folder()) / "build")


def _short(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in SHORT_NAMES


def _keyword(line: str, byte_offset: int, keyword: str) -> tuple[int, int]:
    """The columns of a statement's leading `from ` / `import ` (with its spaces) in line; ast gives the
    statement's column as a UTF-8 byte offset."""
    start = len(line.encode("utf-8")[:byte_offset].decode("utf-8"))
    return start, re.compile(rf"{keyword}\s+").match(line, start).end()


def qualify_imports(source: str, where: str) -> str:
    """source with every absolute import of a short name qualified by PROJECT_PACKAGE, the same lines otherwise.

    `from eval.x import y` -> `from gendered_job_titles.eval.x import y`; `import config` (and `import eval as
    eval_pkg`) -> `from gendered_job_titles import config` (`... import eval as eval_pkg`), which binds the same
    name; `import eval.x as y` -> `import gendered_job_titles.eval.x as y`. `import eval.x` without `as` (it binds
    `eval`) and several modules in one `import` are refused with the file and line: write them another way."""
    lines = source.split("\n")  # ast's line numbers count "\n" (a "\r" before it stays at the line's end)
    edits: list[tuple[int, int, int, str]] = []  # (line index, start, end, replacement)
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _short(node.module):
            _, end = _keyword(lines[node.lineno - 1], node.col_offset, "from")
            edits.append((node.lineno - 1, end, end, f"{PROJECT_PACKAGE}."))
        elif isinstance(node, ast.Import) and any(_short(alias.name) for alias in node.names):
            statement = f"{where}:{node.lineno}: {ast.unparse(node)}"
            if len(node.names) > 1:
                raise SetupError(f"{statement}: import one project module per statement (the installed copy "
                                 f"qualifies it; scripts/setuptools_build.py)")
            [alias] = node.names
            start, end = _keyword(lines[node.lineno - 1], node.col_offset, "import")
            if "." not in alias.name:
                edits.append((node.lineno - 1, start, end, f"from {PROJECT_PACKAGE} import "))
            elif alias.asname:
                edits.append((node.lineno - 1, end, end, f"{PROJECT_PACKAGE}."))
            else:
                raise SetupError(f"{statement}: binds the short name {alias.name.split('.')[0]!r}, which the "
                                 f"installed copy does not have; write `from {alias.name.rsplit('.', 1)[0]} import "
                                 f"{alias.name.rsplit('.', 1)[1]}` (scripts/setuptools_build.py)")
    for index, start, end, text in sorted(edits, reverse=True):
        lines[index] = lines[index][:start] + text + lines[index][end:]
    qualified = "\n".join(lines)
    left = [node.lineno for node in ast.walk(ast.parse(qualified, where))
            if (isinstance(node, ast.ImportFrom) and node.level == 0 and _short(node.module))
            or (isinstance(node, ast.Import) and any(_short(alias.name) for alias in node.names))]
    if left or qualified.count("\n") != source.count("\n"):  # a bug here, not in the module: never ship it
        raise SetupError(f"{where}: qualifying its imports failed (lines {left}); scripts/setuptools_build.py")
    return qualified


class QualifiedBuildPy(build_py):
    def build_module(self, module, module_file, package):
        outfile, copied = super().build_module(module, module_file, package)
        path = Path(outfile)
        qualified = qualify_imports(path.read_bytes().decode("utf-8"), str(module_file))  # bytes: line ends kept
        path.unlink()  # a fresh file, never one linked to the checkout's module
        path.write_bytes(qualified.encode("utf-8"))
        return outfile, copied


class CheckoutEditableWheel(editable_wheel):
    """`pip install -e .` (scripts/setup.sh: the maintainer's .venv) serves a checkout, whose code imports the
    packages by their short names and whose tests run `python -m eval` from any folder: besides the installed
    names (`gendered_job_titles.eval`, which the `gjt-*` commands use) it maps the folders under the short names,
    as a checkout on sys.path would. A wheel (`pip install .`) has only the qualified names."""

    def run(self) -> None:
        packages = list(self.distribution.packages)
        self.distribution.packages = packages + [p.removeprefix(f"{PROJECT_PACKAGE}.") for p in packages]
        super().run()
