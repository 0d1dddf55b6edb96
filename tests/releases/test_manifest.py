import json

import pytest

from releases import ReleaseError, make_release, verify_release
from releases.__main__ import main


@pytest.fixture
def release(project):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    return out


def test_an_untouched_release_verifies(release, capsys):
    result = verify_release(release)
    assert result.ok and result.checked == 11 and result.version == "0.1.0"
    assert main(["verify", str(release)]) == 0
    assert "release 0.1.0 verified, 11 files match the manifest" in capsys.readouterr().out


def test_a_changed_file_is_named(release, capsys):
    qrels = release / "pt" / "qrels.tsv"
    qrels.write_text(qrels.read_text().replace("q-m1\t0\td-m1", "q-m1\t0\td-m2"))
    problems = verify_release(release).problems
    assert len(problems) == 1 and problems[0].startswith("changed: pt/qrels.tsv (sha256 ")
    assert main(["verify", str(release)]) == 2
    captured = capsys.readouterr()
    assert "changed: pt/qrels.tsv" in captured.out
    assert captured.err.startswith("error: ") and "failed verification (1 problem(s)" in captured.err


def test_a_missing_and_an_extra_file_are_named(release):
    (release / "es" / "corpus.parquet").unlink()
    (release / "es" / "notes.txt").write_text("added after publication\n")
    assert verify_release(release).problems == ["missing: es/corpus.parquet", "extra: es/notes.txt (not in the manifest)"]


def test_a_row_count_edited_in_the_manifest_is_caught(release):
    manifest = json.loads((release / "manifest.json").read_text())
    entry = next(f for f in manifest["files"] if f["path"] == "pt/queries.parquet")
    entry["rows"] = 6
    (release / "manifest.json").write_text(json.dumps(manifest))
    assert verify_release(release).problems == ["changed: pt/queries.parquet has 5 rows, manifest says 6"]


