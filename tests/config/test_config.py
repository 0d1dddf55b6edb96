"""config.section: typed sections of params.yaml, errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import pytest

from config import Check, ConfigError, NonEmptyStr, read_params, read_typed, section


@dataclass(frozen=True)
class Inner:
    depth: int = 10
    models: tuple[str, ...] = ("a",)


@dataclass(frozen=True)
class Outer:
    rate: float = 0.5
    name: str | None = None
    ks: tuple[int, ...] = (1, 5)
    flag: bool = True
    inner: Inner = field(default_factory=Inner)

    def __post_init__(self):
        if not 0 < self.rate < 1:
            raise ValueError(f"outer.rate must be in (0, 1), got {self.rate}")


def test_defaults_when_the_section_is_absent():
    assert section(Outer, {}, "outer") == Outer()


def test_values_are_converted_by_their_declared_type():
    got = section(Outer, {"outer": {"rate": 0.25, "ks": [1, 3], "inner": {"models": ["x", "y"]}}}, "outer")
    assert got.ks == (1, 3) and got.inner == Inner(models=("x", "y")) and got.rate == 0.25


@pytest.mark.parametrize("doc, key", [
    ({"rate": "high"}, "outer.rate"),
    ({"ks": [1, "five"]}, "outer.ks[1]"),
    ({"flag": 1}, "outer.flag"),
    ({"inner": {"depth": 2.5}}, "outer.inner.depth"),
    ({"colour": "red"}, "outer.colour"),
    ({"inner": {"colour": "red"}}, "outer.inner.colour"),
    ({"rate": 3}, "outer.rate"),
])
def test_every_error_names_the_file_and_key(doc, key):
    with pytest.raises(ConfigError) as exc:
        section(Outer, {"outer": doc}, "outer", where="p.yaml")
    assert str(exc.value).startswith("p.yaml: ") and key in str(exc.value)


# --- the engine's declarations beyond params.yaml's (the language packs use them) -------------------------------
POSITIVE = Check(lambda n: n > 0, "a positive integer")


def _must_be_lowercase(text: str) -> bool:
    if text != text.lower():
        raise ValueError(f"is {text!r}: write it in lowercase ({text.lower()!r})")
    return True


def _refusal(check, value) -> str:
    with pytest.raises(ValueError) as exc:
        check(value)
    return str(exc.value)


@dataclass(frozen=True)
class Entry:
    name: NonEmptyStr
    count: Annotated[int, POSITIVE]
    pair: tuple[str, Literal["m", "f"]] = ("a", "m")
    words: frozenset[NonEmptyStr] = frozenset()
    table: dict[str, int] = field(default_factory=dict)
    slug: Annotated[str, Check(_must_be_lowercase, "a lowercase string")] | None = None


class PackError(Exception):
    pass


def test_the_engine_builds_every_declared_kind():
    got = read_typed(Entry, {"name": "n", "count": 2, "pair": ["b", "f"], "words": ["x", "y", "x"], "table": {"k": 1},
                             "slug": "ok"}, where="f.yaml")
    assert got == Entry("n", 2, ("b", "f"), frozenset({"x", "y"}), {"k": 1}, "ok")
    assert isinstance(got.pair, tuple) and isinstance(got.words, frozenset)


@pytest.mark.parametrize("doc, key, expected", [
    ({"count": 1}, "name", "is missing; expected " + NonEmptyStr.__metadata__[0].expected),
    ({"name": "", "count": 1}, "name", "is ''; expected " + NonEmptyStr.__metadata__[0].expected),
    ({"name": 3, "count": 1}, "name", "is 3; expected " + NonEmptyStr.__metadata__[0].expected),
    ({"name": "n", "count": 0}, "count", "is 0; expected " + POSITIVE.expected),
    ({"name": "n", "count": 1, "pair": ["a"]}, "pair", "is ['a']; expected a list [a string, one of m, f]"),
    ({"name": "n", "count": 1, "pair": ["a", "x"]}, "pair[1]", "is 'x'; expected one of m, f"),
    ({"name": "n", "count": 1, "words": ["a", ""]}, "words[1]", "is ''; expected " + NonEmptyStr.__metadata__[0].expected),
    ({"name": "n", "count": 1, "table": {"k": "one"}}, "table.k", "is 'one'; expected an integer"),
    ({"name": "n", "count": 1, "slug": "Big"}, "slug", _refusal(_must_be_lowercase, "Big")),
    ({"name": "n", "count": 1, "slug": 5}, "slug", "is 5; expected a lowercase string or null"),
])
def test_every_declared_kind_refuses_with_the_key_and_the_callers_error(doc, key, expected):
    with pytest.raises(PackError) as exc:
        read_typed(Entry, {"outer": doc}["outer"], where="pack.yaml", error=PackError)
    assert str(exc.value) == f"pack.yaml: {key} {expected}"


def test_a_mapping_key_of_the_wrong_type_and_junk_keys_are_one_short_line():
    with pytest.raises(ConfigError, match=r"^f.yaml: table has the key 3; expected every key to be a string$"):
        read_typed(Entry, {"name": "n", "count": 1, "table": {3: 1}}, where="f.yaml")
    junk = {"name": "n", "count": 1, **{f"k{i}\n" + "x" * 1000: i for i in range(50)}}
    with pytest.raises(ConfigError) as exc:
        read_typed(Entry, junk, where="f.yaml")
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 600 and "and 45 more" in str(exc.value)
    with pytest.raises(ConfigError, match=r"^f.yaml: the whole file is \[1\]; expected a mapping$"):
        read_typed(Entry, [1], where="f.yaml")


def test_read_params_names_a_missing_or_broken_file(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="not found"):
        read_params(tmp_path / "none.yaml")
    # Not required: only the default params.yaml may be missing (the defaults); a file named must be there
    # (issue 38: eval and annotation ran on the defaults with a mistyped --params).
    with pytest.raises(ConfigError, match="not found"):
        read_params(tmp_path / "none.yaml", required=False)
    monkeypatch.chdir(tmp_path)
    assert read_params("params.yaml", required=False) == {}
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1,\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:2: not valid YAML"):
        read_params(bad)


def test_pipeline_reads_the_top_level_keys_and_names_them():
    from config import Pipeline, pipeline

    assert pipeline({"languages": ["pt", "es"], "language_packs": None, "eval": {}}) == Pipeline(("pt", "es"), ())
    assert pipeline({}) == Pipeline()
    with pytest.raises(ConfigError, match=r"^p.yaml: languages\[1\] is 3; expected a string$"):
        pipeline({"languages": ["pt", 3]}, where="p.yaml")
    with pytest.raises(ConfigError, match=r"^p.yaml: language_packs is 'packs'; expected a list"):
        pipeline({"language_packs": "packs"}, where="p.yaml")


def _loaders():
    from config import load_yaml
    from languages import _load_yaml

    return [load_yaml, _load_yaml]  # params.yaml's, and the packs' (the same reader, reached through languages)


def test_libyaml_reads_every_pack_and_params_yaml_as_the_pure_python_parser_does():
    import yaml

    from config import REPO_ROOT

    files = [REPO_ROOT / "params.yaml", *sorted((REPO_ROOT / "languages" / "packs").glob("*.yaml"))]
    for load in _loaders():
        for path in files:
            text = path.read_text(encoding="utf-8")
            assert load(text) == yaml.safe_load(text), path


@pytest.mark.parametrize("text", ["a: [1,\n", "a: b: c\n", "a:\n\t- x\n"])
def test_a_broken_file_is_described_by_the_pure_python_parser(text):
    # libyaml words its errors otherwise ("mapping values are not allowed in this context"); the messages users
    # see, and the docs quote, are the pure-Python parser's.
    import yaml

    with pytest.raises(yaml.YAMLError) as pure:
        yaml.safe_load(text)
    for load in _loaders():
        with pytest.raises(yaml.YAMLError) as ours:
            load(text)
        assert str(ours.value) == str(pure.value)


# --- hostile YAML: one short error, quickly, never a traceback or gigabytes ------------------------------

LAUGHS = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10))  # 10**10 values once expanded
HOSTILE_YAML = {
    "billion-laughs": (LAUGHS, "expands to more than"),
    "deep-flow": ("a: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested more than"),
    "deep-block": ("".join("  " * i + f"k{i}:\n" for i in range(300)) + "  " * 300 + "x\n", "nested more than"),
    "huge": ("a: [" + ", ".join(["1"] * 600_000) + "]\n", "a settings file may hold"),
}


@pytest.mark.parametrize("name", HOSTILE_YAML)
def test_hostile_yaml_is_refused_by_both_loaders_quickly(name):
    import time

    import yaml

    text, words = HOSTILE_YAML[name]
    for load in _loaders():
        start = time.monotonic()
        with pytest.raises(yaml.YAMLError) as err:
            load(text)
        assert time.monotonic() - start < 5
        assert words in str(err.value) and len(str(err.value)) < 300, str(err.value)[:500]


def _run_builder(*args, env=None):
    import os
    import subprocess
    import sys

    from config import REPO_ROOT

    return subprocess.run([sys.executable, "-m", "builder", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


HOSTILE_FILES = {**{k: (v[0].encode(), v[1]) for k, v in HOSTILE_YAML.items()},
                 "latin-1": ("languages: [pt]\nnotes: 'Ingenieur f\u00fcr B\u00e4ume'\n".encode("latin-1"),
                             "not UTF-8 text")}


@pytest.mark.parametrize("name", HOSTILE_FILES)
def test_a_hostile_params_yaml_is_one_error_line(tmp_path, name):
    import time

    data, words = HOSTILE_FILES[name]
    params = tmp_path / "params.yaml"
    params.write_bytes(data)
    start = time.monotonic()
    done = _run_builder("--params", str(params), "postprocess", "--lang", "pt", "--out", str(tmp_path / "out"))
    assert time.monotonic() - start < 30
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.startswith(f"error: {params}") and words in done.stderr, done.stderr[:500]
    assert len(done.stderr.splitlines()) == 1 and len(done.stderr) < 500
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", HOSTILE_FILES)
def test_a_hostile_language_pack_is_one_error_line(tmp_path, name):
    import languages

    data, words = HOSTILE_FILES[name]
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "zz.yaml").write_bytes(data)
    done = _run_builder("postprocess", "--lang", "zz", "--out", str(tmp_path / "out"), env={languages.PACKS_ENV: str(packs)})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.startswith(f"error: {packs / 'zz.yaml'}") and words in done.stderr, done.stderr[:500]
    assert len(done.stderr.splitlines()) == 1 and len(done.stderr) < 500
    assert not (tmp_path / "out").exists()
