"""Argilla's own progress bar follows the project's bars (tests/test_progress_bars.py): the SDK's "Sending
records..." tqdm bar passes no `disable`, so `annotation push` gives it `disable=None` (annotation/server.py
`sdk_bars_on_a_terminal_only`): drawn on a terminal, off when stderr is a log or a pipe, where it would be a
carriage-return update per batch (issue 23). Pushed for real to the session's local Argilla stack."""

from __future__ import annotations

import io
import sys

import pytest

from annotation.cli import main
from tests.annotation.conftest import write_params, write_tiny_testset

pytestmark = [pytest.mark.server]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_sdk_bar_is_drawn_on_a_terminal_and_never_written_into_a_log(argilla_env, tmp_path, monkeypatch):
    write_tiny_testset(tmp_path / "data")
    for stream, drawn in ((io.StringIO(), False), (Terminal(), True)):
        # a workspace of its own each time, so the records are new and sent in batches of 2 (3 bar updates)
        params = write_params(tmp_path / f"params-{drawn}.yaml", f"sdk-bar-{str(drawn).lower()}", batch_size=2)
        monkeypatch.setattr(sys, "stderr", stream)
        rc = main(["--params", str(params), "push", "translations", "--data", str(tmp_path / "data"), "--lang", "pt"])
        monkeypatch.setattr(sys, "stderr", sys.__stderr__)
        written = stream.getvalue()
        assert rc == 0, written
        assert ("Sending records..." in written) is drawn, written
        assert ("\r" in written) is drawn, written
