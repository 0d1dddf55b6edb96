"""Start and stop a real local Argilla stack: redis-server, osmem-server and argilla-server.

Used by the test fixture, the benchmark and ``python -m annotation serve``. Every process is started here, on 127.0.0.1 and free ports,
with a fresh home folder, and stopped by its PID. argilla-server runs from ``.venv-argilla`` (its pins
clash with the project's) through ``argilla_launcher.py``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARGILLA_PYTHON = REPO / ".venv-argilla" / "bin" / "python"
LAUNCHER = Path(__file__).with_name("argilla_launcher.py")
# What `argilla_server database users create_default` sets unless told otherwise.
OWNER_USERNAME = "argilla"
OWNER_PASSWORD = "1234"
OWNER_API_KEY = "argilla.apikey"


class StackError(RuntimeError):
    """The local Argilla stack could not start; the message carries the failing log's tail."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait(check, what: str, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StackError(f"{what} exited with status {proc.returncode} while starting; log tail:\n{_tail(log)}")
        if check():
            return
        time.sleep(0.2)
    raise StackError(f"{what} not ready after {timeout:.0f} s; log tail:\n{_tail(log)}")


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _redis_ok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _stop(proc: subprocess.Popen | None, grace: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@dataclass
class ArgillaStack:
    """A running stack; ``api_url`` and ``owner_api_key`` reach it as the owner user ``argilla``.

    ``argilla_port`` 0 picks a free port; the owner's password and key can be chosen before ``start``.
    """

    home: Path
    redis_port: int = 0
    search_url: str = ""
    argilla_port: int = 0
    owner_password: str = OWNER_PASSWORD
    owner_api_key: str = OWNER_API_KEY
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.argilla_port}"

    @property
    def owner_username(self) -> str:
        return OWNER_USERNAME

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGILLA_")}
        env.update(
            ARGILLA_HOME_PATH=str(self.home / "argilla"),
            ARGILLA_DATABASE_URL=f"sqlite+aiosqlite:///{self.home / 'argilla' / 'argilla.db'}?check_same_thread=False",
            ARGILLA_SEARCH_ENGINE="opensearch",
            ARGILLA_ELASTICSEARCH=self.search_url,
            ARGILLA_REDIS_URL=f"redis://127.0.0.1:{self.redis_port}/0",
            ARGILLA_ENABLE_TELEMETRY="0",
            HF_HUB_OFFLINE="1",
        )
        return env

    def _spawn(self, name: str, args: list[str], **kw) -> subprocess.Popen:
        log = open(self.home / f"{name}.log", "ab")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=self.home, **kw)
        log.close()
        self.procs[name] = proc
        return proc

    def start(self, timeout: float = 90.0) -> "ArgillaStack":
        if not ARGILLA_PYTHON.is_file():
            raise StackError(f"{ARGILLA_PYTHON} missing: run `bash scripts/setup.sh` to create .venv-argilla")
        if shutil.which("redis-server") is None:
            raise StackError("redis-server not found: run `bash scripts/setup.sh` (installs Debian redis-server)")
        (self.home / "argilla").mkdir(parents=True, exist_ok=True)
        try:
            self._start_redis(timeout)
            self._start_search(timeout)
            self._prepare_database()
            self.start_argilla(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_redis(self, timeout: float) -> None:
        self.redis_port = free_port()
        proc = self._spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--dir", str(self.home)])
        _wait(lambda: _redis_ok(self.redis_port), "redis-server", proc, self.home / "redis.log", timeout)

    def _start_search(self, timeout: float) -> None:
        binary = subprocess.run(
            [str(ARGILLA_PYTHON), "-c", "import osmem_server; print(osmem_server.resolve_binary())"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        port = free_port()
        self.search_url = f"http://127.0.0.1:{port}"
        # stdin stays open while this process lives: osmem exits when it closes or when we are gone.
        proc = self._spawn("osmem", [binary, "--addr", f"127.0.0.1:{port}", "--no-ja",
                                     "--parent-pid", str(os.getpid())], stdin=subprocess.PIPE)
        _wait(lambda: _http_ok(self.search_url), "osmem-server", proc, self.home / "osmem.log", timeout)

    def _prepare_database(self) -> None:
        create_owner = ["database", "users", "create_default", "--quiet",
                        f"--password={self.owner_password}", f"--api-key={self.owner_api_key}"]
        for args in (["database", "migrate"], create_owner):
            done = subprocess.run([str(ARGILLA_PYTHON), "-m", "argilla_server", *args], env=self._env(),
                                  cwd=self.home, capture_output=True, text=True)
            if done.returncode != 0:
                raise StackError(f"argilla_server {' '.join(args[:3])} failed:\n{(done.stdout + done.stderr)[-3000:]}")

    def start_argilla(self, timeout: float = 90.0) -> None:
        """Start (or restart) argilla-server alone, on the same port and database."""
        self.argilla_port = self.argilla_port or free_port()
        proc = self._spawn("argilla", [str(ARGILLA_PYTHON), str(LAUNCHER), "127.0.0.1", str(self.argilla_port)],
                           env=self._env())
        _wait(lambda: _http_ok(f"{self.api_url}/api/v1/status"), "argilla-server", proc,
              self.home / "argilla.log", timeout)

    def stop_argilla(self) -> None:
        _stop(self.procs.pop("argilla", None))

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self.procs.items()}

    def check_running(self) -> None:
        """Raise StackError naming a process of the stack that has exited, with its log's tail."""
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise StackError(f"{name} exited with status {proc.returncode}; log tail:\n{_tail(self.home / f'{name}.log')}")

    def stop(self) -> None:
        for name in ("argilla", "osmem", "redis"):
            _stop(self.procs.pop(name, None))
