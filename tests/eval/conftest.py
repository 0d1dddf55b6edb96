"""Fixtures of the eval tests: small inline test sets written to a folder (the sets: tests/eval/testsets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.testset import write_testset

from .testsets import forms_testset, make_testset


@pytest.fixture
def small_data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), root)
    return root


@pytest.fixture
def forms_data(tmp_path: Path) -> Path:
    root = tmp_path / "forms"
    write_testset(forms_testset(), root)
    return root
