"""Issue 38's probe of the four command lines as a whole, kept: a Ctrl-C while a command starts (in its imports)
is one line and status 130, never a KeyboardInterrupt traceback; the one check of a name before it reaches a file
name. The per-package probes: tests/<package>/test_reliability_probe.py. Each case failed on main 7194864."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from config.files import OutputPathError, inside

REPO = Path(__file__).resolve().parents[1]

# Runs `python -m <package> <args>` as runpy does, or an installed command's wrapper script (a path) as its
# interpreter does, and sends itself SIGINT the moment <module> is first imported: a Ctrl-C landing exactly there,
# every time, without a sleep.
CTRL_C_AT_IMPORT = """
import os, runpy, signal, sys

command, at = sys.argv[1], sys.argv[2]

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == at:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = [command, *sys.argv[3:]]
if os.sep in command:  # the wrapper script: argv[0] is its path, as when the shell runs it
    runpy.run_path(command, run_name="__main__")
else:
    runpy.run_module(command, run_name="__main__", alter_sys=True)
"""

# Where each command line is interrupted: a module it imports after its first line, and arguments that reach it.
INTERRUPTED_AT = [
    ("builder", "builder.translators", ["--help"]),
    ("eval", "polars", ["run", "--data", "nowhere", "--out", "nowhere"]),
    ("releases", "releases.params", ["--help"]),
    ("annotation", "annotation.cli", ["--help"]),
]

# The script pip writes for a [project.scripts] entry `module:function` (pip 24's template, as in .venv/bin/gjt-*).
WRAPPER = """import sys
from {module} import {function}
if __name__ == '__main__':
    sys.argv[0] = sys.argv[0].removesuffix('.exe')
    sys.exit({function}())
"""


def interrupted_at_import(python: str, command: str, module: str, args: list[str], *, cwd: Path, env: dict):
    done = subprocess.run([python, "-c", CTRL_C_AT_IMPORT, command, module, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert done.stderr == "interrupted while starting; nothing was written\n"


def checkout_env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("package, module, args", INTERRUPTED_AT)
def test_ctrl_c_during_the_imports_of_a_command_is_one_line_and_130(package, module, args):
    interrupted_at_import(sys.executable, package, module, args, cwd=REPO, env=checkout_env())


@pytest.mark.parametrize("package, module, args", INTERRUPTED_AT)
def test_ctrl_c_during_the_imports_of_an_installed_command_is_one_line_and_130(tmp_path, package, module, args):
    """The gjt-<package> wrapper imports its entry point's module before it calls anything, so the handler must be
    in place by that import, not only under `python -m` (failed on main 8807e36: a KeyboardInterrupt traceback).
    The wrapper of pyproject.toml's own entry, its module by the checkout's short name (the editable install's
    finder maps gendered_job_titles.<package> to the same files); test_packaging runs the wheel's."""
    import tomllib

    entry = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"][f"gjt-{package}"]
    target, function = entry.split(":")
    script = tmp_path / "bin" / f"gjt-{package}"
    script.parent.mkdir()
    script.write_text(WRAPPER.format(module=target.removeprefix("gendered_job_titles."), function=function))
    interrupted_at_import(sys.executable, str(script), module, args, cwd=tmp_path, env=checkout_env())


def test_importing_a_command_line_module_keeps_pythons_own_ctrl_c():
    """Only the command line itself swaps the handler: a test or a module importing builder.__main__ does not."""
    done = subprocess.run([sys.executable, "-c", "import signal, builder.__main__, eval.__main__, annotation.__main__;"
                           "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"],
                          cwd=REPO, env=checkout_env(), capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr


@pytest.mark.parametrize("name", ["v1/../../x", "..", ".", "", ".hidden", "a\\b", "a\nb", "a\x00b", "x" * 256,
                                  "é" * 128])
def test_a_name_that_is_not_one_plain_file_name_is_refused(tmp_path, name):
    with pytest.raises(OutputPathError, match="is not a plain file name"):
        inside(tmp_path, name, "the test")


def test_a_plain_file_name_is_kept(tmp_path):
    assert inside(tmp_path, "m-use__v0.5.0.worst_pairs.md", "the test") == tmp_path / "m-use__v0.5.0.worst_pairs.md"


def test_a_full_disk_while_polars_writes_parquet_is_the_oserror_naming_the_output(tmp_path):
    import errno

    import polars as pl

    from config.files import write_file_atomically, write_folder_atomically
    from tests.builder.test_cache_storage import tmpfs

    frame = pl.DataFrame({"a": [str(i) * 50 for i in range(20_000)]})
    with tmpfs(tmp_path / "disk", "64k") as disk:
        with pytest.raises(OSError) as err:
            write_file_atomically(disk / "q.parquet", frame.write_parquet)
        assert (err.value.errno, err.value.filename) == (errno.ENOSPC, str(disk / "q.parquet"))
        with pytest.raises(OSError) as err:
            write_folder_atomically(disk / "pt", lambda tmp: frame.write_parquet(tmp / "queries.parquet"),
                                    ours=re.compile("queries.parquet"))
        assert (err.value.errno, err.value.filename) == (errno.ENOSPC, str(disk / "pt"))
        assert sorted(p.name for p in disk.iterdir()) == []

