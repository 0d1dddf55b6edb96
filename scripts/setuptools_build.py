"""A setuptools `build` command whose scratch folder lies outside the work tree.

pip builds a wheel inside the source folder, and setuptools' `build` command writes `build/` there by default
(`pip install .` would leave it behind). pyproject.toml ([tool.setuptools.cmdclass]) names this class instead:
the same command with its default `build_base` in a temporary folder, removed when the build process ends. An
explicit `--build-base` still wins. (The `*.egg-info` folder setuptools also writes is ignored by git.)
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from setuptools.command.build import build

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
