"""A server at ARGILLA_API_URL that answers 200 with HTML (a login page, a proxy's error page) or with JSON of
another shape: one `error:` line, exit status 2, never a traceback; the API key is never shown."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KEY = "argilla-key-5d1e7f0a9b"


def serve(body: bytes, content_type: str):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self):
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = answer

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.server
@pytest.mark.parametrize("body, content_type", [
    (b"<!doctype html><html><body>Sign in</body></html>", "text/html"),
    (json.dumps({"unexpected": [1, 2, 3]}).encode(), "application/json"),
    (json.dumps([{"items": "not a list"}]).encode(), "application/json"),
])
def test_a_server_that_is_not_argilla_is_one_error_line(body, content_type, tmp_path):
    server = serve(body, content_type)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        r = subprocess.run([sys.executable, "-m", "annotation", "pull", "--lang", "pt", "--out", str(tmp_path / "pt.jsonl")],
                           cwd=REPO, capture_output=True, text=True, timeout=300,
                           env={**os.environ, "ARGILLA_API_URL": url, "ARGILLA_API_KEY": KEY})
    finally:
        server.shutdown()
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: Argilla at {url} ") and "Traceback" not in r.stderr, r.stderr
    assert KEY not in r.stdout + r.stderr
