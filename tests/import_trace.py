"""Which of the repository's Python files a `python -m <package> ...` command imports: dvc.yaml's tests
check each stage lists every module its command runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs `python -m <package> ...` and writes, at exit, the repository's Python files the process imported.
TRACER = """
import atexit, importlib.util, os, runpy, sys
root, package = os.environ["TRACE_ROOT"], os.environ["TRACE_PACKAGE"]
def report():
    files = {os.path.relpath(m.__file__, root) for m in list(sys.modules.values()) if getattr(m, "__file__", None)}
    files.add(os.path.relpath(importlib.util.find_spec(package + ".__main__").origin, root))  # run, not imported
    with open(os.environ["TRACE_OUT"], "w") as fh:
        fh.write("\\n".join(sorted(f for f in files if not f.startswith((".", "..")) and f.endswith(".py"))))
atexit.register(report)
sys.argv = [package, *sys.argv[1:]]
runpy.run_module(package, run_name="__main__", alter_sys=True)
"""


def imported_files(cmd: list[str], cwd: Path, out: Path, env: dict | None = None, timeout: int = 600) -> set[str]:
    """Run ``cmd`` (``["python", "-m", package, ...]``) in ``cwd`` with this checkout first on the path; the
    repository-relative .py files it imported. A failing command fails the caller's test with its output."""
    assert cmd[:2] == ["python", "-m"], cmd
    env = {**(env or os.environ), "TRACE_ROOT": str(REPO), "TRACE_PACKAGE": cmd[2], "TRACE_OUT": str(out),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", TRACER, *cmd[3:]], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=timeout)
    assert done.returncode == 0, f"{' '.join(cmd)}: {done.stdout}{done.stderr}"
    return set(out.read_text().split("\n"))


def uncovered(imported: set[str], deps: list[str]) -> list[str]:
    """The imported files no dependency covers: a dep is a file, or a folder holding everything under it."""
    deps = [str(d).rstrip("/") for d in deps]
    return sorted(f for f in imported if not any(f == d or f.startswith(d + "/") for d in deps))
