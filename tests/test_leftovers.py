"""Nothing half-written and nothing swapped on failure: the results writer leaves no hidden
``.json.partial-<pid>`` behind, and an output folder that is a symbolic link is refused before any write."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from eval.results import write_json
from config.files import OutputPathError, write_folder_atomically
from tests.builder.test_build import tiny_source
from tests.builder.test_cache_storage import tmpfs

REPO = Path(__file__).resolve().parents[1]


def test_a_failed_results_write_leaves_no_partial_file(tmp_path):
    (tmp_path / "r.json").write_text('{"old": 1}\n')
    with pytest.raises(TypeError):
        write_json(tmp_path / "r.json", {"rows": [1, 2, object()]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]
    assert (tmp_path / "r.json").read_text() == '{"old": 1}\n'


def test_a_full_disk_while_writing_results_leaves_no_partial_file(tmp_path):
    with tmpfs(tmp_path / "disk", "64k") as disk:
        (disk / "r.json").write_text('{"old": 1}\n')
        with pytest.raises(OSError):
            write_json(disk / "r.json", {"rows": ["x" * 1000] * 200})
        assert sorted(p.name for p in disk.iterdir()) == ["r.json"]
        assert (disk / "r.json").read_text() == '{"old": 1}\n'


def test_an_output_folder_that_is_a_symlink_is_refused_before_any_write(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "keep.txt").write_text("kept")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "pt").symlink_to(real)
    with pytest.raises(OutputPathError, match="is a symbolic link"):
        write_folder_atomically(tmp_path / "out" / "pt", lambda tmp: (tmp / "new.txt").write_text("new"),
                                ours=re.compile(r"new\.txt"))
    assert (tmp_path / "out" / "pt").is_symlink() and os.readlink(tmp_path / "out" / "pt") == str(real)
    assert sorted(p.name for p in real.iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["pt"]


def test_builder_source_into_a_symlink_is_one_error_and_swaps_nothing(tmp_path):
    src = tiny_source(tmp_path / "src")
    real = tmp_path / "real"
    real.mkdir()
    (real / "keep.txt").write_text("kept")
    (tmp_path / "link").symlink_to(real)
    done = subprocess.run([sys.executable, "-m", "builder", "source", "--source", str(src), "--out", str(tmp_path / "link")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if not line.startswith("note: ")]
    assert errors == [line for line in errors if line.startswith(f"error: {tmp_path / 'link'}: is a symbolic link")] and len(errors) == 1, done.stderr
    assert (tmp_path / "link").is_symlink() and sorted(p.name for p in real.iterdir()) == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
