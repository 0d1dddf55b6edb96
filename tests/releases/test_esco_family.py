"""The ESCO family in a release (issue 36): `releases make` packs data-esco/<lang> as <release>/esco/<lang>/ with the
job-title sets' files, the manifest lists and `verify` checks them, both cards name the source, licence, ESCO version
and what relevance means, `datasets` and eval read the family by path; a release whose family is not there is refused,
never made without it; the job-title files keep their bytes and names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from eval import testset as format_
from eval.testset import read_testset
from releases import ReleaseError, make_release, verify_release
from releases.__main__ import main
from releases.make import computed_counts

from .conftest import ESCO_LANGUAGES, add_esco_family, dvc, small_esco_testset

LANGUAGE_FILES = ("queries.parquet", "corpus.parquet", "qrels.tsv", "qrels.parquet", "stats.json")
REPO = Path(__file__).resolve().parents[2]


def make(project, out="release", version="0.1.0"):
    return make_release(project.data, version, project.root / out, project.params)


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_family_is_packed_listed_and_verified_beside_unchanged_job_title_files(project):
    before = make(project, "before")  # the same project without the family: today's release
    add_esco_family(project)
    manifest = make(project)
    release = project.root / "release"
    listed = {f["path"]: f for f in manifest["files"]}
    expected = {"esco/README.md"} | {f"esco/{lang}/{name}" for lang in ESCO_LANGUAGES for name in LANGUAGE_FILES}
    assert expected <= set(listed) and {p for p in listed if p.startswith("esco/")} == expected
    assert manifest["languages"] == ["pt", "es"]  # the job-title family, as before
    assert manifest["families"] == {"esco": {"languages": list(ESCO_LANGUAGES), "counts": {
        lang: computed_counts(small_esco_testset(lang)) for lang in ESCO_LANGUAGES}}}
    assert manifest["params"]["esco"] == {"languages": list(ESCO_LANGUAGES)}
    for lang in ESCO_LANGUAGES:  # byte copies of what the builder wrote
        for name in ("queries.parquet", "corpus.parquet", "qrels.tsv", "stats.json"):
            assert sha256(release / "esco" / lang / name) == sha256(project.root / "data-esco" / lang / name)
    # every job-title file has the name and the bytes of the release made without the family
    old = {f["path"]: f["sha256"] for f in before["files"] if f["path"] != "README.md"}
    assert {p: listed[p]["sha256"] for p in old} == old
    result = verify_release(release)
    assert result.ok, result.problems
    assert result.checked == len(manifest["files"])
    assert main(["verify", str(release)]) == 0


@pytest.mark.parametrize("spoil, problem", [
    (lambda r: (r / "esco/de/qrels.tsv").write_text("q-m1\t0\td-m1\t1\n"), "changed: esco/de/qrels.tsv (sha256"),
    (lambda r: (r / "esco/pt/stats.json").unlink(), "missing: esco/pt/stats.json"),
    (lambda r: (r / "esco/README.md").write_text("edited"), "changed: esco/README.md (sha256"),
    (lambda r: (r / "esco/fr").mkdir(), "extra: esco/fr/ (a folder that is not one of the esco family's languages)"),
    (lambda r: (r / "esco/de/notes.txt").write_text("x"), "extra: esco/de/notes.txt (not in the manifest)"),
], ids=["changed", "missing", "card", "extra-folder", "extra-file"])
def test_a_damaged_esco_file_fails_verify(project, capsys, spoil, problem):
    add_esco_family(project)
    make(project)
    release = project.root / "release"
    spoil(release)
    assert [p for p in verify_release(release).problems if p.startswith(problem)]
    assert main(["verify", str(release)]) == 2
    out, err = capsys.readouterr()
    assert problem in out and err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_a_damaged_esco_file_rehashed_into_the_manifest_is_unreadable(project):
    add_esco_family(project)
    make(project)
    release = project.root / "release"
    path = release / "esco" / "de" / "qrels.tsv"
    path.write_text(path.read_text() + "q-m1\t0\td-gone\t1\n")  # a document no corpus holds
    manifest = json.loads((release / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == "esco/de/qrels.tsv":
            entry["sha256"], entry["rows"] = sha256(path), entry["rows"] + 1
    (release / "manifest.json").write_text(json.dumps(manifest))
    assert [p for p in verify_release(release).problems if p.startswith("unreadable: ") and "esco/de" in p]


@pytest.mark.parametrize("families, message", [
    ([], "'families' must be a non-empty mapping"),
    ({"melo": {"languages": ["de"]}}, "'families' names melo, not a family a release carries (esco)"),
    ({"esco": {"languages": ["de", "de"]}}, "'families.esco.languages' must be a non-empty list of distinct"),
    ({"esco": {"languages": ["../x"]}}, "'families.esco.languages' must be a non-empty list of distinct"),
    ({"esco": {"languages": ["de"]}}, "(esco/pt/corpus.parquet) is in a folder that is not one of the esco family's "
                                      "languages (de)"),
    (None, "(esco/README.md) is in a folder that is not one of the release's languages (pt, es)"),
], ids=["empty", "unknown", "repeated", "not-a-code", "files-of-another-language", "no-families"])
def test_a_manifest_with_a_damaged_family_is_refused(project, capsys, families, message):
    add_esco_family(project, languages=("pt",))
    make(project)
    release = project.root / "release"
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["families"] = families
    if families is None:
        del manifest["families"]
    (release / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(release)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


def test_the_cards_name_the_source_licence_versions_relevance_and_counts(project):
    from builder.esco import LICENCE, MELO, RELEVANCE
    from releases.card import MELO_SOURCE

    assert MELO_SOURCE["commit"] == MELO["commit"] and MELO_SOURCE["repository"].endswith(MELO["repository"])
    add_esco_family(project)
    make(project)
    release = project.root / "release"
    card = (release / "README.md").read_text(encoding="utf-8")
    family = (release / "esco" / "README.md").read_text(encoding="utf-8")
    section = card.split("## The ESCO family (`esco/`)")[1].split("\n## ")[0]
    for text in (section, family):
        assert f"https://github.com/Avature/melo-benchmark at commit `{MELO['commit']}`" in text
        assert "the repository is MIT-licensed, the labels are ESCO's" in text
        assert f"- **Licence**: {LICENCE}." in text and "CC BY 4.0" in text
        assert f"- **Relevance**: {RELEVANCE}." in text
        # the ESCO version of each set, and its counts (the fixture's, by construction)
        assert "| DE | v1.0.3 | `deu_q_de_c_de` | 5 | 2 | 1 | 5 | 3 | 2 | 8 | 7 | 1 |" in text
        assert "| PT | v1.0.3 | `prt_q_pt_c_pt` | 5 | 2 | 1 | 5 | 3 | 2 | 8 | 7 | 1 |" in text
    assert 'datasets.load_dataset("<this folder>", "esco-de")' in section
    assert "--data <this folder>/esco --model tfidf-char" in section
    assert f"The ESCO family (`esco/`): {LICENCE}. Read from the MELO benchmark" in card
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == ["apache-2.0", "cc-by-4.0"] and header["language"] == ["pt", "es", "de"]
    assert {c["config_name"] for c in header["configs"]} >= {"esco-de", "esco-de-qrels", "esco-pt", "esco-pt-qrels"}
    family_header = yaml.safe_load(family.split("---\n")[1])
    assert family_header["license"] == "cc-by-4.0"
    assert [c["config_name"] for c in family_header["configs"]] == ["de", "de-qrels", "pt", "pt-qrels"]
    assert "### German (`de`)" in family and "Source: ESCO v1.0.3" in family and "No machine translation." in family
    # the job-title part of the card says nothing of ESCO's labels as translations
    assert "ESCO" not in card.split("## The ESCO family")[0].split("- A second family")[0]


def test_a_release_without_the_family_has_todays_card_and_manifest(project):
    manifest = make(project)
    release = project.root / "release"
    assert "families" not in manifest and "esco" not in manifest["params"] and not (release / "esco").exists()
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "ESCO" not in card and "license: apache-2.0\n" in card


def _refused(project, capsys, *extra: str) -> str:
    code = main(["make", "--params", str(project.params), "--data", str(project.data), "--version", "0.1.0",
                 "--out", str(project.root / "release"), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    assert not (project.root / "release").exists()
    return err[0]


def test_a_release_whose_family_is_not_built_is_refused_naming_what_is_missing(project, capsys):
    add_esco_family(project)
    dvc(project.root, "remove", "-q", "data-esco.dvc")
    import shutil

    shutil.rmtree(project.root / "data-esco")
    project.commit("no family")
    err = _refused(project, capsys)
    assert f"{project.root / 'data-esco'}: missing: the ESCO family of esco.languages (de, pt) is not built" in err
    assert "python -m builder defaults" in err


def test_a_missing_esco_language_is_refused(project, capsys):
    add_esco_family(project, languages=("pt",))
    params = yaml.safe_load(project.params.read_text())
    params["esco"]["languages"] = ["de", "pt"]
    project.params.write_text(yaml.safe_dump(params))
    project.commit("asks for de too")
    err = _refused(project, capsys)
    assert "data-esco: language(s) de missing (params 'esco.languages' asks for de, pt; built: pt)" in err
    assert "or remove them from 'esco.languages'" in err


def test_a_family_without_a_folder_named_is_refused(project, capsys):
    add_esco_family(project)
    params = yaml.safe_load(project.params.read_text())
    del params["release"]["esco"]
    project.params.write_text(yaml.safe_dump(params))
    project.commit("no release.esco")
    err = _refused(project, capsys)
    assert "esco.languages lists the ESCO family (de, pt) but release.esco names no folder holding it" in err
    # --esco names it on the command line
    assert main(["make", "--params", str(project.params), "--data", str(project.data), "--version", "0.1.0",
                 "--out", str(project.root / "release"), "--esco", str(project.root / "data-esco")]) == 0
    assert "release 0.1.0 (pt, es; esco/: de, pt) written to" in capsys.readouterr().out


def test_the_families_are_not_mixed(project, capsys):
    from eval.testset import write_testset

    from .conftest import record_data, small_testset

    add_esco_family(project)
    write_testset(small_testset("de"), project.root / "data-esco")  # a job-title set where an ESCO set belongs
    dvc(project.root, "add", "-q", "data-esco")
    project.commit("a job-title set in data-esco")
    assert "data-esco/de/stats.json: not an ESCO set" in _refused(project, capsys)
    write_testset(small_esco_testset("de"), project.root / "data-esco")
    dvc(project.root, "add", "-q", "data-esco")
    write_testset(small_esco_testset("pt"), project.data)  # an ESCO set among the job-title sets
    record_data(project)
    assert "data/pt/stats.json: an ESCO set among the job-title sets" in _refused(project, capsys)


def test_esco_data_not_recorded_by_dvc_is_refused(project, capsys):
    add_esco_family(project)
    from eval.testset import write_testset

    ts = small_esco_testset("pt")
    ts.stats["esco"]["occupations"] = 6  # rebuilt outside the pipeline
    write_testset(ts, project.root / "data-esco")
    assert "data-esco/pt/stats.json: md5 " in _refused(project, capsys)


def test_datasets_and_eval_read_the_family_by_path(project, tmp_path):
    add_esco_family(project)
    params = yaml.safe_load(project.params.read_text())
    params["release"]["beir"] = True
    project.params.write_text(yaml.safe_dump(params))
    project.commit("beir")
    manifest = make(project)
    release = project.root / "release"
    assert verify_release(release).ok
    assert "esco/de/beir/masculine-queries_feminine-corpus/qrels/test.tsv" in {f["path"] for f in manifest["files"]}
    load = ("import json, sys, datasets\n"
            "release = sys.argv[1]\n"
            "out = {}\n"
            "for where, config in ((release, 'esco-de'), (release + '/esco', 'de')):\n"
            "    items = datasets.load_dataset(where, config)\n"
            "    qrels = datasets.load_dataset(where, config + '-qrels')['test']\n"
            "    out[config] = [[x['id'] for x in items['queries']], [x['id'] for x in items['corpus']],\n"
            "                   sorted([x['query_id'], x['doc_id']] for x in qrels)]\n"
            "print(json.dumps(out))\n")
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", load, str(release)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    ts = read_testset(release / "esco", "de")
    want = [ts.queries["id"].to_list(), ts.corpus["id"].to_list(),
            sorted([q, d] for q, d in ts.qrels.select("query_id", "doc_id").iter_rows())]
    assert loaded == {"esco-de": want, "de": want}
    # eval: the family folder is a test-set root named by the release's version; the release root holds only
    # the job-title languages
    assert format_.testset_version(ts, release / "esco") == "v0.1.0"
    assert format_.list_languages(release) == ["es", "pt"] and format_.list_languages(release / "esco") == ["de", "pt"]
    done = subprocess.run([sys.executable, "-m", "eval", "run", "--data", str(release / "esco"), "--model", "tfidf-char",
                           "--out", str(tmp_path / "results"), "--cache", str(tmp_path / "cache"), "--quiet"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = (tmp_path / "results").glob("tfidf-char__*.json")
    result = json.loads(path.read_text())
    assert sorted(result["languages"]) == list(ESCO_LANGUAGES)
    assert {v["testset_version"] for v in result["languages"].values()} == {"v0.1.0"}
