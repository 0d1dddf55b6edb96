"""config.section: typed sections of params.yaml, errors that name the key."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from config import ConfigError, read_params, section


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


def test_read_params_names_a_missing_or_broken_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        read_params(tmp_path / "none.yaml")
    assert read_params(tmp_path / "none.yaml", required=False) == {}
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

    return [load_yaml, _load_yaml]  # params.yaml's, and the packs' (languages does not import config)


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
