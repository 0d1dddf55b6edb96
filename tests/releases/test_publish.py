"""`releases publish` and `releases verify --against` on a real git + DVC repository (the release recorded
with `dvc add`, a local folder remote)."""

from __future__ import annotations

import json
import re

import pytest

from releases import make_release
from releases.__main__ import main

from .conftest import dvc, git


@pytest.fixture
def made(project, tmp_path, monkeypatch):
    """Release 0.1.0 made and recorded by DVC (release.dvc committed), a folder remote as the default."""
    make_release(project.data, "0.1.0", project.root / "release", project.params)
    dvc(project.root, "remote", "add", "-d", "storage", str(tmp_path / "remote"))
    dvc(project.root, "add", "-q", "release")
    project.commit("release 0.1.0 recorded")
    monkeypatch.chdir(project.root)
    return project


def publish_and_tag(project, capsys) -> str:
    assert main(["publish", "--release", "release"]) == 0
    out = capsys.readouterr().out
    git(project.root, "add", "published.json", "release.dvc")
    project.commit("testset v0.1.0")
    git(project.root, "tag", "-a", "testset@v0.1.0", "-m", "0.1.0")
    return out


def test_publish_pushes_the_release_and_records_its_digests(made, capsys, tmp_path):
    out = publish_and_tag(made, capsys)
    entry = json.loads((made.root / "published.json").read_text())["releases"][0]
    assert entry["version"] == "0.1.0" and entry["tag"] == "testset@v0.1.0" and entry["folder"] == "release"
    assert entry["files"] == 11 and entry["languages"] == ["pt", "es"]
    assert f"DVC md5 {entry['dvc_md5']}" in out and "git add dvc.lock published.json" in out
    stored = {p.parent.name + p.name for p in (tmp_path / "remote" / "files" / "md5").glob("*/*")}
    listing = json.loads((made.root / ".dvc/cache/files/md5" / entry["dvc_md5"][:2] / entry["dvc_md5"][2:]).read_text())
    assert len(listing) == 12  # manifest.json and the 11 files it lists
    assert stored == {entry["dvc_md5"]} | {e["md5"] for e in listing}  # the release, nothing else (not data/)


