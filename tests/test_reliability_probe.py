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

# Runs `python -m <package> <args>` as runpy does, and sends itself SIGINT the moment <module> is first imported:
# a Ctrl-C landing exactly there, every time, without a sleep.
CTRL_C_AT_IMPORT = """
import os, runpy, signal, sys

at = sys.argv[2]

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == at:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlC())
package, sys.argv = sys.argv[1], [sys.argv[1], *sys.argv[3:]]
runpy.run_module(package, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("package, module, args", [
    ("builder", "builder.translators", ["--help"]),
    ("eval", "polars", ["run", "--data", "nowhere", "--out", "nowhere"]),
    ("releases", "releases.params", ["--help"]),
    ("annotation", "annotation.cli", ["--help"]),
])
def test_ctrl_c_during_the_imports_of_a_command_is_one_line_and_130(package, module, args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", CTRL_C_AT_IMPORT, package, module, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    assert done.stderr == "interrupted while starting; nothing was written\n"


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

