"""--push-to-hub, exercised offline: the plan is built and printed, nothing is sent."""

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from releases import ReleaseError, make_release
from releases.hub import plan_hub_upload, push_to_hub


@pytest.fixture
def release(project):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    return out


def test_plan_lists_every_release_file_with_its_checksum(release):
    plan = plan_hub_upload(release, "example-org/gendered-job-titles", revision="main").describe()
    manifest = json.loads((release / "manifest.json").read_text())
    assert plan["repo_id"] == "example-org/gendered-job-titles" and plan["repo_type"] == "dataset"
    assert plan["revision"] == "main" and plan["tag"] == "v0.1.0"
    assert [f["path_in_repo"] for f in plan["files"]] == sorted([f["path"] for f in manifest["files"]] + ["manifest.json"])
    for f in plan["files"]:
        assert f["sha256"] == hashlib.sha256((release / f["path_in_repo"]).read_bytes()).hexdigest()


def test_cli_dry_run_makes_the_release_and_prints_the_plan_offline(project, tmp_path):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    env.pop("HF_TOKEN", None)
    done = subprocess.run([sys.executable, "-m", "releases", "make", "--params", str(project.params),
                           "--data", str(project.data), "--version", "0.1.0", "--out", str(project.root / "release"),
                           "--push-to-hub", "example-org/gendered-job-titles", "--dry-run"],
                          cwd=project.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout[done.stdout.index("{"):])
    assert plan["dry_run"] is True and len(plan["files"]) == 12


def test_a_tampered_release_is_not_uploaded(release):
    (release / "pt" / "stats.json").write_text("{}\n")
    with pytest.raises(ReleaseError, match=r"fails verification.*changed: pt/stats\.json"):
        plan_hub_upload(release, "example-org/gendered-job-titles")


def test_an_invalid_repo_id_is_refused(release):
    with pytest.raises(ReleaseError, match="not a valid Hub repository id"):
        plan_hub_upload(release, "not a repo id")


def test_a_push_without_token_is_refused_before_any_request(release, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(ReleaseError, match="set HF_TOKEN"):
        push_to_hub(plan_hub_upload(release, "example-org/gendered-job-titles"))


def test_the_dry_run_never_prints_the_token(project, tmp_path):
    secret = "hf_" + "x7Qk2" * 6
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_TOKEN": secret}
    done = subprocess.run([sys.executable, "-m", "releases", "make", "--params", str(project.params),
                           "--data", str(project.data), "--version", "0.1.0", "--out", str(project.root / "release"),
                           "--push-to-hub", "example-org/gendered-job-titles", "--dry-run"],
                          cwd=project.root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert secret not in done.stdout + done.stderr and secret[:8] not in done.stdout + done.stderr
    assert not any(secret in p.read_text(errors="ignore") for p in (project.root / "release").rglob("*") if p.is_file())


class HubAnswer(BaseHTTPRequestHandler):
    """A web server on 127.0.0.1 standing where the Hub should be, answering every request with one canned
    answer (status, content type, body) and recording the requests it got."""

    answer: tuple[int, str, bytes] = (500, "text/html", b"")
    requests: list[str] = []

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        type(self).requests.append(f"{self.command} {self.path}")
        status, content_type, body = self.answer
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_HEAD = _answer

    def log_message(self, *args):
        pass


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: a connection is refused


def push_against(project, tmp_path, endpoint: str) -> subprocess.CompletedProcess:
    token = "hf_" + "x7Qk2" * 6
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": endpoint, "HF_TOKEN": token,
           "HF_HUB_ETAG_TIMEOUT": "5", "HF_HUB_DOWNLOAD_TIMEOUT": "5"}
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):  # only this local server is
        env.pop(name, None)                                                          # reachable by its address
    done = subprocess.run([sys.executable, "-m", "releases", "make", "--params", str(project.params),
                           "--data", str(project.data), "--version", "0.1.0", "--out", str(project.root / "release"),
                           "--push-to-hub", "example-org/gendered-job-titles"],
                          cwd=project.root, env=env, capture_output=True, text=True, timeout=300)
    assert token not in done.stdout + done.stderr
    return done


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: --push-to-hub example-org/gendered-job-titles: "), done.stderr
    return done.stderr


def test_an_unreachable_hub_is_one_error_line(project, tmp_path):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    err = one_error_line(push_against(project, tmp_path, endpoint))
    assert f"cannot reach the Hub at {endpoint}" in err and "ConnectError" in err and "HF_ENDPOINT" in err
    # the release itself was made and is intact: the push can be repeated later
    assert f"{project.root / 'release'} is complete and unchanged" in err
    assert (project.root / "release" / "manifest.json").is_file()


@pytest.mark.parametrize("status, content_type, body, says", [
    (500, "text/html", b"<html><body><h1>Internal Server Error</h1></body></html>", "answered HTTP 500"),
    (502, "text/html", b"<html>Bad Gateway</html>", "answered HTTP 502"),
    (401, "application/json", b'{"error": "Invalid credentials"}', "answered HTTP 401; check that HF_TOKEN may write"),
    (200, "text/html", b"<html><body>Welcome to the hotel wifi</body></html>", "is not the Hub's API (JSONDecodeError)"),
    (200, "application/json", b"{not json", "is not the Hub's API (JSONDecodeError)"),
    (200, "application/json", b"[1, 2, 3]", "is not the Hub's API"),
])
def test_a_hub_answering_garbage_is_one_error_line(project, tmp_path, status, content_type, body, says):
    HubAnswer.answer, HubAnswer.requests = (status, content_type, body), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), HubAnswer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        err = one_error_line(push_against(project, tmp_path, endpoint))
    finally:
        server.shutdown()
        server.server_close()
    assert HubAnswer.requests and HubAnswer.requests[0] == "POST /api/repos/create"  # it did ask this server
    assert f"the Hub at {endpoint} " in err and says in err, err
    assert "<html" not in err and "wifi" not in err  # the page itself is not repeated
