"""scripts/setup.sh without root: it names the missing Debian packages and stops before creating anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# What the script runs before the Debian check; apertium and redis-server are left out, so they are missing.
TOOLS = ("bash", "env", "id", "dirname", "basename", "cat", "sha256sum", "cut")


@pytest.fixture
def copy_without_apertium_and_redis():
    # pytest's tmp_path is private to the current user (0700); an unprivileged user must be able to enter this one.
    work = Path(tempfile.mkdtemp(prefix="setup-test-"))
    work.chmod(0o755)
    (work / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "setup.sh", work / "scripts" / "setup.sh")
    tools = work / "bin"
    tools.mkdir()
    for tool in TOOLS:
        os.symlink(shutil.which(tool), tools / tool)
    for python in ("python3.11", "python3"):
        if Path("/usr/bin", python).exists():
            os.symlink(Path("/usr/bin", python), tools / python)
    os.chmod(work / "scripts", 0o755)
    yield work, tools
    shutil.rmtree(work)


def test_without_root_names_missing_packages_and_exits(copy_without_apertium_and_redis):
    work, tools = copy_without_apertium_and_redis
    command = ["bash", str(work / "scripts" / "setup.sh")]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv (util-linux) is missing: cannot drop to an unprivileged user")
        command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    env = {"PATH": str(tools), "HOME": str(work), "LANG": "C.UTF-8"}  # no sudo on PATH either
    done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, timeout=60)

    assert done.returncode != 0, done.stdout + done.stderr
    missing_line = next(line for line in done.stderr.splitlines() if line.startswith("setup: missing Debian packages: "))
    missing = missing_line.removeprefix("setup: missing Debian packages: ").split()
    assert {"apertium", "redis-server"} <= set(missing)
    assert "apertium-eng-spa" in missing or Path("/usr/share/apertium/apertium-eng-spa").is_dir()
    # the exact command an administrator can paste, for exactly those packages
    assert f"    apt-get update && apt-get install -y {' '.join(missing)}" in done.stderr.splitlines()
    assert "setup: apt-get install" not in done.stdout  # it did not try
    assert not (work / ".venv").exists() and not (work / ".venv-argilla").exists()
