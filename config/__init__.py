"""params.yaml, read in one place.

Each package declares its sections of params.yaml as frozen dataclasses, with the defaults only there
(``builder.params``, ``releases.params``, ``eval.params``, ``annotation.params``), and reads them with
:func:`section`. A key the dataclass does not declare, a value of the wrong type or a value its
``__post_init__`` refuses stops the run before any work, with the file and the dotted key in the message.

Imports nothing of builder, annotation, releases or eval: every package may import it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


class ConfigError(ValueError):
    """params.yaml is missing, not YAML, or holds a key or value the toolkit refuses; the message names it."""


def params_path(path: str | Path | None = None) -> Path:
    """The params file given, else ./params.yaml, else the repository's."""
    if path is not None:
        return Path(path)
    here = Path("params.yaml")
    return here if here.is_file() else REPO_ROOT / "params.yaml"


# Caps on what a YAML file may make (params.yaml is 5 KB, a pack 8 KB, each a few levels deep with no alias):
# a "billion laughs" file (aliases of aliases) or one nested thousands deep is refused from its event stream,
# before anything is built of it, in milliseconds and with one short message naming the line.
YAML_MAX_BYTES = 1 << 20
YAML_MAX_DEPTH = 64
YAML_MAX_NODES = 100_000  # after expanding every alias


def _check_yaml_events(text: str, loader) -> None:
    import yaml

    def refuse(problem: str, mark) -> None:
        exc = yaml.MarkedYAMLError(problem=f"{problem}; refusing the file", problem_mark=mark)
        exc.refused = True
        raise exc

    if len(text) > YAML_MAX_BYTES:
        refuse(f"{len(text)} characters, over the {YAML_MAX_BYTES >> 20} MiB a settings file may hold", None)
    sizes: dict[str, int] = {}  # anchor -> nodes in its expansion
    stack: list[list] = [[0, None]]  # open collections: [nodes so far, anchor]
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) > YAML_MAX_DEPTH:
                refuse(f"nested more than {YAML_MAX_DEPTH} levels deep", event.start_mark)
            stack.append([1, event.anchor])
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            count, anchor = stack.pop()
        elif isinstance(event, yaml.ScalarEvent):
            count, anchor = 1, event.anchor
        elif isinstance(event, yaml.AliasEvent):
            count, anchor = sizes.get(event.anchor, 1), None
        else:
            continue
        if anchor is not None:
            sizes[anchor] = count
        stack[-1][0] += count
        if sum(c for c, _ in stack) > YAML_MAX_NODES:
            refuse(f"expands to more than {YAML_MAX_NODES} values (aliases of aliases?)", event.start_mark)


def yaml_error_where(exc) -> tuple[str, str]:
    """(":<line>" or "", the problem in one line) of a YAML error, for the error lines of every file read here."""
    mark = getattr(exc, "problem_mark", None)
    return (f":{mark.line + 1}" if mark is not None else "",
            getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0])


def load_yaml(text: str):
    """``yaml.safe_load`` through libyaml when PyYAML has it (params.yaml and a language pack took 40 ms of a 1 s
    rebuild in pure Python; the same constructors make the same values). A file libyaml refuses is read again
    by the pure-Python parser, so an error names the line and the problem exactly as it always did."""
    import yaml

    fast = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_yaml_events(text, fast)
    except yaml.YAMLError as exc:
        if getattr(exc, "refused", False):
            raise
        _check_yaml_events(text, yaml.SafeLoader)  # the pure-Python parser's words for a broken file
        raise
    try:
        return yaml.load(text, Loader=fast)
    except yaml.YAMLError:
        return yaml.safe_load(text)


def read_params(path: str | Path | None = None, *, required: bool = True) -> dict:
    """The whole params file as a mapping of sections; a missing file is an error unless ``required=False``
    (then every section takes its defaults)."""
    import yaml

    p = params_path(path)
    if not p.is_file():
        if not required:
            return {}
        raise ConfigError(f"{p}: params file not found; run from the repository root or pass --params FILE")
    try:
        data = load_yaml(p.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start:exc.start + 1]!r}); "
                          "save the file as UTF-8") from None
    except yaml.YAMLError as exc:
        line, problem = yaml_error_where(exc)
        raise ConfigError(f"{p}{line}: not valid YAML ({problem}); fix the file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of sections (source, build, release, eval, ...), "
                          f"found {type(data).__name__}")
    return data


_T = typing.TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """The top-level keys every stage shares: the languages built, released and scored, and extra folders of
    language packs (searched before $GJT_LANGUAGE_PACKS and languages/packs)."""

    languages: tuple[str, ...] = ()
    language_packs: tuple[str, ...] = ()


def pipeline(params: Mapping, *, where: str | Path = "params.yaml") -> Pipeline:
    """The top-level ``languages`` and ``language_packs`` of ``params`` (absent or null: none)."""
    top = {f.name: params[f.name] for f in dataclasses.fields(Pipeline)
           if isinstance(params, Mapping) and params.get(f.name) is not None}
    return _build(Pipeline, top, "", str(where))


def section(cls: type[_T], params: Mapping, name: str, *, where: str | Path = "params.yaml") -> _T:
    """The ``name`` section of ``params`` (dotted for nested sections) as a ``cls``; absent keys take the
    dataclass defaults. Every error names ``where`` and the dotted key."""
    value: object = params
    for part in name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return _build(cls, value if value is not None else {}, name, str(where))


def _fail(where: str, key: str, value, expected: str) -> typing.NoReturn:
    shown = repr(value)
    shown = shown if len(shown) <= 200 else shown[:200] + "…"  # one short line, whatever the value holds
    raise ConfigError(f"{where}: {key} is {shown}; expected {expected}")


def _build(cls, value, key: str, where: str):
    if not isinstance(value, Mapping):
        _fail(where, key, value, "a mapping")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(_join(key, k) for k in unknown)}; "
                          f"known: {', '.join(sorted(fields))}")
    kwargs = {k: _convert(hints[k], v, _join(key, k), where) for k, v in value.items()}
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:  # the section's own checks (__post_init__) name their key
        raise ConfigError(f"{where}: {exc}") from None


def _join(key: str, name) -> str:
    return f"{key}.{name}" if key else str(name)


def _convert(hint, value, key: str, where: str):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        errors = []
        for option in options:
            try:
                return _convert(option, value, key, where)
            except ConfigError as exc:
                errors.append(exc)
        if len(options) == 1:
            raise errors[0]
        _fail(where, key, value, " or ".join(_describe(a) for a in args))
    if hint is typing.Any:
        return value
    if origin is typing.Literal:
        if value not in args:
            _fail(where, key, value, "one of " + ", ".join(map(str, args)))
        return value
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, key, where)
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            _fail(where, key, value, f"a list ({_describe(hint)})")
        item = args[0] if args else typing.Any
        items = [_convert(item, v, f"{key}[{i}]", where) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            _fail(where, key, value, "a mapping")
        item = args[1] if len(args) == 2 else typing.Any
        return {k: _convert(item, v, f"{key}.{k}", where) for k, v in value.items()}
    if hint is bool:
        if not isinstance(value, bool):
            _fail(where, key, value, "true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(where, key, value, "an integer")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(where, key, value, "a number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            _fail(where, key, value, "a string")
        return value
    return value


def _describe(hint) -> str:
    if hint is type(None):
        return "null"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (tuple, list):
        return f"a list of {_describe(args[0]) if args else 'values'}"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(hint, str(hint))
