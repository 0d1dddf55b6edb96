"""params.yaml, read in one place, and the one typed reader of the project's YAML.

Each package declares its sections of params.yaml as frozen dataclasses, with the defaults only there
(``builder.params``, ``releases.params``, ``eval.params``, ``annotation.params``), and reads them with
:func:`section`. A key the dataclass does not declare, a value of the wrong type or a value its
``__post_init__`` refuses stops the run before any work, with the file and the dotted key in the message.
The language packs are declared the same way (``languages``) and read by the same engine, :func:`read_typed`.

Imports nothing of builder, annotation, releases or eval: every package may import it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
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


# The top-level keys of a params file: the pipeline's (``Pipeline``) and each package's sections. One not listed
# (a typo such as ``bulid:``) is refused wherever the file is read, as an unknown key inside a section is: its
# settings would otherwise be silently left out.
SECTIONS = ("languages", "language_packs", "source", "build", "esco", "release", "eval", "audit", "annotation")


def check_params_file(path: str | Path) -> Path:
    """``path`` when it is a regular file; one that is missing, a folder or a device (``/dev/zero``) is a
    ConfigError, on every command line alike, never a run on the defaults."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{p}: params file not found; check --params (or run from the repository root)")
    if not p.is_file():
        kind = "a folder" if p.is_dir() else "not a regular file"
        raise ConfigError(f"{p}: --params is {kind}; give a params file (YAML, like the repository's params.yaml)")
    return p


DEFAULT_PARAMS = Path("params.yaml")  # what --params defaults to on every command line


def read_params(path: str | Path | None = None, *, required: bool = True) -> dict:
    """The whole params file as a mapping of sections. With ``required=False`` a missing ``params.yaml`` (the
    default, not given or given as such) means every section takes its defaults; any other file named must be
    there. Something that is there but is no regular file (a folder, a device) is always an error."""
    import yaml

    p = params_path(path)
    if not required and not p.exists() and p in (DEFAULT_PARAMS, REPO_ROOT / DEFAULT_PARAMS):
        return {}
    check_params_file(p)
    try:
        if p.stat().st_size > YAML_MAX_BYTES:  # refused before it is read (a 10 GB file is not read whole)
            raise ConfigError(f"{p}: {p.stat().st_size} bytes, over the {YAML_MAX_BYTES >> 20} MiB a settings file "
                              "may hold; refusing the file")
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
    unknown = sorted((k for k in data if k not in SECTIONS), key=str)
    if unknown:
        raise ConfigError(f"{p}: unknown top-level key(s) {', '.join(_join('', k) for k in unknown[:5])}; "
                          f"known: {', '.join(SECTIONS)}")
    return data


def url_problem(text: object) -> str | None:
    """What makes ``text`` no http(s) URL a request can go to (a port out of range or not a number, a broken IPv6
    address, no host, a space), in a few words; None when it is one. The one check of every URL the toolkit is
    given: params (``source.base_url``, ``build.web.libre_url``), --libre-url, $LIBRE_URL, $ARGILLA_API_URL,
    --base-url. Without it a bad port came out of the HTTP library as a traceback."""
    from urllib.parse import urlsplit

    if not isinstance(text, str):
        return "not a string"
    if not text.isprintable() or any(c.isspace() for c in text):
        return "it holds a space or a control character"
    try:
        parts = urlsplit(text)
        port = parts.port  # parsed on access: "Port out of range 0-65535", "Port could not be cast ..."
    except ValueError as exc:
        return str(exc).replace("0-65535", "1-65535")
    if parts.scheme not in ("http", "https"):
        return "not an http:// or https:// URL"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "port 0 is out of range 1-65535"
    return None


def check_url(text: object, what: str, error: type[Exception] = ConfigError) -> str:
    """``text`` when it is an http(s) URL (``url_problem``), else an ``error`` (the caller's package error; a
    ValueError in a section's ``__post_init__``, which the reader prefixes with the file) naming ``what`` (the
    flag, variable or key it came from). The URL is not repeated: it may hold a password."""
    problem = url_problem(text)
    if problem is not None:
        raise error(f"{what} is not a usable URL ({problem}); expected an http:// or https:// URL such as "
                          "http://localhost:5000")
    return typing.cast(str, text)


_T = typing.TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class Check:
    """A condition on a value beyond its type, declared with the type: ``Annotated[int, Check(lambda n: n >= 0,
    "an integer >= 0")]``. ``test`` gets the value as converted and returns whether it passes (else the error reads
    ``<key> is <value>; expected <expected>``) or raises ValueError, whose text then follows the key
    (``languages.compile_strip`` words its own refusals). ``expected`` also describes the type in every message."""

    test: typing.Callable[[typing.Any], object]
    expected: str


NonEmptyStr = typing.Annotated[str, Check(bool, "a non-empty string")]


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
    return read_typed(Pipeline, top, where=where)


def section(cls: type[_T], params: Mapping, name: str, *, where: str | Path = "params.yaml") -> _T:
    """The ``name`` section of ``params`` (dotted for nested sections) as a ``cls``; absent keys take the
    dataclass defaults. Every error names ``where`` and the dotted key."""
    value: object = params
    for part in name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return read_typed(cls, value if value is not None else {}, where=where, key=name)


