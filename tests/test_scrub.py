"""One scrubber (config.secrets.scrub) for every command's messages: the password of an Argilla URL, keys in
the environment and URL credentials never reach an error line of annotation, eval or releases."""

from __future__ import annotations

import pytest

from config.secrets import scrub

PASSWORD = "Zq81-secret-pw"


def test_scrub_masks_the_password_of_a_url_in_the_environment(monkeypatch):
    monkeypatch.setenv("ARGILLA_API_URL", f"http://alice:{PASSWORD}@127.0.0.1:9")
    out = scrub(f"connect failed for {PASSWORD} at http://alice:{PASSWORD}@127.0.0.1:9/api and http://bob:pw@h/")
    assert PASSWORD not in out and ":pw@" not in out and "alice" not in out and "***" in out
    from builder.errors import scrub as builder_scrub

    assert builder_scrub is scrub  # the builder's is the same function


@pytest.mark.parametrize("password", [PASSWORD, "pw"])
def test_annotation_never_shows_the_argilla_url_password(tmp_path, monkeypatch, capsys, password):
    from annotation.cli import main

    (tmp_path / "params.yaml").write_text("annotation:\n  corrections_dir: corrections\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARGILLA_API_URL", f"http://alice:{password}@127.0.0.1:9")  # nothing listens on port 9
    monkeypatch.setenv("ARGILLA_API_KEY", "k" * 16)
    assert main(["pull", "--lang", "pt"]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "Argilla at http://***@127.0.0.1:9" in err, err
    assert f":{password}@" not in err + captured.out and (password == "pw" or password not in err + captured.out)


def test_eval_and_releases_error_lines_are_scrubbed(tmp_path, monkeypatch, capsys):
    from eval.__main__ import main as eval_main
    from releases.__main__ import main as releases_main

    monkeypatch.setenv("HF_TOKEN", PASSWORD)
    missing = tmp_path / f"http:/alice:{PASSWORD}@host" / "data"  # a path that quotes a secret
    assert eval_main(["run", "--data", str(missing), "--model", "tfidf-char", "--out", str(tmp_path / "o")]) == 2
    assert releases_main(["verify", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("error: ") == 2 and PASSWORD not in err, err
