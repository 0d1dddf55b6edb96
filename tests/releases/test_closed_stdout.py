"""`python -m releases verify ... | head -0` called a good release broken: a closed stdout must not change the verdict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from releases import make_release

REPO = Path(__file__).resolve().parents[2]


def _verify_with_stdout_closed(release: Path) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "releases", "verify", str(release)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader has gone before the first line: every write meets EPIPE
    err = proc.stderr.read()
    return proc.wait(timeout=300), err


def test_verify_gives_its_verdict_whatever_happens_to_stdout(project):
    release = project.root / "release"
    make_release(project.data, "0.1.0", release, project.params)
    rc, err = _verify_with_stdout_closed(release)
    assert rc == 0 and err == "", err  # good: still good
    qrels = release / "pt" / "qrels.tsv"
    qrels.write_text(qrels.read_text().replace("q-m1\t0\td-m1", "q-m1\t0\td-m2"))
    rc, err = _verify_with_stdout_closed(release)
    assert rc == 2 and err.startswith(f"error: {release}: release 0.1.0 failed verification"), err  # broken: still broken
    assert len(err.splitlines()) == 1