def test_a_folder_without_manifest_is_an_error(tmp_path, capsys):
    with pytest.raises(ReleaseError, match="no manifest"):
        verify_release(tmp_path)
    assert main(["verify", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_a_corrupt_manifest_is_an_error_naming_the_line(release):
    (release / "manifest.json").write_text('{\n  "format": \n')
    with pytest.raises(ReleaseError, match=r"manifest\.json:3: not valid JSON"):
        verify_release(release)


@pytest.mark.parametrize("edit, message", [
    (lambda files: files[0].pop("sha256"), r"files entry 1 \(README\.md\) has no valid 'sha256'"),
    (lambda files: files[2].update(path="../../outside.txt"), r"files entry 3 \('\.\./\.\./outside\.txt'\) points outside"),
    (lambda files: files[1].update(path="/etc/hostname"), r"files entry 2 \('/etc/hostname'\) points outside"),
    (lambda files: files.append("pt/extra.tsv"), r"files entry 12 is not an object"),
])
def test_a_damaged_manifest_entry_is_an_error_not_a_traceback(release, capsys, edit, message):
    manifest = json.loads((release / "manifest.json").read_text())
    edit(manifest["files"])
    (release / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ReleaseError, match=message):
        verify_release(release)
    assert main(["verify", str(release)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def _rewrite(release, edit):
    manifest = json.loads((release / "manifest.json").read_text())
    edit(manifest)
    (release / "manifest.json").write_text(json.dumps(manifest))


def _rehash(release):
    """What an attacker does after changing files: re-hash them into the manifest."""
    import hashlib

    def edit(manifest):
        for entry in manifest["files"]:
            path = release / entry["path"]
            if path.is_file():
                entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    _rewrite(release, edit)


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(files=[]), r"'files' is empty"),
    (lambda m: m["files"].append(dict(m["files"][3])), r"files entry 12 \(es/qrels\.tsv\) repeats an earlier entry"),
    (lambda m: m["files"][1].update(path="fr/corpus.parquet"),
     r"files entry 2 \(fr/corpus\.parquet\) is in a folder that is not one of the release's languages \(pt, es\)"),
    (lambda m: m.update(languages=["pt"]), r"files entry 2 \(es/corpus\.parquet\) is in a folder that is not one"),
    (lambda m: m.update(languages=["pt", "es", "fr"]), r"'files' lacks fr/corpus\.parquet, fr/qrels\.parquet"),
    (lambda m: m.update(languages=["pt", "pt"]), r"'languages' lists a language twice"),
    (lambda m: m.update(languages=[]), r"'languages' must be a non-empty list"),
    (lambda m: m.pop("version"), r"no 'version'"),
    (lambda m: m["files"].pop(0), r"'files' lacks README\.md"),
    (lambda m: m["files"][0].update(path="./README.md"), r"points outside the release folder"),
    (lambda m: m["files"][0].update(rows=True), r"has a 'rows' that is not a count"),
    (lambda m: m["files"][0].update(path="manifest.json"), r"lists the manifest itself"),
    (lambda m: m["files"][4].update(rows=0), r"es/queries\.parquet holds no rows: an empty test set measures nothing"),
], ids=["empty", "duplicate", "other-language", "language-dropped", "language-added", "language-twice",
        "no-languages", "no-version", "file-dropped", "dot-path", "rows-bool", "lists-itself", "zero-rows"])
def test_a_manifest_that_cannot_describe_a_complete_release_is_refused(release, capsys, edit, message):
    _rewrite(release, edit)
    with pytest.raises(ReleaseError, match=message):
        verify_release(release)
    assert main(["verify", str(release)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_an_extra_language_folder_is_named(release):
    (release / "fr").mkdir()
    (release / "fr" / "queries.parquet").write_bytes((release / "pt" / "queries.parquet").read_bytes())
    assert verify_release(release).problems == ["extra: fr/ (a folder that is not one of the manifest's languages)"]


@pytest.mark.parametrize("target", ["file", "folder"])
def test_a_link_leaving_the_folder_is_refused(release, tmp_path, capsys, target):
    outside = tmp_path / "outside"
    outside.mkdir()
    stats = release / "pt" / "stats.json"
    if target == "file":
        (outside / "stats.json").write_bytes(stats.read_bytes())  # the same bytes: only the link is wrong
        stats.unlink()
        stats.symlink_to(outside / "stats.json")
    else:
        (release / "es" / "more").symlink_to(outside, target_is_directory=True)
    problems = verify_release(release).problems
    assert len(problems) == 1 and problems[0].startswith("link: ") and "points outside the folder" in problems[0]
    assert main(["verify", str(release)]) == 2
    assert "link: " in capsys.readouterr().out


def test_a_link_inside_the_folder_is_followed_and_checked(release):
    qrels = release / "pt" / "qrels.tsv"
    (release / "es" / "copy.tsv").symlink_to(qrels)
    assert verify_release(release).problems == ["extra: es/copy.tsv (not in the manifest)"]


def test_a_corrupt_parquet_rehashed_into_the_manifest_is_an_error_not_a_traceback(release, capsys):
    corpus = release / "es" / "corpus.parquet"
    corpus.write_bytes(corpus.read_bytes()[:100])
    _rehash(release)
    with pytest.raises(ReleaseError, match=r"es/corpus\.parquet: not a readable parquet file"):
        verify_release(release)
    assert main(["verify", str(release)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@pytest.mark.parametrize("content, message", [
    ("[" * 100_000 + "]" * 100_000, r"nested too deeply"),
    (b'{"format": "\xff"}', r"not UTF-8 text"),
], ids=["deep", "not-utf8"])
def test_a_manifest_nested_too_deep_or_not_utf8_is_an_error(release, capsys, content, message):
    path = release / "manifest.json"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    with pytest.raises(ReleaseError, match=message):
        verify_release(release)
    assert main(["verify", str(release)]) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_the_output_says_what_was_checked_against_what(release, capsys):
    assert main(["verify", str(release)]) == 0
    out = capsys.readouterr().out
    assert "checked against the manifest in the same folder only" in out and "--against 0.1.0" in out


def test_a_release_whose_test_set_was_emptied_is_refused(release, capsys):
    """A 0-item test set with its manifest re-hashed and its rows set to 0 by hand: still refused."""
    import polars as pl

    queries = release / "pt" / "queries.parquet"
    pl.read_parquet(queries).head(0).write_parquet(queries)
    _rehash(release)
    _rewrite(release, lambda m: next(f for f in m["files"] if f["path"] == "pt/queries.parquet").update(rows=0))
    assert main(["verify", str(release)]) == 2
    assert "pt/queries.parquet holds no rows" in capsys.readouterr().err
