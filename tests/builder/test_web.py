"""The deep-translator path (LibreTranslator as the client) against a LibreTranslate-compatible server on
127.0.0.1 that injects faults; a killed run resumes from the cache."""

import copy
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

from builder.build import build_language
from builder.errors import TranslationError
from builder.params import load_params, templates_for
from builder.source import load_source
from builder.translate import fill_template
from builder.translators import BergamotTranslator
from tests.builder.libre_server import FAULTS, LibreServer

REPO = Path(__file__).resolve().parents[2]
QUERIES = ["Lawyer", "Nurse", "Software Engineer", "Waiter", "Data Analyst"]
CORPUS = ["Attorney", "Paralegal", "Legal Assistant", "Registered Nurse", "Nursing Assistant", "Developer",
          "Programmer", "Web Developer", "Server", "Bartender", "Business Analyst", "Data Scientist", "Judge",
          "Teacher", "Baker"]
QRELS = [("Lawyer", "Attorney"), ("Lawyer", "Paralegal"), ("Nurse", "Registered_Nurse"), ("Nurse", "Nursing_Assistant"),
         ("Software_Engineer", "Developer"), ("Software_Engineer", "Programmer"), ("Waiter", "Server"),
         ("Waiter", "Bartender"), ("Data_Analyst", "Business_Analyst"), ("Data_Analyst", "Data_Scientist")]

pytestmark = pytest.mark.server


def sid(title: str) -> str:
    return title.replace(" ", "_")


@pytest.fixture(scope="module")
def source_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("en")
    (d / "queries.tsv").write_text("".join(f"{sid(t)}\t{t}\n" for t in QUERIES))
    (d / "corpus_documents.tsv").write_text("".join(f"{sid(t)}\t{t}\n" for t in CORPUS))
    (d / "annotations.tsv").write_text("".join(f"{q}\t0\t{c}\t1\n" for q, c in QRELS))
    return d


@pytest.fixture(scope="module")
def params():
    p = copy.deepcopy(load_params())
    p["build"]["web"] = {"concurrency": 3, "retries": 4, "timeout_s": 0.5, "backoff_s": 0.01}
    p["build"]["batch_size"]["libre"] = 4
    return p


@pytest.fixture(scope="module")
def table(source_dir, params) -> dict[str, str]:
    """The real offline model's answer to every sentence the build will send."""
    templates = templates_for(params["build"], "pt", "libre")
    titles = load_source(source_dir).titles().values()
    sentences = [fill_template(templates[g], t, bool(templates.get("lowercase"))) for t in titles for g in ("masculine", "feminine")]
    model = BergamotTranslator("pt")
    return dict(zip(sentences, model.translate(sentences)))


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("LIBRE_API_KEY", "test-key")


def read_set(root: Path) -> tuple:
    folder = root / "pt"
    return (pl.read_parquet(folder / "queries.parquet"), pl.read_parquet(folder / "corpus.parquet"),
            (folder / "qrels.tsv").read_text())


def test_faults_are_retried_and_the_output_equals_a_fault_free_run(source_dir, params, table, tmp_path, key):
    # One server (one URL, which is part of the provenance), fault-free first, then injecting faults.
    with LibreServer(table) as server:
        build_language(source_dir, "pt", "libre", tmp_path / "clean", cache=tmp_path / "c1", params=params,
                       libre_url=server.url, progress=False, route="mt")
        assert len(server.requests) == len(table)
        server.requests.clear()
        server.faults, server.fault_every, server._attempts = FAULTS, 2, {}
        stats = build_language(source_dir, "pt", "libre", tmp_path / "faulty", cache=tmp_path / "c2", params=params,
                               libre_url=server.url, progress=False, route="mt")
    assert set(server.faults_sent) == set(FAULTS)
    assert len(server.requests) == len(table) + len(server.faults_sent)
    clean_set, faulty_set = read_set(tmp_path / "clean"), read_set(tmp_path / "faulty")
    assert clean_set[0].equals(faulty_set[0]) and clean_set[1].equals(faulty_set[1]) and clean_set[2] == faulty_set[2]
    assert stats["translator"] == "libre" and stats["translator_version"].startswith("deep-translator-")
    assert set(clean_set[1]["provenance"]) == {f"libre:{stats['translator_version']}"}


