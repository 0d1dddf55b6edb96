"""``python -m annotation serve``: the local Argilla stack of the tests, in the foreground, to try annotation.

redis-server, osmem-server (in-memory search) and argilla-server start on 127.0.0.1 with a fresh
temporary home, a random owner password and API key; Ctrl-C (SIGINT) or SIGTERM stops all three by PID
and removes the home. Everything lives only as long as the server: pull before stopping it.
"""

from __future__ import annotations

import secrets
import shutil
import signal
import socket
import tempfile
import time
from pathlib import Path

from annotation import AnnotationError
from annotation.server import KEY_VAR, URL_VAR
from annotation.testing.stack import ArgillaStack, StackError

DEFAULT_PORT = 6900  # Argilla's usual port
PROGRAMS = {"redis": "redis-server", "osmem": "osmem-server", "argilla": "argilla-server"}


class Stopped(Exception):
    """SIGINT or SIGTERM arrived."""


def _stop_on_signal(signum, frame):
    raise Stopped(signal.Signals(signum).name)


def check_port_free(port: int) -> None:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: a port in TIME_WAIT is free
        try:
            s.bind(("127.0.0.1", port))
        except OSError as exc:
            raise AnnotationError(f"port {port} on 127.0.0.1 is taken ({exc.strerror}); stop what uses it or pass --port N") from None


def serve(port: int = DEFAULT_PORT, ready_timeout: float = 180.0) -> None:
    """Run the stack until SIGINT/SIGTERM; print the URL, the owner's sign-in and the two exports."""
    check_port_free(port)
    home = Path(tempfile.mkdtemp(prefix="argilla-serve-"))
    # Random credentials: a well-known default password would open the server to every local user.
    stack = ArgillaStack(home, argilla_port=port, owner_password=secrets.token_urlsafe(9),
                         owner_api_key=secrets.token_urlsafe(24))
    previous = {sig: signal.signal(sig, _stop_on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print("starting redis-server, osmem-server and argilla-server on 127.0.0.1 ...", flush=True)
        started = time.monotonic()
        stack.start(ready_timeout)  # stops whatever it started if it fails or is interrupted
        print(f"Argilla is running at {stack.api_url}\n"
              f"  started in {time.monotonic() - started:.1f} s\n"
              f"  sign in as user {stack.owner_username}, password {stack.owner_password} (owner)\n"
              f"  for push and pull, in another terminal:\n"
              f"    export {URL_VAR}={stack.api_url} {KEY_VAR}={stack.owner_api_key}\n"
              f"  processes: " + ", ".join(f"{PROGRAMS[name]} {pid}" for name, pid in stack.pids().items()) + "\n"
              f"  datasets and answers live only while this runs: pull before stopping. Ctrl-C stops everything.",
              flush=True)
        while True:
            stack.check_running()
            time.sleep(1.0)
    except Stopped as why:
        print(f"{why}: stopping", flush=True)
    except StackError as exc:
        raise AnnotationError(f"local Argilla stack: {exc}") from None
    finally:
        # A second Ctrl-C must not leave half the stack behind.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        names = list(reversed(stack.pids()))  # the order stop() stops them in
        stack.stop()
        shutil.rmtree(home, ignore_errors=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if names:
            print(f"stopped {', '.join(PROGRAMS[name] for name in names)}", flush=True)
