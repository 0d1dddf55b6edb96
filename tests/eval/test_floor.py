"""benchmarks/floor_eval.py, the floor that `eval run` is timed against (benchmarks/bench_run.py), writes the files
`eval run --model tfidf-char` writes, byte for byte: on a small set and on a set with extra query forms."""

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def same_files(a: Path, b: Path) -> list[str]:
    cmp = filecmp.dircmp(a, b)
    _, differ, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    out = [f"only in one: {n}" for n in cmp.left_only + cmp.right_only] + differ + errors
    for sub in cmp.common_dirs:
        out += same_files(a / sub, b / sub)
    return out


@pytest.mark.parametrize("fixture", ["small_data", "forms_data"])
def test_the_floor_writes_the_bytes_eval_run_writes(tmp_path, fixture, request):
    data = request.getfixturevalue(fixture)
    run = lambda *cmd: subprocess.run([sys.executable, *cmd], cwd=REPO, capture_output=True, text=True, timeout=600)  # noqa: E731
    evaluated = run("-m", "eval", "run", "--data", str(data), "--model", "tfidf-char", "--out", str(tmp_path / "eval"),
                    "--cache", str(tmp_path / "cache"), "--quiet", "--force")
    assert evaluated.returncode == 0, evaluated.stderr
    floor = run("benchmarks/floor_eval.py", "--data", str(data), "--out", str(tmp_path / "floor"))
    assert floor.returncode == 0, floor.stderr
    written = sorted(p.relative_to(tmp_path / "eval") for p in (tmp_path / "eval").rglob("*") if p.is_file())
    assert any(p.suffix == ".png" for p in written) and any(p.parts[0] == "store" for p in written)
    assert same_files(tmp_path / "eval", tmp_path / "floor") == []
