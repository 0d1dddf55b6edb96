"""Every CLI checks --lang with the one language-code check (languages.check_code, a full match): a path
(``../../victim``), markup or a trailing newline (``pt\\n``, which a ``$`` pattern accepts) is one ``error:``
line and exit status 2, before any file is read or written or any server is asked."""

from __future__ import annotations

import os

import pytest

from languages import LanguageError, check_code, is_code

BAD = ["../../victim", "pt\n", "pt/", "PT", "x<img src=x onerror=alert(1)>", "", "p", "pt-", "pt\x00"]


def test_the_check_is_a_full_match():
    assert all(is_code(c) for c in ("pt", "es", "cat", "pt-br", "zh-hans"))
    for bad in BAD:
        assert not is_code(bad), bad
        with pytest.raises(LanguageError, match="--lang .* is not a language code"):
            check_code(bad)
    assert not is_code(None) and not is_code(["pt"])


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("bad", ["../../victim", "pt\n"])
def test_annotation_pull_refuses_a_lang_that_is_a_path(tmp_path, monkeypatch, capsys, bad):
    from annotation.cli import main

    corrections = tmp_path / "repo" / "corrections"
    corrections.mkdir(parents=True)
    victim = tmp_path / "victim.jsonl"
    victim.write_text("kept\n", encoding="utf-8")
    (tmp_path / "victim.ties.jsonl").write_text("kept\n", encoding="utf-8")
    (tmp_path / "repo" / "params.yaml").write_text("annotation:\n  corrections_dir: corrections\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setenv("ARGILLA_API_URL", "http://127.0.0.1:9")  # never contacted: refused before
    monkeypatch.setenv("ARGILLA_API_KEY", "k" * 16)
    assert main(["pull", "--lang", bad]) == 2
    assert "is not a language code" in _one_error_line(capsys)
    assert victim.read_text(encoding="utf-8") == "kept\n" and (tmp_path / "victim.ties.jsonl").exists()
    assert sorted(os.listdir(tmp_path)) == ["repo", "victim.jsonl", "victim.ties.jsonl"]
    assert os.listdir(corrections) == []


@pytest.mark.parametrize("what", ["translations", "relevance"])
def test_annotation_push_refuses_a_bad_lang(tmp_path, capsys, what):
    from annotation.cli import main

    assert main(["push", what, "--data", str(tmp_path), "--lang", "../x"]) == 2
    assert "is not a language code" in _one_error_line(capsys)


@pytest.mark.parametrize("command", [["corrections"], ["build"], ["translate"], ["postprocess"]])
def test_builder_refuses_a_bad_lang(tmp_path, monkeypatch, capsys, command):
    from builder.__main__ import main

    monkeypatch.chdir(tmp_path)
    assert main([*command, "--lang", "../../victim", *(["--out", str(tmp_path / "out")] if command != ["corrections"] else [])]) == 2
    assert "--lang '../../victim' is not a language code" in _one_error_line(capsys)
    assert os.listdir(tmp_path) == []


def test_releases_patterns_match_whole(tmp_path):
    from releases.make import check_version
    from releases.manifest import LANGUAGE_RE, ReleaseError

    with pytest.raises(ReleaseError, match="is not of the form X.Y.Z"):
        check_version(tmp_path, "0.1.0\n", tmp_path / "out")
    assert LANGUAGE_RE.fullmatch("pt-BR") and not LANGUAGE_RE.fullmatch("pt\n")
