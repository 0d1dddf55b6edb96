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

REPO = Path(__file__).resolve().parents[2]
ENGLISH = REPO.parent / "shared" / "data" / "jobtitlesimilarity" / "dataset" / "en"
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
    if not ENGLISH.is_dir():
        pytest.skip(f"English source not present at {ENGLISH}")
    root = tmp_path / "www"
    folder = root / REGISTRY["commit"] / REGISTRY["path"]
    folder.mkdir(parents=True)
    for name in REGISTRY["files"]:
        shutil.copyfile(ENGLISH / name, folder / name)
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
