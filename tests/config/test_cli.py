"""``config.cli.run_command``: the one error tail of the four command lines (docs/failure-behaviour.md)."""

from __future__ import annotations

import os
import signal
import sqlite3

import pytest

from config.cli import INTERRUPTED, USER_MISTAKE, program, run_command


class ToolError(Exception):
    pass


def tail(work, capsys, **kwargs) -> tuple[int, str, str]:
    kwargs = {"errors": (ToolError,), "interrupted": "interrupted: kept what was done", **kwargs}
    code = run_command(work, **kwargs)
    out, err = capsys.readouterr()
    return code, out, err


def raising(exc: BaseException):
    def work():
        print("started")
        raise exc
    return work


def test_done_is_the_commands_own_status(capsys):
    assert tail(lambda: print("done"), capsys) == (0, "done\n", "")
    assert tail(lambda: 3, capsys)[0] == 3


def test_the_packages_errors_are_one_scrubbed_line_and_2(capsys, monkeypatch):
    monkeypatch.setenv("ARGILLA_API_KEY", "sekrit-key-123")
    code, out, err = tail(raising(ToolError("pt.jsonl:2: bad key sekrit-key-123; fix it")), capsys)
    assert (code, out, err) == (USER_MISTAKE, "started\n", "error: pt.jsonl:2: bad key ***; fix it\n")


def test_an_oserror_names_the_path_and_the_flags_to_check(capsys, tmp_path):
    code, _, err = tail(lambda: (tmp_path / "missing" / "x").read_text(), capsys, paths=" (--out, --data)")
    assert code == USER_MISTAKE
    assert err == f"error: {tmp_path / 'missing' / 'x'}: No such file or directory; check the paths given (--out, --data) " \
                  "and the free space\n"


def test_more_handlers_come_before_the_oserror_and_other_errors_are_not_caught(capsys):
    code, _, err = tail(raising(sqlite3.DatabaseError("file is not a database")), capsys,
                        more={sqlite3.DatabaseError: lambda exc: f"the cache is corrupt ({exc}); delete it"})
    assert (code, err) == (USER_MISTAKE, "error: the cache is corrupt (file is not a database); delete it\n")
    with pytest.raises(ZeroDivisionError):  # a bug stays a traceback: nothing hides it behind a user's error
        tail(raising(ZeroDivisionError("bug")), capsys)


@pytest.fixture
def sigint_default():
    """Python's own SIGINT handler for the test, whatever the launch left (a `nohup … &` launch inherits SIGINT
    ignored, and Python then installs no handler: the test sets the disposition it needs, issue 35)."""
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_is_one_line_and_130_also_when_python_swallowed_it(capsys, sigint_default):
    assert tail(raising(KeyboardInterrupt()), capsys)[::2] == (INTERRUPTED, "interrupted: kept what was done\n")

    def swallowing():  # a callback Python runs for itself catches the KeyboardInterrupt: the command goes on
        try:
            os.kill(os.getpid(), signal.SIGINT)  # the handler runs as soon as the call returns
            for _ in range(1000):
                pass
        except KeyboardInterrupt:
            pass
        return 0

    assert tail(swallowing, capsys)[::2] == (INTERRUPTED, "interrupted: kept what was done\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is put back


@pytest.mark.parametrize("argv0, shown", [("/venv/bin/gjt-eval", "gjt-eval"), ("/repo/eval/__main__.py", "python -m eval"),
                                          ("-m", "python -m eval"), ("/venv/bin/gjt-builder", "python -m eval")])
def test_the_usage_line_names_the_command_that_ran(monkeypatch, argv0, shown):
    """An installed gjt-eval says so in its usage line; python -m eval (argv[0] is the module's path, or -m while
    it starts) and any other command keep the checkout's spelling."""
    monkeypatch.setattr("sys.argv", [argv0, "--help"])
    assert program("eval") == shown
