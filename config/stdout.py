"""A closed stdout (``python -m eval run ... | head -1``) changes neither what a command writes nor its verdict.

Python ignores SIGPIPE, so once the reader has gone every later ``print`` raises BrokenPipeError: ``eval run``
stopped before writing --out, and ``releases verify | head -0`` called a good release broken. Inside
``surviving_closed_stdout()`` the first BrokenPipeError on stdout points file descriptor 1 at /dev/null: output
stops, the work goes on, and the exit status is the command's own (0, or its real verdict).
"""

from __future__ import annotations

import contextlib
import os
import sys


class _Surviving:
    """``stream`` whose write and flush, once the reader has gone, write nowhere instead of raising."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self.closed_by_reader = False

    def _gone(self) -> None:
        self.closed_by_reader = True
        try:  # the buffered rest, and the interpreter's flush at exit, go to /dev/null without an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): drop writes below
            pass

    def write(self, text: str) -> int:
        if not self.closed_by_reader:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def surviving_closed_stdout():
    """Run the body with a stdout that a closed pipe cannot break; the previous stdout is put back after."""
    before = sys.stdout
    sys.stdout = _Surviving(before)
    try:
        yield sys.stdout
    finally:
        try:
            sys.stdout.flush()
        finally:
            sys.stdout = before