def test_a_rebuild_from_the_cache_sends_nothing(source_dir, params, table, tmp_path, key):
    with LibreServer(table) as server:
        build_language(source_dir, "pt", "libre", tmp_path / "a", cache=tmp_path / "c", params=params, libre_url=server.url, progress=False, route="mt")
        first = len(server.requests)
        build_language(source_dir, "pt", "libre", tmp_path / "b", cache=tmp_path / "c", params=params, libre_url=server.url, progress=False, route="mt")
    assert first == len(table) and len(server.requests) == first


def test_missing_key_and_refused_key(source_dir, params, table, tmp_path, monkeypatch):
    monkeypatch.delenv("LIBRE_API_KEY", raising=False)
    with pytest.raises(TranslationError, match="API key missing; set the environment variable LIBRE_API_KEY"):
        build_language(source_dir, "pt", "libre", tmp_path, cache=tmp_path / "c", params=params, libre_url="http://127.0.0.1:9/", progress=False, route="mt")
    monkeypatch.setenv("LIBRE_API_KEY", "wrong-key")
    with LibreServer(table) as server, pytest.raises(TranslationError, match="refused the API key"):
        build_language(source_dir, "pt", "libre", tmp_path, cache=tmp_path / "c", params=params, libre_url=server.url, progress=False, route="mt")


def test_a_service_that_keeps_failing_gives_a_clear_error(source_dir, params, table, tmp_path, key):
    with LibreServer(table) as server, pytest.raises(TranslationError, match=r"failed after 5 attempts \(last: .*TOO_MANY_REQUESTS.*finished sentences are cached"):
        server.fail_all = "429"
        build_language(source_dir, "pt", "libre", tmp_path, cache=tmp_path / "c", params=params, libre_url=server.url, progress=False, route="mt")
    # A request the service rejects as such (400) is not retried.
    with LibreServer({}) as server, pytest.raises(TranslationError, match=r"refused the request for '(?:He|She) is: [^']*': ERR_BAD_REQUEST"):
        build_language(source_dir, "pt", "libre", tmp_path, cache=tmp_path / "c", params=params, libre_url=server.url, progress=False, route="mt")