def test_verify_against_the_tag_says_what_was_checked_against_what(made, capsys):
    publish_and_tag(made, capsys)
    assert main(["verify", "release", "--against", "testset@v0.1.0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"release 0\.1\.0 verified against testset@v0\.1\.0 \(commit [0-9a-f]{12}\)", out)
    assert re.search(r"checked: manifest\.json sha256 [0-9a-f]{16}… = published\.json \(release 0\.1\.0\) at "
                     r"testset@v0\.1\.0", out)
    assert re.search(r"checked: folder md5 [0-9a-f]{32}\.dir = release\.dvc, output release, at testset@v0\.1\.0", out)
    assert "checked: 11 files: sha256 and rows = manifest.json" in out


@pytest.mark.parametrize("spoil, message", [
    (lambda r: (r / "pt" / "notes.txt").write_text("added\n"), r"folder differs from the release recorded there"),
    (lambda r: (r / "manifest.json").write_text((r / "manifest.json").read_text().replace('"pt",', '"pt", ')),
     r"manifest\.json: sha256 [0-9a-f]{16}…, but published\.json at testset@v0\.1\.0 \([0-9a-f]{12}\) records"),
    (lambda r: (r / "manifest.json").write_text(
        json.dumps({**json.loads((r / "manifest.json").read_text()), "files": []})), r"'files' is empty"),
], ids=["extra-file", "manifest-edited", "manifest-emptied"])
def test_verify_against_refuses_a_changed_copy(made, capsys, spoil, message):
    publish_and_tag(made, capsys)
    spoil(made.root / "release")
    assert main(["verify", "release", "--against", "testset@v0.1.0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and re.search(message, err), err


def test_verify_against_a_commit_without_a_record_or_another_version_is_refused(made, capsys):
    first = git(made.root, "rev-list", "--max-parents=0", "HEAD").strip()
    assert main(["verify", "release", "--against", first]) == 2
    assert "records no digest of release 0.1.0" in capsys.readouterr().err
    git(made.root, "tag", "testset@v0.0.9")
    assert main(["verify", "release", "--against", "testset@v0.0.9"]) == 2
    assert "the manifest says version 0.1.0, but testset@v0.0.9 is release 0.0.9" in capsys.readouterr().err
    assert main(["verify", "release", "--against", "no-such-tag"]) == 2
    assert "no-such-tag: neither a version (X.Y.Z" in capsys.readouterr().err


def test_publish_refuses_a_folder_that_is_not_the_recorded_output(made, capsys):
    (made.root / "release" / "es" / "notes.txt").write_text("added\n")
    assert main(["publish", "--release", "release"]) == 2
    assert "fails verification" in capsys.readouterr().err
    (made.root / "release" / "es" / "notes.txt").unlink()
    make_release(made.data, "0.2.0", made.root / "release", made.params)  # made, but not recorded by DVC
    assert main(["publish", "--release", "release"]) == 2
    assert re.search(r"release: DVC md5 [0-9a-f]{32}\.dir, but release\.dvc records", capsys.readouterr().err)


def test_publish_refuses_a_tagged_version_and_reruns_idempotently(made, capsys):
    assert main(["publish", "--release", "release"]) == 0
    before = (made.root / "published.json").read_bytes()
    assert main(["publish", "--release", "release"]) == 0  # e.g. after an interrupted push
    assert (made.root / "published.json").read_bytes() == before
    git(made.root, "tag", "testset@v0.1.0")
    capsys.readouterr()
    assert main(["publish", "--release", "release"]) == 2
    assert "git tag testset@v0.1.0 exists already" in capsys.readouterr().err


def test_the_repository_storage_holds_the_published_releases_and_nothing_else():
    """dvc-storage/ travels in git: a `dvc push` without a target would put every pipeline output there
    (the English source, translations, results). It must hold exactly the published releases' objects."""
    from pathlib import Path

    from releases.anchor import read_published

    project = Path(__file__).resolve().parents[2]
    storage = project / "dvc-storage" / "files" / "md5"
    stored = {p.parent.name + p.name for p in storage.glob("*/*")} if storage.is_dir() else set()
    wanted = set()
    for entry in read_published(project):
        listing = storage / entry["dvc_md5"][:2] / entry["dvc_md5"][2:]
        assert listing.is_file(), f"dvc-storage/ lacks the listing of published release {entry['version']}"
        wanted |= {entry["dvc_md5"]} | {e["md5"] for e in json.loads(listing.read_text())}
    assert wanted <= stored, f"dvc-storage/ lacks objects of published releases: {sorted(wanted - stored)[:5]}"
    assert stored <= wanted, (f"dvc-storage/ holds objects of no published release: {sorted(stored - wanted)[:5]}; "
                              "push releases only (`python -m releases publish`), never a bare `dvc push`")


def test_a_published_version_can_be_made_again_only_byte_for_byte(made, capsys):
    """`dvc repro` on a checkout of a published version remakes the release: allowed when it reproduces
    the digest the tag records, refused when the inputs have changed since."""
    import shutil

    from releases import ReleaseError
    from releases.anchor import folder_md5

    from .conftest import record_data

    publish_and_tag(made, capsys)
    published = folder_md5(made.root / "release")
    shutil.rmtree(made.root / "release")
    make_release(made.data, "0.1.0", made.root / "release", made.params)
    assert folder_md5(made.root / "release") == published

    shutil.rmtree(made.root / "release")
    stats = made.data / "es" / "stats.json"
    stats.write_text(stats.read_text().replace('"lang": "es"', '"lang": "es", "note": "rebuilt"'))
    record_data(made)
    with pytest.raises(ReleaseError, match=r"version 0\.1\.0 was already released \(published with DVC md5 "
                                           r"[0-9a-f]{32}\.dir\) and these inputs make other bytes"):
        make_release(made.data, "0.1.0", made.root / "release", made.params)
    assert not (made.root / "release").exists()


# --- a version named alone, without a tag (tags do not travel with every clone) -------------------------

def publish_untagged(project, capsys) -> str:
    """Publish 0.1.0 and commit it, without the tag; returns the commit that added 0.1.0 to published.json."""
    assert main(["publish", "--release", "release"]) == 0
    capsys.readouterr()
    git(project.root, "add", "published.json", "release.dvc")
    project.commit("testset v0.1.0")
    return git(project.root, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("name", ["0.1.0", "v0.1.0", "testset@v0.1.0"])
def test_verify_against_a_version_without_its_tag_uses_the_commit_that_published_it(made, capsys, name):
    published = publish_untagged(made, capsys)
    (made.root / "NOTES.md").write_text("a later commit\n")
    made.commit("later work")
    assert main(["verify", "release", "--against", name]) == 0
    out = capsys.readouterr().out
    assert f"release 0.1.0 verified against {name} (commit {published[:12]})" in out
    assert f"found: {name} = commit {published[:12]}, the commit that added 0.1.0 to published.json" in out
    assert re.search(r"checked: manifest\.json sha256 [0-9a-f]{16}… = published\.json \(release 0\.1\.0\)", out)
    assert main(["verify", "release", "--against", "0.0.9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 0.0.9: no published release 0.0.9") and "records 0.1.0" in err
    assert err.count("\n") == 1


def test_a_published_version_without_a_tag_is_made_again_only_byte_for_byte(made, capsys):
    import shutil

    from releases import ReleaseError

    from .conftest import record_data

    publish_untagged(made, capsys)
    shutil.rmtree(made.root / "release")
    stats = made.data / "es" / "stats.json"
    stats.write_text(stats.read_text().replace('"lang": "es"', '"lang": "es", "note": "rebuilt"'))
    record_data(made)
    with pytest.raises(ReleaseError, match=r"version 0\.1\.0 was already released \(published with DVC md5"):
        make_release(made.data, "0.1.0", made.root / "release", made.params)


def test_checkout_a_version_goes_to_the_commit_that_published_it_pulls_and_verifies(made, capsys):
    import shutil

    published = publish_untagged(made, capsys)
    (made.root / "NOTES.md").write_text("a later commit\n")
    made.commit("later work")
    shutil.rmtree(made.root / "release")
    assert main(["checkout", "0.1.0"]) == 0
    out = capsys.readouterr().out
    assert git(made.root, "rev-parse", "HEAD").strip() == published
    assert out.startswith(f"release 0.1.0: checked out commit {published[:12]}, the commit that added 0.1.0 to "
                          "published.json")
    assert "pulled: release/" in out and "release: release 0.1.0 verified against 0.1.0" in out
    assert (made.root / "release" / "manifest.json").is_file()
    assert git(made.root, "status", "--porcelain") == ""
    assert main(["checkout", "0.1.0"]) == 0  # again: nothing to move
    assert f"release 0.1.0: already at commit {published[:12]}" in capsys.readouterr().out


def test_checkout_says_the_clone_is_on_a_detached_head_and_the_command_that_goes_back(made, capsys):
    """From a branch, the printed command switches back to it; from a detached HEAD (another version checked out,
    where `git switch -` fails: "a branch is expected"), it goes back to that commit."""
    published = publish_untagged(made, capsys)
    (made.root / "NOTES.md").write_text("a later commit\n")
    made.commit("later work")
    tip = git(made.root, "rev-parse", "HEAD").strip()
    assert main(["checkout", "0.1.0", "--no-pull"]) == 0
    out = capsys.readouterr().out
    assert "the clone is now on a detached HEAD (no branch): `git switch main` goes back to branch main" in out, out
    assert git(made.root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD"  # detached, as it says
    git(made.root, *out.split("`")[1].split()[1:])  # the printed command, as printed
    assert git(made.root, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(made.root, "rev-parse", "HEAD").strip() == tip
    git(made.root, "checkout", "-q", "--detach", "HEAD")  # a detached HEAD at the tip, then the version
    assert main(["checkout", "0.1.0", "--no-pull"]) == 0
    out = capsys.readouterr().out
    assert f"`git switch --detach {tip[:12]}` goes back to the commit it was at" in out, out
    git(made.root, *out.split("`")[1].split()[1:])
    assert git(made.root, "rev-parse", "HEAD").strip() == tip


@pytest.mark.parametrize("spoil, message", [
    (lambda root: (root / "params.yaml").write_text("languages: [pt]\n"),
     r"the work tree has uncommitted changes \(1 file\(s\): params\.yaml\); commit or stash them"),
    (None, r"9\.9\.9: no published release 9\.9\.9 in the history of published\.json \(it records 0\.1\.0\)"),
], ids=["dirty-tree", "unknown-version"])
def test_checkout_refuses_with_one_error_line(made, capsys, spoil, message):
    publish_untagged(made, capsys)
    head = git(made.root, "rev-parse", "HEAD")
    if spoil:
        spoil(made.root)
    assert main(["checkout", "0.1.0" if spoil else "9.9.9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and re.search(message, err), err
    assert git(made.root, "rev-parse", "HEAD") == head
    assert main(["checkout", "HEAD"]) == 2
    assert "checkout takes a published version X.Y.Z" in capsys.readouterr().err
