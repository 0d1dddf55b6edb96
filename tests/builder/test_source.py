"""The English source: validation errors name file and line; download verifies the pinned checksums."""

import functools
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.errors import SourceError
from builder.source import REGISTRY, download_source, load_source
from tests.english import english_or_skip

REPO = Path(__file__).resolve().parents[2]
GOOD = {
    "queries.tsv": b"Lawyer\tLawyer\nNurse\tNurse\n",
    "corpus_documents.tsv": b"Attorney\tAttorney\nLawyer\tLawyer\nParalegal\tParalegal\n",
    "annotations.tsv": b"Lawyer\t0\tAttorney\t1\nNurse\t0\tParalegal\t1\n",
}


def write(folder: Path, **replace: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in {**GOOD, **{k.replace("__", "."): v for k, v in replace.items()}}.items():
        (folder / name).write_bytes(data)
    return folder


def test_good_folder_loads(tmp_path):
    src = load_source(write(tmp_path))
    assert list(src.queries) == ["Lawyer", "Nurse"]
    assert src.qrels == [("Lawyer", "Attorney"), ("Nurse", "Paralegal")]


@pytest.mark.parametrize("replace, message", [
    ({"queries__tsv": b"Lawyer\tLawyer\nNurse\n"}, r"queries.tsv:2: expected 2 tab-separated columns"),
    ({"queries__tsv": b"Lawyer\tLawyer\nLawyer\tAttorney\n"}, r"queries.tsv:2: duplicate id 'Lawyer' \(first on line 1\)"),
    ({"corpus_documents__tsv": b"Attorney\tAttorney\nLawyer\t \nParalegal\tParalegal\n"}, r"corpus_documents.tsv:2: empty title"),
    ({"annotations__tsv": b"Lawyer\t0\tAttorney\t1\nNurse\t0\tJudge\t1\n"}, r"annotations.tsv:2: document id 'Judge' is not in corpus"),
    ({"annotations__tsv": b"Pilot\t0\tAttorney\t1\n"}, r"annotations.tsv:1: query id 'Pilot' is not in queries.tsv"),
    ({"annotations__tsv": b"Lawyer\tAttorney\t1\n"}, r"annotations.tsv:1: expected 4 tab-separated columns"),
    ({"annotations__tsv": b"Lawyer\t0\tAttorney\tyes\n"}, r"annotations.tsv:1: relevance 'yes' is not an integer"),
    ({"queries__tsv": b"\xef\xbb\xbfLawyer\tLawyer\n"}, r"queries.tsv:1: starts with a UTF-8 byte-order mark"),
    ({"queries__tsv": b"Lawyer\tLawyer\r\nNurse\tNurse\r\n"}, r"queries.tsv:1: Windows line ending \(CRLF\)"),
    ({"corpus_documents__tsv": b"Attorney\tAttorney\nLawyer\tAbogado\xe1\n"}, r"corpus_documents.tsv:2: not valid UTF-8"),
    ({"queries__tsv": b"Law yer\tLawyer\n"}, r"queries.tsv:1: id 'Law yer' is empty or contains whitespace"),
])
def test_malformed_source_files_give_clear_errors(tmp_path, replace, message):
    with pytest.raises(SourceError, match=message):
        load_source(write(tmp_path, **replace))


def test_missing_file_and_folder(tmp_path):
    write(tmp_path)
    (tmp_path / "annotations.tsv").unlink()
    with pytest.raises(SourceError, match="annotations.tsv: file missing"):
        load_source(tmp_path)
    with pytest.raises(SourceError, match="source folder not found"):
        load_source(tmp_path / "nowhere")


def test_cli_prints_error_and_exits_2(tmp_path, capsys):
    write(tmp_path, queries__tsv=b"Lawyer\tLawyer\nLawyer\tLawyer\n")
    assert main(["source", "--source", str(tmp_path), "--out", str(tmp_path / "copy")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "queries.tsv:2: duplicate id" in err and "Traceback" not in err


@pytest.fixture
def served(tmp_path):
    """A temp copy of the English files laid out like raw.githubusercontent.com, on 127.0.0.1."""
    english = english_or_skip()
    root = tmp_path / "www"
    folder = root / REGISTRY["commit"] / REGISTRY["path"]
    folder.mkdir(parents=True)
    for name in REGISTRY["files"]:
        shutil.copyfile(english / name, folder / name)
    for lang in ("pt", "es", "fr", "it", "de"):  # the dataset's own translations beside it (the reference route)
        if (english.parent / lang).is_dir():
            shutil.copytree(english.parent / lang, folder.parent / lang)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", folder
    server.shutdown()


@pytest.mark.server
def test_download_verifies_checksums_and_counts(served, tmp_path):
    base_url, _ = served
    dest = download_source(tmp_path / "dl", base_url=base_url)
    src = load_source(dest)
    assert (len(src.queries), len(src.corpus), len(src.qrels)) == (105, 2619, 2420)
    assert next(iter(src.queries)) == "3D_Animator"


@pytest.mark.server
def test_download_refuses_a_checksum_mismatch(served, tmp_path):
    base_url, folder = served
    with open(folder / "corpus_documents.tsv", "ab") as fh:
        fh.write(b"Extra\tExtra\n")
    with pytest.raises(SourceError, match="corpus_documents.tsv: SHA-256 .* does not match the pinned"):
        download_source(tmp_path / "dl", base_url=base_url)
    assert not (tmp_path / "dl" / "corpus_documents.tsv").exists()


@pytest.mark.server
def test_download_cli_through_base_url(served, tmp_path, capsys):
    base_url, _ = served
    assert main(["source", "--download", "--base-url", base_url, "--out", str(tmp_path / "dl")]) == 0
    assert "105 queries, 2619 corpus titles, 2420 qrels" in capsys.readouterr().out


# --- degenerate input is an error, not an empty benchmark ------------------------------------------------

@pytest.mark.parametrize("replace, where, message", [
    ({"annotations__tsv": b""}, "annotations.tsv", r"no rows; the qrels file needs at least one relevant pair"),
    ({"annotations__tsv": b"Lawyer\t0\tAttorney\t-1\nNurse\t0\tParalegal\t-1\n"}, "annotations.tsv",
     r"no relevant pair \(every relevance is 0 or less, 2 line\(s\)\)"),
    ({"queries__tsv": b"id\ttitle\nLawyer\tLawyer\nNurse\tNurse\n"}, "queries.tsv:1", r"looks like a header line"),
    ({"queries__tsv": b"query_id\ttext\n"}, "queries.tsv:1", r"looks like a header line"),
    ({"annotations__tsv": b"query_id\t0\tdoc_id\trelevance\nLawyer\t0\tAttorney\t1\n"}, "annotations.tsv:1", r"looks like a header line"),
    ({"corpus_documents__tsv": b"Attorney\tAttorney\nLawyer\tAdvocate\nParalegal\tParalegal\n"}, "corpus_documents.tsv:2",
     r"id 'Lawyer' has title 'Advocate', but queries.tsv:1 gives it 'Lawyer'; one id must name one title"),
    ({"queries__tsv": b"Lawyer\tLaw\x00yer\nNurse\tNurse\n"}, "queries.tsv:1", r"control character U\+0000"),
    ({"queries__tsv": b"Lawyer\tLaw\ryer\nNurse\tNurse\n"}, "queries.tsv:1", r"control character U\+000D"),
    ({"queries__tsv": "Lawyer\tLawyer\nNurse\t\u200b\u200d\ufeff\n".encode()}, "queries.tsv:2", r"empty title for id 'Nurse' \(no visible character\)"),
    ({"queries__tsv": b"Lawyer\tLawyer\nNurse\t" + b"Nurse " * 60 + b"\n"}, "queries.tsv:2", r"is 359 characters, over the limit of 300"),
])
def test_degenerate_input_is_one_error_line_with_file_and_line(tmp_path, capsys, replace, where, message):
    import re

    folder = write(tmp_path / "en", **replace)
    assert main(["source", "--source", str(folder), "--out", str(tmp_path / "copy")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {folder / where}: ") and re.search(message, err), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "copy").exists()


def test_a_1mb_title_is_refused_at_once(tmp_path):
    folder = write(tmp_path, queries__tsv=b"Lawyer\tLawyer\nNurse\t" + b"x" * 1_000_000 + b"\n")
    with pytest.raises(SourceError, match=r"queries.tsv:2: title of id 'Nurse' is 1000000 characters"):
        load_source(folder)


# --- fuzz: the reader never raises anything but its own error, the CLI exits 0 or 2 -------------------------

def test_fuzzed_source_files_give_exit_0_or_2_never_a_traceback(tmp_path_factory):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ids = st.sampled_from(["Lawyer", "Nurse", "Attorney", "Paralegal", "id", "query_id", "", "a b", "Ünïcode"])
    texts = st.text(alphabet=st.sampled_from(list("ab é\t\r\x00\u200b\ufeff-0123")), max_size=12)
    field = st.one_of(ids, texts, st.just("0"), st.just("1"), st.just("-1"))
    line = st.lists(field, min_size=0, max_size=5).map(lambda fs: "\t".join(fs).encode("utf-8"))
    raw = st.one_of(line, st.binary(max_size=20), st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\r", b"\x00"]))
    content = st.lists(raw, max_size=6).map(lambda ls: b"\n".join(ls) + b"\n")
    files = st.fixed_dictionaries({"queries.tsv": content, "corpus_documents.tsv": content,
                                   "annotations.tsv": st.one_of(content, st.just(GOOD["annotations.tsv"]))})
    root = tmp_path_factory.mktemp("fuzz")
    outcomes = {0: 0, 2: 0}

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(files=files, keep_good=st.sets(st.sampled_from(sorted(GOOD))))
    def run(files, keep_good):
        import contextlib
        import io

        folder = root / "en"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for name, data in files.items():
            (folder / name).write_bytes(GOOD[name] if name in keep_good else data)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main(["source", "--source", str(folder), "--out", str(root / "copy")])
        assert rc in (0, 2)
        if rc == 2:
            assert err.getvalue().startswith("error: ") and len(err.getvalue().strip().splitlines()) == 1
        else:
            src = load_source(folder)
            assert src.queries and src.corpus and src.qrels
        outcomes[rc] += 1

    run()
    assert outcomes[0] and outcomes[2]  # the fuzzer reached both outcomes


# --- a fresh machine: the source is downloaded into the user cache when it is not found locally ----------

@pytest.mark.server
def test_missing_source_is_downloaded_into_the_user_cache_and_verified(served, tmp_path, monkeypatch, capsys):
    import builder.source as source

    base_url, folder = served
    monkeypatch.setattr(source, "DEFAULT_SOURCE_DIR", tmp_path / "not-here")
    monkeypatch.delenv("JOBTITLES_SOURCE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)  # no data/source copy here
    params = tmp_path / "params.yaml"
    doc = __import__("yaml").safe_load((REPO / "params.yaml").read_text())
    doc["source"]["base_url"] = base_url
    params.write_text(__import__("yaml").safe_dump(doc))
    cached = tmp_path / "xdg" / "gendered-job-titles" / "jobtitlesimilarity" / REGISTRY["commit"] / "dataset" / "en"
    assert source.user_cache_dir() == cached
    assert main(["--params", str(params), "source", "--out", str(tmp_path / "copy")]) == 0
    captured = capsys.readouterr()
    assert f"downloading Avature/jobtitlesimilarity-dataset@{REGISTRY['commit'][:12]} into {cached}" in captured.err
    assert "105 queries, 2619 corpus titles, 2420 qrels" in captured.out
    assert source.cached_source_complete(cached)
    # Kept: a second run reads the cache and downloads nothing (the files on the server are gone).
    shutil.rmtree(folder)
    assert main(["--params", str(params), "source", "--out", str(tmp_path / "copy2")]) == 0
    assert "downloading" not in capsys.readouterr().err
    # A cached file that no longer matches its SHA-256 is fetched again; here the server has lost it: a clear error.
    with open(cached / "queries.tsv", "ab") as fh:
        fh.write(b"Extra\tExtra\n")
    assert main(["--params", str(params), "source", "--out", str(tmp_path / "copy3")]) == 2
    err = capsys.readouterr().err
    assert "error: " in err and "queries.tsv: download failed" in err and "pass --source DIR" in err
    assert "Traceback" not in err


def test_under_ci_a_missing_source_fails_instead_of_skipping(tmp_path):
    import os
    import subprocess
    import sys

    probe = tmp_path / "test_probe.py"
    probe.write_text("from tests.english import english_or_skip\n\ndef test_needs_english():\n    english_or_skip()\n")
    env = {**os.environ, "JOBTITLES_SOURCE_DIR": str(tmp_path / "none"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    # The checkout's neighbour folder may exist here: hide it by pointing the default elsewhere in the probe.
    (tmp_path / "conftest.py").write_text("import builder.source, tests.english\nfrom pathlib import Path\n"
                                          f"tests.english.DEFAULT_SOURCE_DIR = Path({str(tmp_path / 'none')!r})\n")
    results = {}
    for ci in ("", "true"):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(probe)],
                           cwd=REPO, env={**env, "CI": ci}, capture_output=True, text=True, timeout=120)
        results[ci] = r
    assert results[""].returncode == 0 and "1 skipped" in results[""].stdout
    assert results["true"].returncode == 1 and "1 failed" in results["true"].stdout
    assert "never skipped" in results["true"].stdout


@pytest.mark.server
def test_a_translated_folder_failing_its_checksum_is_refused_and_leaves_nothing(served, tmp_path, capsys):
    """`source --download` fetches the reference route's translated folders too; one whose file does not match the
    pinned SHA-256 is one error line, and no half folder is left for the next run to read."""
    base_url, folder = served
    fr = folder.parent / "fr" / "queries.tsv"
    if not fr.is_file():
        pytest.skip("the dataset's fr translation is not in ../shared")
    with open(fr, "ab") as fh:
        fh.write(b"Extra\tExtra\n")
    rc = main(["source", "--download", "--base-url", base_url, "--out", str(tmp_path / "dl")])
    err = capsys.readouterr().err
    assert rc == 2 and "dataset/fr/queries.tsv: SHA-256" in err and "Traceback" not in err
    assert not (tmp_path / "dl" / "reference" / "fr").exists()
    assert not [p for p in (tmp_path / "dl" / "reference").iterdir() if p.name.startswith(".")]


# --- a reply too big to be a source file is refused without holding it in memory --------------------------

@pytest.fixture
def endless():
    """A server on 127.0.0.1 whose every file is endless: `announce` says so (a 1.2 GB Content-Length), or not
    (the body is streamed until the client hangs up). Counts the bytes it managed to send."""
    state = {"announce": True, "sent": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            if state["announce"]:
                self.send_header("Content-Length", str(1_200_000_000))
            self.end_headers()
            chunk = b"Lawyer\tLawyer\n" * 4096
            try:
                while state["sent"] < 1_200_000_000:
                    self.wfile.write(chunk)
                    state["sent"] += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", state
    server.shutdown()
    server.server_close()


@pytest.mark.server
@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "streamed"])
def test_download_refuses_an_oversized_reply_without_reading_it_all(endless, tmp_path, capsys, announce):
    import time

    from builder.source import MAX_DOWNLOAD_BYTES

    base_url, state = endless
    state["announce"] = announce
    start = time.monotonic()
    assert main(["source", "--download", "--base-url", base_url, "--out", str(tmp_path / "dl")]) == 2
    took = time.monotonic() - start
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert "queries.tsv" in err and "MiB a source file may hold" in err, err
    assert took < 20, took
    assert state["sent"] < 200 << 20  # nowhere near the 1.2 GB on offer
    assert not (tmp_path / "dl").exists() or not any(p.is_file() for p in (tmp_path / "dl").rglob("*"))
    assert MAX_DOWNLOAD_BYTES < 64 << 20