def test_a_killed_run_resumes_without_translating_anything_twice(source_dir, params, table, tmp_path, key):
    slow = copy.deepcopy(params)
    slow["build"]["web"]["concurrency"] = 1
    slow["build"]["web"]["timeout_s"] = 5
    slow["build"]["batch_size"]["libre"] = 2
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump(slow, allow_unicode=True))
    cache_db = tmp_path / "cache" / "translations.sqlite"

    def cached() -> set[str]:
        if not cache_db.exists():
            return set()
        try:
            with sqlite3.connect(cache_db) as db:
                return {s for (s,) in db.execute("SELECT sentence FROM translations")}
        except sqlite3.OperationalError:  # the run has not created its table yet
            return set()

    with LibreServer(table) as server:
        server.delay_s = 0.05
        cmd = [sys.executable, "-m", "builder", "--params", str(params_file), "build", "--source", str(source_dir),
               "--lang", "pt", "--translator", "libre", "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"),
               "--libre-url", server.url, "--quiet"]
        proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, "LIBRE_API_KEY": "test-key"},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while len(cached()) < 10 and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
        done_before = cached()
        assert 10 <= len(done_before) < len(table)
        server.requests.clear()
        rerun = subprocess.run(cmd, cwd=REPO, env={**os.environ, "LIBRE_API_KEY": "test-key"}, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stderr
        asked_again = set(server.requests)
        server.delay_s = 0
        build_language(source_dir, "pt", "libre", tmp_path / "clean", cache=tmp_path / "c2", params=params, libre_url=server.url, progress=False, route="mt")
    assert not asked_again & done_before
    assert asked_again | done_before == set(table)
    resumed, fresh = read_set(tmp_path / "out"), read_set(tmp_path / "clean")
    assert resumed[0].equals(fresh[0]) and resumed[1].equals(fresh[1]) and resumed[2] == fresh[2]


@pytest.mark.parametrize("lang", ["pt", "es", "fr", "de", "it"])
def test_google_deepl_and_mymemory_are_deep_translator_clients_configured_from_the_environment(lang, monkeypatch):
    # Constructing a client sends nothing: these are the production clients, checked without the network.
    import deep_translator

    from builder.translators import WebSettings, WebTranslator

    google = WebTranslator("google", lang, WebSettings())._new_client()
    assert isinstance(google, deep_translator.GoogleTranslator) and (google.source, google.target) == ("en", lang)
    monkeypatch.setenv("MYMEMORY_EMAIL", "maintainer@example.org")
    from languages import load

    mymemory = WebTranslator("mymemory", lang, WebSettings(), load(lang).web_code("mymemory"))._new_client()
    assert isinstance(mymemory, deep_translator.MyMemoryTranslator) and mymemory.email == "maintainer@example.org"
    assert mymemory.source == "en-GB" and mymemory.target.startswith(lang + "-")
    monkeypatch.setenv("DEEPL_API_KEY", "secret:fx")
    free = WebTranslator("deepl", lang, WebSettings())
    client = free._new_client()
    assert isinstance(client, deep_translator.DeeplTranslator) and client.api_key == "secret:fx"
    assert "api-free.deepl.com" in client._base_url and "secret" not in free.version
    monkeypatch.setenv("DEEPL_API_KEY", "secret")
    assert "//api.deepl.com" in WebTranslator("deepl", lang, WebSettings())._new_client()._base_url


def test_missing_deepl_key_and_unsupported_language_are_clear_cli_errors(source_dir, tmp_path, monkeypatch, capsys):
    from builder.__main__ import main

    monkeypatch.delenv("DEEPL_API_KEY", raising=False)
    argv = ["translate", "--source", str(source_dir), "--out", str(tmp_path), "--cache", str(tmp_path / "c"), "--quiet"]
    assert main([*argv, "--lang", "pt", "--translator", "deepl"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: deepl: API key missing; set the environment variable DEEPL_API_KEY") and "Traceback" not in err
    assert main([*argv, "--lang", "xx", "--translator", "google"]) == 2
    assert capsys.readouterr().err.startswith("error: no language pack xx.yaml in ")
    # A pack for a language the service does not know: refused before anything is sent.
    packs = tmp_path / "packs"
    packs.mkdir()
    pack = yaml.safe_load((REPO / "languages" / "packs" / "fr.yaml").read_text(encoding="utf-8"))
    (packs / "xx.yaml").write_text(yaml.safe_dump({**pack, "code": "xx"}, allow_unicode=True), encoding="utf-8")
    monkeypatch.setenv("GJT_LANGUAGE_PACKS", str(packs))
    assert main([*argv, "--lang", "xx", "--translator", "google"]) == 2
    assert "error: google: language pair en->xx not supported" in capsys.readouterr().err
    assert not (tmp_path / "pt").exists()


def test_answers_with_control_or_bidi_characters_are_refused_and_retried(source_dir, params, table, tmp_path, key):
    """NUL, U+2028 and U+202E once reached item ids and 48 qrels.tsv lines: such an answer (or one quoting the
    key) is malformed, retried, and never stored; the set equals that of clean answers."""
    from tests.builder.libre_server import DIRTY

    with LibreServer(table) as server:
        build_language(source_dir, "pt", "libre", tmp_path / "clean", cache=tmp_path / "c1", params=params,
                       libre_url=server.url, progress=False, route="mt")
        server.requests.clear()
        server.faults, server.fault_every, server._attempts = ("dirty",), 1, {}
        build_language(source_dir, "pt", "libre", tmp_path / "dirty", cache=tmp_path / "c2", params=params,
                       libre_url=server.url, progress=False, route="mt")
    assert len(server.faults_sent) == len(table) >= len(DIRTY)  # every sentence's first answer was dirty
    assert len(server.requests) == 2 * len(table)
    clean, dirty = read_set(tmp_path / "clean"), read_set(tmp_path / "dirty")
    assert clean[0].equals(dirty[0]) and clean[1].equals(dirty[1]) and clean[2] == dirty[2]
    stored = b"".join(p.read_bytes() for p in (tmp_path / "c2").rglob("*") if p.is_file())
    assert b"test-key" not in stored and "\u202e".encode() not in stored and "\u2028".encode() not in stored


def test_a_service_answering_only_dirty_text_gives_a_clear_error_without_the_key(source_dir, params, table, tmp_path,
                                                                                 key):
    with LibreServer(table) as server, pytest.raises(TranslationError, match=r"failed after 5 attempts \(last: "
                                                     r"malformed answer .*\(it (holds U\+[0-9A-F]{4}|quotes the API key)\)") as err:
        server.fail_all = "dirty"
        build_language(source_dir, "pt", "libre", tmp_path / "out", cache=tmp_path / "c", params=params,
                       libre_url=server.url, progress=False, route="mt")
    assert "test-key" not in str(err.value)
    assert not (tmp_path / "out" / "pt").exists()
