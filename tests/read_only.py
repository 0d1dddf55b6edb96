"""A folder made read-only for the process running the tests, also as root (the tests of every command's
"cannot write" path share it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest


@contextlib.contextmanager
def read_only(folder: Path):
    """``folder`` made read-only for this process: a read-only tmpfs remount as root (a mode does not stop root),
    else mode 0555. What the folder holds is copied in first."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("mount") is None:
        pytest.skip("no mount command to make a read-only filesystem")
    saved = folder.with_name(folder.name + ".saved")
    shutil.copytree(folder, saved)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", f"ro-{uuid.uuid4().hex[:8]}", str(folder)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        shutil.copytree(saved, folder, dirs_exist_ok=True)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
        shutil.rmtree(saved)
