"""Issue 38's probe of the annotation CLI, kept: a --params that is missing, a folder or a device is refused
(it ran on the defaults), a bad $ARGILLA_API_URL or --port is one line, `rule --apply --out DIR` writes nothing
beside the folder. Each case failed on main 7194864."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from annotation.cli import main
from tests.annotation.conftest import write_tiny_testset

REPO = Path(__file__).resolve().parents[2]


def one_error_line(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("given", ["missing", "folder", "/dev/zero", "/dev/urandom"])
def test_a_params_file_that_is_missing_a_folder_or_a_device_is_refused(tmp_path, capsys, given, where):
    write_tiny_testset(tmp_path / "data")
    (tmp_path / "a-folder").mkdir()
    params = {"missing": str(tmp_path / "no-such.yaml"), "folder": str(tmp_path / "a-folder")}.get(given, given)
    rule = ["rule", "--data", str(tmp_path / "data"), "--lang", "pt", "--out", str(tmp_path / "c" / "pt.jsonl"),
            "--find", "advogado", "--replace", "advogados"]
    argv = ["--params", params, *rule] if where == "before" else [*rule, "--params", params]
    code = main(argv)
    one_error_line(code, capsys.readouterr().err, params)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("url, problem", [
    ("http://127.0.0.1:70000", "Port out of range 1-65535"),
    ("http://[::1", "Invalid IPv6 URL"),
    ("localhost:6900", "not an http:// or https:// URL"),
])
def test_an_argilla_url_with_a_bad_port_or_address_is_one_line(tmp_path, capsys, monkeypatch, url, problem):
    write_tiny_testset(tmp_path / "data")
    monkeypatch.setenv("ARGILLA_API_URL", url)
    monkeypatch.setenv("ARGILLA_API_KEY", "k-123")
    code = main(["pull", "--lang", "pt", "--out", str(tmp_path / "c" / "pt.jsonl")])
    one_error_line(code, capsys.readouterr().err, "ARGILLA_API_URL is not a usable URL", problem)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("port", ["70000", "0", "-1"])
def test_serve_refuses_a_port_out_of_range_without_a_traceback(port):
    r = subprocess.run([sys.executable, "-m", "annotation", "serve", "--port", port], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "is not a port (a whole number from 1 to 65535)" in r.stderr


def test_rule_apply_with_out_a_folder_writes_nothing_beside_it(tmp_path, capsys):
    write_tiny_testset(tmp_path / "data")
    (tmp_path / "c").mkdir()
    before = files_under(tmp_path)
    code = main(["rule", "--data", str(tmp_path / "data"), "--lang", "pt", "--out", str(tmp_path / "c"),
                 "--find", "advogado", "--replace", "advogados", "--annotator", "ana", "--apply"])
    one_error_line(code, capsys.readouterr().err, f"--out {tmp_path / 'c'} is a folder")
    assert files_under(tmp_path) == before


def test_a_corrupt_translations_parquet_is_one_line(tmp_path, capsys):
    write_tiny_testset(tmp_path / "data")
    path = tmp_path / "data" / "pt" / "translations.parquet"
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data[: len(data) // 2]))  # cut short, as a failed copy leaves it
    code = main(["rule", "--data", str(tmp_path / "data"), "--lang", "pt", "--out", str(tmp_path / "c" / "pt.jsonl"),
                 "--find", "advogado", "--replace", "advogados"])
    one_error_line(code, capsys.readouterr().err, f"{path}: not a readable Parquet file")


# A column of another type than the builder writes: push translations read a string `flags` letter by letter as
# flags and pushed it; a number where a string belongs failed later as a traceback (failed on main 8807e36).
@pytest.mark.parametrize("column, dtype, holds", [
    ("flags", "String", "String where the builder writes List(String)"),
    ("in_queries", "Int64", "Int64 where the builder writes Boolean"),
    ("verdict", "Categorical", "Categorical where the builder writes String"),
    ("source_id", "Int64", "Int64 where the builder writes String"),
])
@pytest.mark.parametrize("command", ["push", "rule", "review"])
def test_a_translations_parquet_column_of_another_type_is_one_line_naming_file_and_column(
        tmp_path, capsys, monkeypatch, column, dtype, holds, command):
    import polars as pl

    write_tiny_testset(tmp_path / "data")
    path = tmp_path / "data" / "pt" / "translations.parquet"
    frame = pl.read_parquet(path)
    if column == "source_id":
        frame = frame.with_columns(pl.int_range(pl.len()).alias("source_id"))
    elif column == "flags":
        frame = frame.with_columns(pl.col("flags").list.join(","))
    else:
        frame = frame.with_columns(pl.col(column).cast(getattr(pl, dtype)))
    frame.write_parquet(path)
    # a server that refuses: the file is read, and refused, before any connection is tried
    monkeypatch.setenv("ARGILLA_API_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ARGILLA_API_KEY", "k-123")
    args = {"push": ["push", "translations", "--data", str(tmp_path / "data"), "--lang", "pt"],
            "rule": ["rule", "--data", str(tmp_path / "data"), "--lang", "pt", "--out", str(tmp_path / "c" / "pt.jsonl"),
                     "--find", "advogado", "--replace", "advogados"],
            "review": ["review", "pack", "--data", str(tmp_path / "data"), "--lang", "pt", "--out",
                       str(tmp_path / "pack.jsonl")]}[command]
    code = main(args)
    one_error_line(code, capsys.readouterr().err, f"{path}: column {column!r} holds {holds}",
                   "rebuild the language")
    assert not (tmp_path / "c").exists() and not (tmp_path / "pack.jsonl").exists()


def test_columns_without_values_are_not_of_another_type(tmp_path):
    """All-empty flags and an all-null text column, as polars writes them without a schema (List(Null), Null),
    hold nothing of a wrong type: read as the builder's (the Argilla resume test writes such a file)."""
    import polars as pl

    from annotation.translations import read_translations

    write_tiny_testset(tmp_path / "data")
    path = tmp_path / "data" / "pt" / "translations.parquet"
    frame = pl.read_parquet(path)
    frame = frame.with_columns(pl.Series("flags", [[] for _ in range(frame.height)]),
                               pl.lit(None).alias("reason"))
    assert frame.schema["flags"] == pl.List(pl.Null) and frame.schema["reason"] == pl.Null
    frame.write_parquet(path)
    assert read_translations(tmp_path / "data", "pt").height == frame.height
