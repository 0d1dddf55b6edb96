"""``python -m <package> --help`` prints the help without importing the heavy libraries the commands use
(polars, numpy, the model and NLP libraries): the command lines import what a command runs when it runs.
Figures: benchmarks/bench_startup.py, docs/build-speed.md."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HEAVY = {"polars", "numpy", "torch", "spacy", "pandas", "sklearn", "scipy", "pyarrow", "huggingface_hub"}
# Runs the package's command line as `python -m` does and prints the heavy top-level modules it imported.
RUN = """
import os, runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
except SystemExit as stop:
    assert stop.code in (0, 2), stop.code
print(sorted({m.split('.')[0] for m in sys.modules} & set(os.environ["HEAVY"].split(','))))
"""


def heavy_imports(package: str, *args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "HEAVY": ",".join(sorted(HEAVY))}
    done = subprocess.run([sys.executable, "-c", RUN, package, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])  # a printed list of names


@pytest.mark.parametrize("package", ["builder", "eval", "releases"])
def test_help_imports_no_heavy_library(package):
    assert heavy_imports(package, "--help") == []


@pytest.mark.parametrize("package, command", [("builder", "defaults"), ("eval", "audit"), ("releases", "verify")])
def test_a_commands_help_and_a_usage_error_import_none_either(package, command):
    assert heavy_imports(package, command, "--help") == []
    assert heavy_imports(package, command, "--no-such-flag") == []


def test_the_check_sees_a_heavy_import():
    """The probe itself: a command that reads a release loads polars, and is reported (it then stops: no folder)."""
    assert heavy_imports("releases", "verify", "/nonexistent-release") == ["polars"]
