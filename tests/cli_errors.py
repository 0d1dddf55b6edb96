"""The project's promise for bad input (README, Standards): exit status 2 and exactly one `error:` line on stderr
naming what is wrong, never a traceback. One check of it for the test modules that run a command line."""

from __future__ import annotations

import subprocess


def one_error_line(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr
