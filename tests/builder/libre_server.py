"""A LibreTranslate-compatible server on 127.0.0.1 for tests: POST /translate, GET /languages.

It answers from a fixed table (filled by the test with the real offline model's outputs) and can inject
faults on the first attempts at sentences: ``timeout`` (answers too late), ``429``, ``500``,
``malformed`` (not JSON) and ``empty`` (JSON without a translation); ``echo_key`` answers 500 with the
request's API key in the body, as a careless server would. A sentence missing from the table gets a 400.
``refused_key`` answers 403 with the key quoted. ``dirty`` answers the right translation with a
character of ``DIRTY`` inserted (a control, separator or bidi character, a lone surrogate, or the API key). It logs every request.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.parse

FAULTS = ("timeout", "429", "500", "malformed", "empty")
LEAKY_FAULTS = ("echo_key",)
# What a "dirty" answer inserts into the right translation: NUL, C0, DEL, C1, line/paragraph separators, bidi
# override/embedding/isolate/mark, a lone surrogate, and the request's API key ("KEY").
DIRTY = ("\x00", "\x1b", "\n", "\x7f", "\x85", "\u2028", "\u2029", "\u202e", "\u202a", "\u2066", "\u2069",
         "\u200f", "\ud800", "KEY")


class LibreServer:
    def __init__(self, table: dict[str, str], faults: tuple[str, ...] = (), fault_every: int = 3,
                 delay_s: float = 0.0, timeout_sleep_s: float = 1.5, api_key: str = "test-key"):
        self.table = table
        self.faults = faults
        self.fault_every = fault_every
        self.delay_s = delay_s
        self.timeout_sleep_s = timeout_sleep_s
        self.api_key = api_key
        self.fail_all: str | None = None  # a fault sent on every attempt (a service that stays down)
        self.requests: list[str] = []  # every sentence asked for, in order
        self.faults_sent: list[str] = []
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = {}
        self._dirty = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, code: int, body: bytes, ctype: str = "application/json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self):
                if self.path.startswith("/languages"):
                    self._send(200, json.dumps([{"code": "en", "name": "English"}, {"code": "pt", "name": "Portuguese"},
                                                {"code": "es", "name": "Spanish"}]).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self):
                parsed = urllib.parse.urlparse(self.path)
                if parsed.path.rstrip("/") != "/translate":
                    return self._send(404, b'{"error": "not found"}')
                fields = dict(urllib.parse.parse_qsl(parsed.query))
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    body = self.rfile.read(length).decode()
                    try:
                        fields.update(json.loads(body))
                    except json.JSONDecodeError:
                        fields.update(urllib.parse.parse_qsl(body))
                if fields.get("api_key") != owner.api_key:
                    return self._send(403, json.dumps({"error": f"Invalid API key {fields.get('api_key')}"}).encode())
                q = fields.get("q", "")
                fault = owner._fault_for(q)
                if owner.delay_s:
                    time.sleep(owner.delay_s)
                if fault == "timeout":
                    time.sleep(owner.timeout_sleep_s)
                elif fault in ("429", "500"):
                    return self._send(int(fault), json.dumps({"error": f"injected {fault}"}).encode())
                elif fault == "malformed":
                    return self._send(200, b"<html>upstream proxy error", "text/html")
                elif fault == "empty":
                    return self._send(200, b"{}")
                elif fault == "dirty":  # the right translation with a character no title holds, or the key
                    if q not in owner.table:
                        return self._send(400, json.dumps({"error": f"unknown sentence {q!r}"}).encode())
                    with owner._lock:
                        extra = DIRTY[owner._dirty % len(DIRTY)]
                        owner._dirty += 1
                    extra = owner.api_key if extra == "KEY" else extra
                    text = owner.table[q]
                    return self._send(200, json.dumps({"translatedText": text[:2] + extra + text[2:]}).encode())
                elif fault == "echo_key":
                    return self._send(500, json.dumps({"error": f"quota exceeded for key {fields.get('api_key')}"}).encode())
                if q not in owner.table:
                    return self._send(400, json.dumps({"error": f"unknown sentence {q!r}"}).encode())
                self._send(200, json.dumps({"translatedText": owner.table[q]}).encode())

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def _fault_for(self, q: str) -> str | None:
        with self._lock:
            self.requests.append(q)
            attempt = self._attempts.get(q, 0)
            self._attempts[q] = attempt + 1
            if self.fail_all:
                return self.fail_all
            if not self.faults or attempt > 0:
                return None
            index = len(self._attempts) - 1
            if index % self.fault_every:
                return None
            fault = self.faults[(index // self.fault_every) % len(self.faults)]
            self.faults_sent.append(fault)
            return fault

    def __enter__(self) -> "LibreServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
