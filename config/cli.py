"""The one style of the four command lines (``python -m builder | annotation | releases | eval``).

- ``--params FILE`` goes on every subcommand that reads params.yaml (``params_option``), and, for builder and
  annotation, also before the subcommand, where those two always took it; a subcommand that reads no params
  refuses it.
- Each subcommand names its function with ``set_defaults(func=...)``.
- ``run_command`` is the tail every command line ends in: the package's own errors are one ``error:`` line and
  exit status 2 (``USER_MISTAKE``), an OSError (a path that is a file, no permission, a full disk) one ``error:``
  line naming the path and status 2, Ctrl-C one line saying what was kept and status 130 (``INTERRUPTED``);
  never a traceback. A reader that closes stdout early (``| head -1``) changes neither what is written nor the
  status (``config.stdout``).

Imports nothing of builder, annotation, releases or eval: each passes its error classes in.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from config.secrets import scrub
from config.stdout import surviving_closed_stdout

USER_MISTAKE = 2
INTERRUPTED = 130


def installed_command(package: str) -> bool:
    """Whether this process is the installed command ``gjt-<package>`` (pyproject.toml's [project.scripts]): its
    wrapper script is ``sys.argv[0]`` from the start (``.exe`` on Windows, which the wrapper strips only later)."""
    command = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return command.removesuffix(".exe") == f"gjt-{package}"


def program(package: str) -> str:
    """The command a usage line names: ``gjt-<package>`` when run as that installed command, else
    ``python -m <package>``, as a checkout runs it."""
    return f"gjt-{package}" if installed_command(package) else f"python -m {package}"


def starting(package: str, module_name: str) -> None:
    """Called first thing by each package's ``__main__`` with its ``__name__``: when this process is that command
    line, run as ``python -m <package>`` (``__name__`` is ``"__main__"``) or as the installed ``gjt-<package>``
    (whose wrapper script imports ``<package>.__main__`` and then calls its entry point, so ``__name__`` is the
    module's own), a Ctrl-C in the imports that follow is one line (``quiet_interrupt_at_start``). A test or a
    module importing ``__main__`` keeps Python's handler."""
    if module_name == "__main__" or installed_command(package):
        quiet_interrupt_at_start()


def params_option(parser: argparse.ArgumentParser, default: str | None = "params.yaml", *,
                  before_subcommand: bool = False, help: str | None = None) -> None:
    """Add ``--params`` to ``parser``. On a subcommand of a command line that also takes it before the subcommand
    (``before_subcommand``), the default is left to the top-level option, so ``--params`` is read in either place
    (the subcommand's wins when both are given)."""
    parser.add_argument("--params", default=argparse.SUPPRESS if before_subcommand else default, metavar="FILE",
                        help=help or "params file (default: params.yaml)")


def quiet_interrupt_at_start() -> None:
    """Ctrl-C while a command line starts (its imports: polars, numpy, a model library; parsing the arguments),
    before ``run_command`` takes over, ends it with one line and status 130, as Ctrl-C during the work does; Python's
    own handler printed a KeyboardInterrupt traceback from inside whichever import it hit. Nothing is written
    before the work starts, so the process ends at once (``os._exit``: an exception raised in an import's
    callback could be swallowed, and the command go on). Called first thing by each ``__main__``; ``run_command``
    puts its own handler in place for the work and this one back after it."""
    import os
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def on_interrupt(signum, frame):
        os.write(2, b"interrupted while starting; nothing was written\n")
        os._exit(INTERRUPTED)

    signal.signal(signal.SIGINT, on_interrupt)


@contextlib.contextmanager
def remembered_interrupt() -> Iterator[list[int]]:
    """Ctrl-C raises KeyboardInterrupt as Python's own handler does, and is remembered too: one that lands in a
    callback Python runs for itself (an import's module-lock callback, a finaliser) is printed as "Exception
    ignored" and swallowed, and the command would go on and exit 0 as if never interrupted. The caller checks the
    list when the work returns. Only in the main thread, where signal handlers run."""
    import signal
    import threading

    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def on_interrupt(signum, frame):
        caught.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield caught
    finally:
        signal.signal(signal.SIGINT, previous)


def run_command(
    work: Callable[[], int | None],
    *,
    errors: tuple[type[BaseException], ...],
    interrupted: str,
    paths: str = "",
    more: Mapping[type[BaseException], Callable[[BaseException], str]] | None = None,
) -> int:
    """Run ``work`` (a subcommand; its return value, default 0, is the exit status) and turn what it raises into
    one line on stderr and the exit status.

    ``errors``: the package's error classes, shown as ``error: <message>`` (secrets scrubbed). ``more``: further
    exception classes and the message (after ``error: ``) each gets, e.g. eval's corrupt embedding cache.
    OSError: ``error: <file>: <reason>; check the paths given<paths> and the free space``. ``interrupted``: the
    line printed on Ctrl-C (what was kept)."""
    more = dict(more or {})
    try:
        with surviving_closed_stdout(), remembered_interrupt() as caught:
            status = work()
        if caught:
            raise KeyboardInterrupt
        return status or 0
    except KeyboardInterrupt:
        print(interrupted, file=sys.stderr)
        return INTERRUPTED
    except (*errors, *more, OSError) as exc:
        from config.files import OutputPathError  # here: --help and a clean run need not import it

        if isinstance(exc, errors):
            message = scrub(exc)
        elif isinstance(exc, OutputPathError):  # refused before any write, its fix in its own words
            message = scrub(exc)
        else:
            explain = next((how for kind, how in more.items() if isinstance(exc, kind)), None)
            if explain is not None:
                message = explain(exc)
            else:  # an OSError: a path that is a file, no permission, a full disk: the user's to fix
                where = f"{exc.filename}: " if exc.filename else ""
                message = (f"{scrub(where)}{scrub(exc.strerror or exc)}; check the paths given{paths} "
                           "and the free space")
        print(f"error: {message}", file=sys.stderr)
        return USER_MISTAKE
