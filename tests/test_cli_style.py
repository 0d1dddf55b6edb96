"""One style for the four command lines (config/cli.py, docs/architecture.md): every subcommand that reads
params.yaml takes ``--params`` after its name, builder and annotation also before it (as they always did), and a
subcommand that reads no params refuses it.

Whether a subcommand reads params is not taken from its parser: each is run in a folder whose params files are not
YAML. One that reads ``--params FILE`` stops with one ``error:`` line naming FILE; one that reads no params never
names ./params.yaml (it stops for its own reason: no such folder, a taken port). Every subcommand of every parser
is in ``ARGS``, so a new one is checked as soon as it exists.
"""

from __future__ import annotations

import argparse
import socket

import pytest

from annotation.cli import build_parser as annotation_parser, main as annotation_main
from builder.__main__ import build_parser as builder_parser, main as builder_main
from eval.__main__ import build_parser as eval_parser, main as eval_main
from releases.__main__ import build_parser as releases_parser, main as releases_main

CLIS = {
    "builder": (builder_parser, builder_main),
    "annotation": (annotation_parser, annotation_main),
    "releases": (releases_parser, releases_main),
    "eval": (eval_parser, eval_main),
}
# The command lines that took --params before the subcommand, and still do.
BEFORE_SUBCOMMAND = {"builder", "annotation"}
NOT_YAML = "languages: [pt\nrelease: {\n"  # no reader of params.yaml accepts it
TAKEN_PORT = "{taken_port}"  # replaced by a port a socket of the test holds


# Per command line, per subcommand (its words), the fewest arguments that take it to its work. Paths are relative
# to the test's folder, where nothing else exists.
ARGS = {
    "builder": {
        ("source",): [],
        ("translate",): ["--lang", "pt"],
        ("postprocess",): ["--lang", "pt"],
        ("build",): ["--lang", "pt"],
        ("corrections",): ["--lang", "pt"],
        ("esco",): ["--lang", "pt"],
        ("defaults",): [],
    },
    "annotation": {
        ("push", "translations"): ["--data", "data", "--lang", "pt"],
        ("push", "relevance"): ["--data", "data", "--lang", "pt"],
        ("pull",): ["--lang", "pt"],
        ("rule",): ["--data", "data", "--lang", "pt", "--find", "de conta", "--replace", "de contas"],
        ("serve",): ["--port", TAKEN_PORT],
        ("review", "pack"): ["--data", "data", "--lang", "pt", "--out", "pack.jsonl"],
        ("review", "reading"): ["--lang", "pt", "--pack", "pack.jsonl", "--verdicts", "v", "--reader", "r", "--pass",
                                "first", "--readings", "r.jsonl"],
        ("review", "agreement"): ["--lang", "pt", "--readings", "r.jsonl"],
        ("review", "import"): ["--lang", "pt", "--round", "r1", "--readings", "r.jsonl"],
    },
    "releases": {
        ("make",): [],
        ("publish",): [],
        ("verify",): ["no-release"],
        ("checkout",): ["9.9.9", "--no-pull"],
    },
    "eval": {
        ("run",): ["--data", "data", "--out", "out"],
        ("collect",): ["store", "--out", "out"],
        ("compare",): ["results.json"],
        ("audit",): ["--data", "data", "--out", "out"],
        ("report",): ["results.json", "--out", "site"],
        ("models",): [],
    },
}


def subcommands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every leaf subcommand of ``parser`` (``push relevance`` is two words) and its parser."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        return {words: parser}
    found = {}
    for name, sub in actions[0].choices.items():
        found.update(subcommands(sub, (*words, name)))
    return found


def takes_params(parser: argparse.ArgumentParser) -> bool:
    return "--params" in parser._option_string_actions


CASES = [(cli, words) for cli in CLIS for words in ARGS[cli]]


def test_every_subcommand_is_checked():
    assert {cli: set(subcommands(parser())) for cli, (parser, _) in CLIS.items()} == \
        {cli: set(args) for cli, args in ARGS.items()}


@pytest.fixture
def taken_port():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield str(held.getsockname()[1])


def run(cli: str, argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = CLIS[cli][1](argv)
    except SystemExit as stop:  # argparse: a usage error
        code = stop.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("cli, words", CASES, ids=[f"{cli} {' '.join(w)}" for cli, w in CASES])
def test_params_goes_on_every_subcommand_that_reads_it_and_nowhere_else(cli, words, tmp_path, monkeypatch, capsys,
                                                                       taken_port):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARGILLA_API_URL", raising=False)
    (tmp_path / "params.yaml").write_text(NOT_YAML, encoding="utf-8")
    (tmp_path / "mine.yaml").write_text(NOT_YAML, encoding="utf-8")
    args = [taken_port if a == TAKEN_PORT else a for a in ARGS[cli][words]]
    parser = subcommands(CLIS[cli][0]())[words]

    code, err = run(cli, [*words, *args], capsys)
    reads_params = "params.yaml" in err
    # either way it ends as every command does: done, or one error line
    assert (code, err) == (0, "") or (code == 2 and err.startswith("error: ") and err.count("\n") == 1), err
    if not reads_params:
        assert not takes_params(parser), f"{cli} {' '.join(words)} reads no params, yet takes --params"
        code, err = run(cli, [*words, *args, "--params", "mine.yaml"], capsys)
        assert code == 2 and "unrecognized arguments: --params mine.yaml" in err, err
        return
    assert takes_params(parser), f"{cli} {' '.join(words)} reads params.yaml but refuses --params after it"
    code, err = run(cli, [*words, *args, "--params", "mine.yaml"], capsys)
    assert code == 2 and err.startswith("error: mine.yaml") and err.count("\n") == 1, err
    if cli in BEFORE_SUBCOMMAND:
        code, err = run(cli, ["--params", "mine.yaml", *words, *args], capsys)
        assert code == 2 and err.startswith("error: mine.yaml") and err.count("\n") == 1, err
