"""A researcher's folder outside the checkout: the PT test set under data/, a small params.yaml, and `python -m eval`
run from there (where the researcher's own encoder module lies) with this checkout's eval on the path. A plain
module of helpers, as testsets.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from eval.testset import write_testset

from .testsets import make_testset

REPO = Path(__file__).resolve().parents[2]


def make_folder(root: Path) -> Path:
    write_testset(make_testset("pt"), root / "data")
    (root / "params.yaml").write_text("eval:\n  bootstrap_resamples: 200\n  permutation_resamples: 200\n  cache: cache\n",
                                      encoding="utf-8")
    return root


def run_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m eval ARGS`` from ``folder``, this checkout's eval (and whatever PYTHONPATH holds) on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=folder, capture_output=True, text=True, timeout=600,
                          env=env)
