"""``python -m annotation serve`` as a user runs it: a subprocess in the foreground, then push, one
annotator's response, pull, and Ctrl-C (SIGINT) or SIGTERM leaving no process of the stack behind."""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from annotation.serve import check_port_free
from annotation.testing.stack import free_port
from tests.annotation.conftest import write_params, write_tiny_testset
from tests.annotation.test_argilla_server import Annotator, create_annotator, run_cli

pytestmark = [pytest.mark.server, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
READY_S = 300  # a cold start on 2 busy cores


class Serve:
    """The serve command in a subprocess; its output is read on a thread so waits can time out."""

    def __init__(self, port: int):
        self.proc = subprocess.Popen([sys.executable, "-m", "annotation", "serve", "--port", str(port)], cwd=REPO,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"serve exited ({self.proc.wait()}) before {pattern!r}:\n" + "\n".join(self.output))
            self.output.append(line)
            if m := re.search(pattern, line):
                return m
        raise AssertionError(f"no {pattern!r} within {timeout:.0f} s:\n" + "\n".join(self.output))

    def wait_ready(self) -> SimpleNamespace:
        url = self.wait_for(r"^Argilla is running at (http://127\.0\.0\.1:\d+)$", READY_S)[1]
        self.started_s = float(self.wait_for(r"^  started in (\d+\.\d) s$", 5)[1])  # docs/annotation.md
        user, password = self.wait_for(r"sign in as user (\S+), password (\S+) \(owner\)", 5).groups()
        exported = dict(re.findall(r"(\w+)=(\S+)", self.wait_for(r"^\s+export ARGILLA_API_URL=", 5).string))
        pids = {name: int(pid) for name, pid in re.findall(r"([\w-]+) (\d+)", self.wait_for(r"processes: ", 5).string.split(": ", 1)[1])}
        return SimpleNamespace(api_url=url, user=user, password=password, owner_api_key=exported["ARGILLA_API_KEY"],
                               exported_url=exported["ARGILLA_API_URL"], pids=pids)

    def stop(self, sig: int, timeout: float = 60) -> int:
        self.proc.send_signal(sig)
        rc = self.proc.wait(timeout)
        while (line := self.lines.get(timeout=10)) is not None:  # the rest of the output
            self.output.append(line)
        return rc

    def kill_if_running(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def running(pid: int) -> bool:
    """The process exists and is not a zombie (a reaped or exited process counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_serve_push_annotate_pull_then_ctrl_c_leaves_nothing(tmp_path, monkeypatch, capsys):
    port = free_port()
    serve = Serve(port)
    try:
        stack = serve.wait_ready()
        assert 0 < serve.started_s < READY_S
        assert stack.api_url == stack.exported_url == f"http://127.0.0.1:{port}"
        assert set(stack.pids) == {"redis-server", "osmem-server", "argilla-server"}
        assert all(running(pid) for pid in stack.pids.values())
        # the printed user and password sign in, as the UI's login form does
        login = httpx.post(f"{stack.api_url}/api/v1/token", data={"username": stack.user, "password": stack.password})
        assert login.status_code == 201 and login.json()["access_token"]
        assert httpx.post(f"{stack.api_url}/api/v1/token",
                          data={"username": stack.user, "password": "1234"}).status_code == 401  # no default password

        # push, with the two exports serve printed
        monkeypatch.setenv("ARGILLA_API_URL", stack.exported_url)
        monkeypatch.setenv("ARGILLA_API_KEY", stack.owner_api_key)
        write_tiny_testset(tmp_path / "data")
        params = write_params(tmp_path / "params.yaml", "try-serve")
        rc, out, err = run_cli(["--params", str(params), "push", "translations", "--data", str(tmp_path / "data"),
                                "--lang", "pt"], capsys)
        assert rc == 0, err
        assert "pt-translations-t1: 6 new, 0 changed, 0 unchanged" in out

        # one annotator corrects Baker (padaria is a bakery) through the API the UI uses
        ana = Annotator(stack, create_annotator(stack, "ana", "try-serve"))
        baker = ana.queue("pt-translations-t1")["pt-translation-Baker"]
        ana.submit(baker, {"masculine": "padeiro", "feminine": "padeira", "gender_marking": "gendered",
                           "flag": "wrong_sense"})

        corrections = tmp_path / "corrections" / "pt.jsonl"
        rc, out, err = run_cli(["--params", str(params), "pull", "--lang", "pt", "--out", str(corrections)], capsys)
        assert rc == 0, err
        lines = [json.loads(line) for line in corrections.read_text(encoding="utf-8").splitlines()]
        assert [(l["source_id"], l["masculine"], l["feminine"], l["flag"], l["annotators"]) for l in lines] == [
            # with a flag the titles the person left are written out, the machine's padeiro too (a flag and a null
            # title would drop the source: builder/corrections.py FLAG_MEANINGS)
            ("Baker", "padeiro", "padeira", "wrong_sense", ["ana"])]

        assert serve.stop(signal.SIGINT) == 0
    finally:
        serve.kill_if_running()
    assert "SIGINT: stopping" in serve.output
    assert "stopped argilla-server, osmem-server, redis-server" in serve.output
    left = {name: pid for name, pid in stack.pids.items() if running(pid)}
    assert not left, f"still running after Ctrl-C: {left}"
    check_port_free(port)  # nothing listens there any more
    print(f"annotation serve: the stack started in {serve.started_s} s")  # `pytest -rP` shows it


def test_serve_refuses_a_taken_port_and_stops_on_sigterm():
    port = free_port()
    serve = Serve(port)
    try:
        stack = serve.wait_ready()
        second = subprocess.run([sys.executable, "-m", "annotation", "serve", "--port", str(port)], cwd=REPO,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert second.stderr.startswith(f"error: port {port} on 127.0.0.1 is taken") and "--port N" in second.stderr
        assert "starting" not in second.stdout  # refused before starting anything
        assert serve.stop(signal.SIGTERM) == 0
    finally:
        serve.kill_if_running()
    assert "SIGTERM: stopping" in serve.output
    left = {name: pid for name, pid in stack.pids.items() if running(pid)}
    assert not left, f"still running after SIGTERM: {left}"