def read_typed(cls: type[_T], value, *, where: str | Path, key: str = "", error: type[Exception] = ConfigError) -> _T:
    """``value`` (what a YAML file holds at ``key``; "" for the whole file) checked against the dataclass ``cls``
    and built as one: the one typed reader of the project (params.yaml's sections, the language packs).

    What ``cls`` declares is what the file may hold: its fields are the keys (one it does not declare is refused,
    one without a default must be given), their types the values: ``str``, ``int``, ``float``, ``bool``, a
    ``Literal`` (one of its values), ``X | None`` (null allowed), ``tuple[X, ...]`` / ``list[X]`` /
    ``frozenset[X]`` (a list), ``tuple[X, Y]`` (a list of exactly those), ``dict[K, V]`` (a mapping), a nested
    dataclass (a mapping), ``Annotated[X, Check(...)]`` (a further condition) and ``Any``. Every failure is one
    ``error`` naming ``where`` and the dotted key (``build.web.retries``, ``gender_rules.suffixes[3][1]``), long
    values cut to one short line; the dataclass's own ``__post_init__`` checks name their key themselves."""
    try:
        return _build(cls, value, key, str(where))
    except ConfigError as exc:
        if error is ConfigError:
            raise
        raise error(str(exc)) from None


class _Mismatch(ConfigError):
    """A value not of its declared type (or failing its check) at ``key``: a union or an ``Annotated`` around it
    describes the expected value again in its own words."""

    def __init__(self, message: str, key: str):
        super().__init__(message)
        self.key = key


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"  # one short line, whatever the value holds


def _fail(where: str, key: str, value, expected: str) -> typing.NoReturn:
    raise _Mismatch(f"{where}: {key or 'the whole file'} is {_short(repr(value), 200)}; expected {expected}", key)


@functools.cache
def _hints(cls) -> dict:
    return typing.get_type_hints(cls, include_extras=True)


def _build(cls, value, key: str, where: str):
    if not isinstance(value, Mapping):
        _fail(where, key, value, "a mapping")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(value) - set(fields), key=str)
    if unknown:
        shown = ", ".join(_join(key, k) for k in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ConfigError(f"{where}: unknown key(s) {shown}; known: {', '.join(sorted(fields))}")
    missing = [name for name, f in fields.items() if name not in value
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{where}: {_join(key, missing[0])} is missing; expected {_describe(hints[missing[0]])}")
    kwargs = {k: _convert(hints[k], v, _join(key, k), where) for k, v in value.items()}
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:  # the section's own checks (__post_init__) name their key
        raise ConfigError(f"{where}: {exc}") from None


def _join(key: str, name) -> str:
    text = str(name)
    if len(text) > 80 or not text.isprintable():  # a key of junk still makes one short line
        text = _short(repr(text), 80)
    return f"{key}.{text}" if key else text


def _convert(hint, value, key: str, where: str):
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        try:
            converted = _convert(args[0], value, key, where)
        except _Mismatch as exc:
            if exc.key != key:
                raise
            _fail(where, key, value, _describe(hint))
        for check in hint.__metadata__:
            if not isinstance(check, Check):
                continue
            try:
                passed = check.test(converted)
            except ValueError as exc:
                raise ConfigError(f"{where}: {key} {_short(str(exc), 300)}") from None
            if not passed:
                _fail(where, key, value, check.expected)
        return converted
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inside = []  # failures inside the value: it has the shape of that option, something in it is wrong
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(option, value, key, where)
            except _Mismatch as exc:
                if exc.key != key:
                    inside.append(exc)
        if len(inside) == 1:
            raise inside[0]
        _fail(where, key, value, _describe(hint))
    if hint is typing.Any:
        return value
    if origin is typing.Literal:
        if isinstance(value, (dict, list)) or value not in args:
            _fail(where, key, value, _describe(hint))
        return value
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, key, where)
    if origin in (tuple, list, frozenset):
        if not isinstance(value, (list, tuple)):
            _fail(where, key, value, _describe(hint))
        if origin is tuple and args and args[-1] is not Ellipsis:  # tuple[X, Y]: exactly these
            if len(value) != len(args):
                _fail(where, key, value, _describe(hint))
            return tuple(_convert(a, v, f"{key}[{i}]", where) for i, (a, v) in enumerate(zip(args, value)))
        item = args[0] if args else typing.Any
        return origin(_convert(item, v, f"{key}[{i}]", where) for i, v in enumerate(value))
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            _fail(where, key, value, "a mapping")
        key_hint, item = args if len(args) == 2 else (typing.Any, typing.Any)
        out = {}
        for k, v in value.items():
            try:
                _convert(key_hint, k, _join(key, k), where)
            except _Mismatch:
                raise ConfigError(f"{where}: {key or 'the whole file'} has the key {_short(repr(k), 80)}; "
                                  f"expected every key to be {_describe(key_hint)}") from None
            out[k] = _convert(item, v, _join(key, k), where)
        return out
    if hint is bool:
        if not isinstance(value, bool):
            _fail(where, key, value, "true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(where, key, value, "an integer")
        return value
    if hint is float:
        # .nan and .inf are YAML floats, but no setting means them: a NaN backoff or threshold compares false
        # with everything and would pass every check after it
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            _fail(where, key, value, "a number")
        try:
            number = float(value)
        except OverflowError:  # an integer of hundreds of digits
            number = math.inf
        if not math.isfinite(number):
            _fail(where, key, value, "a finite number")
        return number
    if hint is str:
        if not isinstance(value, str):
            _fail(where, key, value, "a string")
        return value
    return value


def _describe(hint) -> str:
    if hint is type(None):
        return "null"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        checks = [m.expected for m in hint.__metadata__ if isinstance(m, Check)]
        return checks[0] if checks else _describe(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(map(str, args))
    if origin is tuple and args and args[-1] is not Ellipsis:
        if len(set(args)) == 1:
            return f"a list of {len(args)} items ({_describe(args[0])} each)"
        return f"a list [{', '.join(_describe(a) for a in args)}]"
    if origin in (tuple, list, frozenset):
        return f"a list ({_describe(args[0])} each)" if args else "a list"
    if origin is dict or hint is dict or dataclasses.is_dataclass(hint):
        return "a mapping"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(hint, str(hint))
