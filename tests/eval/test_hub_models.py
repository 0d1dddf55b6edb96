"""A Hugging Face id given to eval is looked up once before sentence-transformers loads it (eval.models.check_hub_model):
in the local cache, else on the Hub, one request. An id that is not there is one `error:` line, without torch ever
imported (it failed after 80 s of sentence-transformers' retries and 35 lines of their text: issue 38). The Hub is
a real HTTP server on 127.0.0.1 (HF_ENDPOINT) or a closed port there; nothing else is reachable."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from eval.testset import write_testset

from .testsets import make_testset

REPO = Path(__file__).resolve().parents[2]

# eval's command line in a process of its own, and whether the failed model load imported the heavy libraries.
RUN = """
import sys
from eval.__main__ import main
status = main(sys.argv[1:])
print(status, "sentence_transformers" in sys.modules, "torch" in sys.modules)
"""


def eval_run(tmp_path: Path, model: str, **env: str) -> tuple[str, str]:
    data = tmp_path / "data"
    if not data.exists():
        write_testset(make_testset("pt"), data)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT", "HF_TOKEN")}
    done = subprocess.run([sys.executable, "-c", RUN, "run", "--model", model, "--data", str(data), "--lang", "pt",
                           "--out", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**clean, "HF_HOME": str(tmp_path / "hf"), "PYTHONPATH": str(REPO), **env})
    return done.stdout, done.stderr


def one_error_line(stdout: str, stderr: str) -> str:
    assert stdout == "2 False False\n", (stdout, stderr)  # status 2; neither sentence-transformers nor torch loaded
    assert stderr.startswith("error: ") and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    return stderr


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: a connection is refused


def test_an_unknown_id_offline_is_one_line_naming_the_cache(tmp_path):
    err = one_error_line(*eval_run(tmp_path, "no-such/model", HF_HUB_OFFLINE="1"))
    assert err == (f"error: 'no-such/model' is not in the Hugging Face cache ({tmp_path / 'hf' / 'hub'}) and "
                   "HF_HUB_OFFLINE is set: download it once with network access, or give a local folder\n")


def test_an_unreachable_hub_is_one_line_naming_it(tmp_path):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    err = one_error_line(*eval_run(tmp_path, "no-such/model", HF_ENDPOINT=endpoint))
    assert err.startswith(f"error: 'no-such/model': cannot reach the Hugging Face Hub ({endpoint}: ConnectError: ")
    assert err.endswith("check the network (HF_ENDPOINT if set), set HF_HUB_OFFLINE=1 to use only the local cache, "
                        "or give a local folder\n")


class Hub(BaseHTTPRequestHandler):
    """Answers every request as the Hub answers for the configured case; records the paths asked."""

    status, headers_out, asked = 401, {}, []

    def do_GET(self):
        type(self).asked.append(self.path)
        body = json.dumps({"error": "Repository Not Found"}).encode()
        self.send_response(self.status)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(len(body)), **self.headers_out}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def hub():
    servers = []

    def start(status: int, headers: dict[str, str]) -> tuple[str, list[str]]:
        handler = type("Case", (Hub,), {"status": status, "headers_out": headers, "asked": []})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}", handler.asked

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_an_id_the_hub_does_not_know_is_one_line_after_one_request(tmp_path, hub):
    # the Hub's answer for a repository that does not exist (or is private): 401 with its error code
    endpoint, asked = hub(401, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"})
    err = one_error_line(*eval_run(tmp_path, "no-such/model", HF_ENDPOINT=endpoint))
    assert err == (f"error: 'no-such/model': no such model on the Hugging Face Hub ({endpoint}), or a private one "
                   "(log in: hf auth login, or set HF_TOKEN); check the id, or give a local folder\n")
    assert asked == ["/api/models/no-such/model"]


def test_a_hub_answering_an_error_status_is_one_line_after_one_request(tmp_path, hub):
    endpoint, asked = hub(503, {})
    err = one_error_line(*eval_run(tmp_path, "no-such/model", HF_ENDPOINT=endpoint))
    assert err == (f"error: 'no-such/model': the Hugging Face Hub ({endpoint}) answered HTTP 503; try again later, "
                   "or give a local folder\n")
    assert len(asked) == 1


def test_a_cached_model_is_found_without_a_request(tmp_path, monkeypatch):
    """The cache as huggingface_hub lays it out (models--<org>--<name>/refs/main naming a snapshot folder): found
    with the Hub unreachable and HF_HUB_OFFLINE unset, so no request was made."""
    snapshot = tmp_path / "hf" / "hub" / "models--some-org--cached" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("a" * 40)
    check = f"""
from eval.models import check_hub_model
check_hub_model("some-org/cached")
print("found")
"""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**env, "HF_HOME": str(tmp_path / "hf"), "PYTHONPATH": str(REPO),
                               "HF_ENDPOINT": f"http://127.0.0.1:{closed_port()}"})
    assert (done.returncode, done.stdout) == (0, "found\n"), done.stderr


def test_a_name_that_is_no_hub_id_is_one_line(tmp_path):
    err = one_error_line(*eval_run(tmp_path, "org/na--me", HF_HUB_OFFLINE="1"))
    assert err.startswith("error: 'org/na--me' is neither a folder nor a Hugging Face id (")
