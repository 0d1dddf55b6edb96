"""Issue 38's probe of the releases CLI, kept: a release made over an older one keeps a user's file (refused,
named), verify reads every file it vouches for, `verify --against ''` is a mistake. Each case failed on
main 7194864."""

from __future__ import annotations

import hashlib
import json

import pytest

from releases import ReleaseError, make_release, verify_release
from releases.__main__ import main


def test_a_release_made_over_an_older_one_holding_a_users_note_is_refused_and_the_note_kept(project, capsys):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    note = out / "pt" / "my-notes.txt"
    note.write_text("reviewed rows 1-40\n")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert main(["make", "--data", str(project.data), "--version", "0.2.0", "--out", str(out),
                 "--params", str(project.params)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out}: holds what this command does not write (pt/my-notes.txt)"), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert note.read_text() == "reviewed rows 1-40\n"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    assert json.loads((out / "manifest.json").read_text())["version"] == "0.1.0"


def test_a_release_over_an_older_one_of_its_own_files_is_made(project):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    assert make_release(project.data, "0.2.0", out, project.params)["version"] == "0.2.0"
    assert verify_release(out).ok


def _rehash(release, rel: str) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["sha256"] = hashlib.sha256((release / rel).read_bytes()).hexdigest()
            entry["bytes"] = (release / rel).stat().st_size
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


@pytest.mark.parametrize("rel", ["pt/corpus.parquet", "es/queries.parquet"])
def test_a_damaged_parquet_rehashed_into_the_manifest_is_refused(project, capsys, rel):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    path = out / rel
    data = bytearray(path.read_bytes())
    middle = len(data) // 2  # inside the pages: the footer (schema, row counts) stays readable
    data[middle:middle + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    _rehash(out, rel)
    assert main(["verify", str(out)]) == 2
    captured = capsys.readouterr()
    assert "verified" not in captured.out and captured.err.startswith("error: "), captured
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) == 1
    assert rel.split("/")[1] in captured.out + captured.err


def test_verify_against_an_empty_revision_is_a_mistake(project, capsys):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    assert main(["verify", str(out), "--against", ""]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_an_untouched_release_still_verifies_after_reading_every_set(project):
    out = project.root / "release"
    make_release(project.data, "0.1.0", out, project.params)
    result = verify_release(out)
    assert result.ok and result.checked == 11, result.problems
