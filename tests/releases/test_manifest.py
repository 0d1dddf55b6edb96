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
