import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from tests.import_trace import uncovered

from eval.testset import read_testset, write_testset
from releases import ReleaseError, make_release, verify_release
from releases.__main__ import main
from releases.card import SOURCE_DATASET, render_card
from languages import load

from .conftest import git, record_data, small_testset


def make(project, version="0.1.0", out=None):
    return make_release(project.data, version, out or project.root / "release", project.params)


def test_release_ships_the_test_sets_byte_for_byte_with_a_manifest(project):
    (project.data / "pt" / "translations.parquet").write_bytes(b"builder working file")
    manifest = make(project)
    release = project.root / "release"
    listed = {f["path"]: f for f in manifest["files"]}
    expected = {"README.md"} | {f"{lang}/{name}" for lang in ("pt", "es")
                                for name in ("queries.parquet", "corpus.parquet", "qrels.tsv", "qrels.parquet", "stats.json")}
    assert set(listed) == expected
    for rel, entry in listed.items():
        assert entry["sha256"] == hashlib.sha256((release / rel).read_bytes()).hexdigest()
        assert entry["bytes"] == (release / rel).stat().st_size
    for name in ("queries.parquet", "corpus.parquet", "qrels.tsv", "stats.json"):
        assert (release / "pt" / name).read_bytes() == (project.data / "pt" / name).read_bytes()
    assert listed["pt/queries.parquet"]["rows"] == 5
    assert listed["pt/corpus.parquet"]["rows"] == 8
    assert listed["pt/qrels.tsv"]["rows"] == listed["pt/qrels.parquet"]["rows"] == 7
    assert listed["README.md"]["rows"] is None
    umask = os.umask(0)
    os.umask(umask)
    assert release.stat().st_mode & 0o777 == 0o777 & ~umask  # not the private mode of a temp dir
    assert manifest["version"] == "0.1.0" and manifest["tag"] == "testset@v0.1.0"
    # Only what the release stage depends on: nothing that changes from one commit to the next.
    params = yaml.safe_load(project.params.read_text())
    assert manifest["params"] == {"languages": params["languages"], "release": params["release"]}
    assert "git" not in manifest and git(project.root, "rev-parse", "HEAD").strip()[:12] not in json.dumps(manifest)
    assert manifest["toolkit"]["version"]
    assert json.loads((release / "manifest.json").read_text()) == manifest
    # A release is a test set eval can read directly.
    ts = read_testset(release, "es")
    assert ts.queries.height == 5 and ts.qrels.height == 7


def test_same_inputs_make_the_same_bytes_at_every_commit(project):
    first = project.root / "a"
    make(project, out=first)
    (project.root / "NOTES.md").write_text("an unrelated change\n")
    project.commit("an unrelated commit")
    second = project.root / "b"
    make(project, out=second)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert len(files) == 12
    for rel in files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel


def test_card_states_provenance_counts_metrics_limitations_and_citation(project):
    make(project)
    card = (project.root / "release" / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["pt", "pt-qrels", "es", "es-qrels"]
    assert header["configs"][0]["data_files"] == [{"split": "queries", "path": "pt/queries.parquet"},
                                                 {"split": "corpus", "path": "pt/corpus.parquet"}]
    assert header["license"] == "apache-2.0"
    assert SOURCE_DATASET["commit"] in card and "Apache-2.0" in card and "Zbib et al. (2022)" in card
    assert "`fxtranslate` version `0.5.0`" in card and "She is a {title}." in card
    assert "Corrections by people in Argilla: 1 of 13 items have `status = corrected`" in card
    # each item's origin counted once (issue 35): the corrected item as a person's, the others as machine text
    assert "Where the 13 items' texts come from: machine translation as output 12; corrected by a person in Argilla 1." in card
    assert "1 translation corrections, 0 relevance labels" in card
    assert "flagged for review: 3 (uninflected feminine: 2)" in card
    assert "| PT | 2 | 1 | 5 | 3 | 2 | 8 | 7 |" in card
    # The paper's Table 1 (García-Sardiña et al. 2025) right under each language's row.
    rows = card.splitlines()
    assert rows[rows.index("| PT | 2 | 1 | 5 | 3 | 2 | 8 | 7 |") + 1] == \
        "| PT, paper (Google Translate) | 75 | 29 | 179 | 1703 | 899 | 4305 | not given |"
    assert "| ES, paper (Google Translate) | 81 | 23 | 185 | 2052 | 557 | 4661 | not given |" in card
    assert "The translators (`fxtranslate`) are not the paper's" in card
    assert "T also counts" not in card  # every fixture title is paired or neutral
    assert "RBO_ext(p=0.98)" in card and "MAP" in card and "AO" in card
    assert "Inclusive forms are made by rule" in card and "(2 in `pt`, 2 in `es`), the occupation is kept" in card and "Unreviewed items" in card
    assert "@misc{garcia-sardina2025gendered" in card and "testset@v0.1.0" in card


def test_card_explains_unpaired_titles_and_names_the_papers_translator():
    es = small_testset("es")
    stats = {**es.stats, "translator": "google", "queries": {**es.stats["queries"], "pairs": 1, "titles": 4, "feminine": 1}}
    # an uninflected feminine, dropped: its masculine stays unpaired
    unpaired = dataclasses.replace(es, queries=es.queries.filter(pl.col("id") != "q-f2"), stats=stats)
    card = render_card("0.1.0", "testset@v0.1.0", [unpaired], "0.1.0", {unpaired.lang: load(unpaired.lang)})
    assert "| ES | 1 | 1 | 4 | 3 | 2 | 8 | 7 |" in card
    assert "T also counts titles without their other form (1 queries titles in `es`)" in card
    assert "The translator is the paper's (Google Translate)" in card and "are not the paper's" not in card
    assert "`pt`" not in card.split("## Counts")[1]  # a language not in the release gets no paper row


def test_refuses_a_missing_language(project):
    subprocess.run(["rm", "-r", str(project.data / "es")], check=True)
    with pytest.raises(ReleaseError, match=r"language\(s\) es missing"):
        make(project)
    assert not (project.root / "release").exists()


def test_refuses_counts_that_disagree_with_the_stats(project):
    stats_path = project.data / "pt" / "stats.json"
    stats = json.loads(stats_path.read_text())
    stats["corpus"]["neutral"] = 3
    stats_path.write_text(json.dumps(stats))
    with pytest.raises(ReleaseError, match=r"pt/stats\.json: counts disagree.*corpus\.neutral is 3 but the files hold 2"):
        make(project)


def test_a_set_built_as_a_version_is_released_as_that_version_only(project):
    """stats.json's `version` (builder postprocess --version, the pipeline's build) names what results call the
    set; a release under another version would give the same files two names."""
    for lang in ("pt", "es"):
        ts = small_testset(lang)
        write_testset(dataclasses.replace(ts, stats={**ts.stats, "version": "0.2.0"}), project.data)
    record_data(project)
    with pytest.raises(ReleaseError, match=r"pt/stats\.json: built as version 0\.2\.0, not 0\.1\.0; rebuild it as 0\.1\.0 "
                                           r"\(set release\.version: 0\.1\.0 in params\.yaml and run `dvc repro`"):
        make(project, "0.1.0")
    assert not (project.root / "release").exists()
    manifest = make(project, "0.2.0")
    assert manifest["version"] == "0.2.0"
    assert json.loads((project.root / "release" / "pt" / "stats.json").read_text())["version"] == "0.2.0"


def test_refuses_stats_without_the_table1_counts(project):
    ts = small_testset("pt")
    del ts.stats["queries"]["pairs"]
    write_testset(ts, project.data)
    with pytest.raises(ReleaseError, match=r"no 'queries\.pairs'"):
        make(project)


def test_refuses_uncommitted_params(project):
    project.params.write_text(project.params.read_text() + "eval:\n  seed: 1\n")
    with pytest.raises(ReleaseError, match=r"(?s)uncommitted changes to tracked inputs.*params\.yaml"):
        make(project)


def test_refuses_an_uncommitted_corrections_file(project):
    (project.root / "corrections").mkdir()
    (project.root / "corrections" / "pt.jsonl").write_text("{}\n")
    with pytest.raises(ReleaseError, match=r"(?s)uncommitted.*corrections/pt\.jsonl"):
        make(project)


def test_accepts_the_empty_files_a_new_languages_corrections_stage_created(project):
    """Making a language a default: the same `dvc repro` run's corrections@<lang> stage creates its empty
    corrections and rules files (no corrections), which the release stage then met as uncommitted (issue 35)."""
    (project.root / "corrections").mkdir()
    for name in ("nl.jsonl", "nl.rules.jsonl"):
        (project.root / "corrections" / name).write_bytes(b"")
    make(project)
    shutil.rmtree(project.root / "release")
    (project.root / "corrections" / "nl.jsonl").write_text("{}\n")  # one with content is an input to commit
    with pytest.raises(ReleaseError, match=r"(?s)uncommitted.*corrections/nl\.jsonl"):
        make(project)


def test_refuses_a_deleted_tracked_input(project):
    (project.root / "corrections").mkdir()
    (project.root / "corrections" / "es.jsonl").write_text("{}\n")
    project.commit("corrections for es")
    (project.root / "corrections" / "es.jsonl").unlink()
    with pytest.raises(ReleaseError, match=r"(?s)uncommitted.* D corrections/es\.jsonl"):
        make(project)


def test_refuses_a_version_that_has_a_tag(project):
    git(project.root, "tag", "testset@v0.1.0")
    with pytest.raises(ReleaseError, match=r"version 0\.1\.0 was already released \(tag testset@v0\.1\.0"):
        make(project)


def test_refuses_to_overwrite_the_same_version_but_replaces_an_older_one(project):
    make(project, "0.1.0")
    with pytest.raises(ReleaseError, match=r"already holds release 0\.1\.0"):
        make(project, "0.1.0")
    assert make(project, "0.2.0")["version"] == "0.2.0"
    assert verify_release(project.root / "release").ok


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "01.2.3", "1.2.3-rc1"])
def test_refuses_a_malformed_version(project, version):
    with pytest.raises(ReleaseError, match="not of the form X.Y.Z"):
        make(project, version)


def test_refuses_an_invalid_test_set_naming_the_file(project):
    pl.DataFrame({"id": ["x"]}).write_parquet(project.data / "es" / "corpus.parquet")
    with pytest.raises(ReleaseError, match=r"es/corpus\.parquet: missing column"):
        make(project)


def test_refuses_outside_a_git_repository(tmp_path, project):
    params = tmp_path / "elsewhere" / "params.yaml"
    params.parent.mkdir()
    params.write_text(project.params.read_text())
    with pytest.raises(ReleaseError, match="not inside a git repository"):
        make_release(project.data, "0.1.0", tmp_path / "out", params)


def test_cli_prints_error_and_exits_2(project, capsys):
    subprocess.run(["rm", "-r", str(project.data / "pt")], check=True)
    code = main(["make", "--params", str(project.params), "--data", str(project.data),
                 "--version", "0.1.0", "--out", str(project.root / "release")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "pt missing" in err


def test_refuses_data_changed_after_dvc_recorded_it(project):
    stats = project.data / "es" / "stats.json"
    stats.write_text(stats.read_text().replace('"lang": "es"', '"lang": "es", "note": "edited by hand"'))
    with pytest.raises(ReleaseError, match=r"data/es/stats\.json: md5 [0-9a-f]{32}, but data\.dvc, folder data "
                                           r"records [0-9a-f]{32}: the data is not what this commit built"):
        make(project)
    assert not (project.root / "release").exists()
    record_data(project)  # the edit recorded and committed: now the commit says how the data was made
    assert make(project)["counts"]["es"]["qrels"] == 7


def test_refuses_data_that_dvc_does_not_track(project):
    shutil.copytree(project.data, project.root / "built")
    git(project.root, "add", "built")  # in git, but no DVC record says how it was built
    project.commit("a data folder outside the pipeline")
    with pytest.raises(ReleaseError, match=r"built/pt/queries\.parquet: not a DVC output recorded in dvc\.lock"):
        make_release(project.root / "built", "0.1.0", project.root / "release", project.params)


def test_refuses_data_outside_the_repository(project, tmp_path):
    shutil.copytree(project.data, tmp_path / "elsewhere")
    with pytest.raises(ReleaseError, match=r"--data .*elsewhere lies outside the repository"):
        make_release(tmp_path / "elsewhere", "0.1.0", project.root / "release", project.params)


def test_refuses_untracked_params(project, tmp_path):
    mine = project.root / "params-mine.yaml"
    mine.write_text(project.params.read_text())
    with pytest.raises(ReleaseError, match=r"--params params-mine\.yaml is not tracked by git"):
        make_release(project.data, "0.1.0", project.root / "release", mine)
    git(project.root, "add", "params-mine.yaml")  # staged is not committed either
    with pytest.raises(ReleaseError, match=r"uncommitted changes to tracked inputs.*\n.*A  params-mine\.yaml"):
        make_release(project.data, "0.1.0", project.root / "release", mine)


def test_cli_takes_defaults_from_the_release_params(project, capsys, monkeypatch):
    params = yaml.safe_load(project.params.read_text())
    params["release"].update({"data": "data", "out": "release", "version": "0.3.0"})
    project.params.write_text(yaml.safe_dump(params))
    project.commit("release 0.3.0")
    monkeypatch.chdir(project.root)
    assert main(["make"]) == 0
    assert "release 0.3.0 (pt, es) written to release" in capsys.readouterr().out
    assert verify_release(project.root / "release").version == "0.3.0"


def _stats(project, lang="pt"):
    path = project.data / lang / "stats.json"
    return path, json.loads(path.read_text())


def _counts_disagree(project):
    path, stats = _stats(project)
    stats["queries"]["titles"] = 6
    path.write_text(json.dumps(stats))


def _uncommitted_params(project):
    project.params.write_text(project.params.read_text() + "# edited\n")


def _existing_folder(project):
    make(project, "0.1.0")


def _out_is_a_file(project):
    (project.root / "release").write_text("not a folder\n")


def _invalid_params(project):
    project.params.write_text("languages: [pt, es\n")


def _invalid_stats(project):
    (project.data / "es" / "stats.json").write_text('{"lang": "es",\n')


# Every refusal through the CLI: `error: ...` naming what is wrong, exit status 2, no traceback.
@pytest.mark.parametrize("spoil, message", [
    (lambda p: subprocess.run(["rm", "-r", str(p.data / "es")], check=True), r"language\(s\) es missing"),
    (_counts_disagree, r"pt/stats\.json: counts disagree with the test set: queries\.titles is 6 but the files hold 5"),
    (_uncommitted_params, r"uncommitted changes to tracked inputs.*\n.*params\.yaml"),
    (lambda p: git(p.root, "tag", "testset@v0.1.0"), r"version 0\.1\.0 was already released"),
    (_existing_folder, r"release already holds release 0\.1\.0"),
    (_out_is_a_file, r"release exists and is a file, not a folder"),
    (_invalid_params, r"params\.yaml:2: not valid YAML"),
    (_invalid_stats, r"es/stats\.json:2: not valid JSON"),
    (lambda p: p.params.write_text("languages: [pt, es]\nrelease: [data]\n"), r"params\.yaml: release is \['data'\]; expected a mapping"),
], ids=["missing-language", "counts", "uncommitted", "tagged-version", "released-folder", "out-is-file",
        "params-yaml", "stats-json", "release-not-mapping"])
def test_cli_refusals_print_error_and_exit_2(project, capsys, spoil, message):
    spoil(project)
    capsys.readouterr()
    code = main(["make", "--params", str(project.params), "--data", str(project.data),
                 "--version", "0.1.0", "--out", str(project.root / "release")])
    captured = capsys.readouterr()
    assert code == 2 and captured.err.startswith("error: ") and "Traceback" not in captured.err
    assert re.search(message, captured.err), captured.err


def test_cli_names_the_flags_that_have_no_value(tmp_path, capsys, monkeypatch):
    # a params file named that is not there is refused as every command line refuses it (issue 38)
    code = main(["make", "--params", str(tmp_path / "missing.yaml"), "--version", "0.1.0"])
    err = capsys.readouterr().err
    assert code == 2 and err == f"error: {tmp_path / 'missing.yaml'}: params file not found; check --params (or run " \
                                "from the repository root)\n"
    (tmp_path / "p.yaml").write_text("languages: [pt]\n")
    code = main(["make", "--params", str(tmp_path / "p.yaml"), "--version", "0.1.0"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --data, --out not given") and "has no release.data, release.out" in err


def test_an_empty_release_section_takes_the_defaults(project):
    project.params.write_text("languages: [pt, es]\nrelease:\n")
    project.commit("no release settings")
    manifest = make(project)
    assert manifest["params"] == {"languages": ["pt", "es"], "release": None}
    with pytest.raises(ReleaseError, match=r"params\.yaml: release is 3; expected a mapping"):
        project.params.write_text("languages: [pt, es]\nrelease: 3\n")
        project.commit("release is a number")
        make(project, "0.2.0")


def test_the_release_stage_depends_on_the_code_it_runs_and_every_pack():
    """dvc.yaml's release stage reruns when what `python -m releases make` imports or reads changes: the package
    folders, so a new language (pack + params, docs/new-language.md) or a new module touches no stage."""
    repo = Path(__file__).resolve().parents[2]
    stage = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]["release"]
    deps = [str(d) for d in stage["deps"]]
    code = ("import sys, releases.__main__; print('\\n'.join(sorted(m.__file__ for m in list(sys.modules.values()) "
            "if getattr(m, '__file__', None))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, check=True)
    ran = {Path(f).resolve().relative_to(repo).as_posix() for f in done.stdout.splitlines()
           if Path(f).resolve().is_relative_to(repo) and ".venv" not in Path(f).parts}
    assert ran and not uncovered(ran, deps), f"modules `python -m releases make` imports, not covered: {uncovered(ran, deps)}"
    # the card reads the packs: the folder holds every one, a new language's too
    assert "languages" in deps and not [d for d in deps if d.startswith("languages/packs/")]
    # `data` and the ESCO family's root (release.esco) are the pipeline's own outputs
    assert "${release.esco}" in deps and all((repo / d).exists() for d in deps if d not in ("data", "${release.esco}"))


def test_card_shows_the_annotators_agreement_beside_the_corrections(tmp_path):
    """annotation pull writes corrections/<lang>.agreement.jsonl; the card gives its figures, says when no record had
    two annotators, and a malformed file is one error naming file:line."""
    from releases.make import read_agreement

    pt = small_testset("pt")
    pt = dataclasses.replace(pt, stats={**pt.stats, "corrections": {"file": "corrections/pt.jsonl", "translations": 3,
                                                                      "relevance": 40}})
    (tmp_path / "corrections").mkdir()
    assert read_agreement(tmp_path, pt) == []
    card = render_card("0.1.0", "testset@v0.1.0", [pt], "0.1.0", {"pt": load("pt")}, {"pt": read_agreement(tmp_path, pt)})
    assert "Annotator agreement: not measured (no record was answered by two annotators)" in card
    figures = [{"kind": "relevance", "question": "relevant", "records": 40, "alpha": 0.7123, "kappa": 0.7},
               {"kind": "translation", "question": "gender_marking", "records": 3, "alpha": "undefined", "kappa": None}]
    path = tmp_path / "corrections" / "pt.agreement.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in figures), encoding="utf-8")
    card = render_card("0.1.0", "testset@v0.1.0", [pt], "0.1.0", {"pt": load("pt")}, {"pt": read_agreement(tmp_path, pt)})
    assert ("Annotator agreement (records with two or more annotators): relevance `relevant`: 40 records, alpha 0.71, "
            "kappa 0.70; translation `gender_marking`: 3 records, alpha undefined, kappa n/a.") in card
    # a set built without annotations says nothing about agreement
    none = dataclasses.replace(pt, stats={**pt.stats, "corrections": {"file": "corrections/pt.jsonl", "translations": 0,
                                                                        "relevance": 0}})
    assert read_agreement(tmp_path, none) is None
    path.write_text(json.dumps(figures[0]) + "\n" + json.dumps({"kind": "relevance", "records": "many"}) + "\n")
    with pytest.raises(ReleaseError, match=r"pt\.agreement\.jsonl:2: expected an object with exactly"):
        read_agreement(tmp_path, pt)


def test_card_names_the_term_rules_a_set_was_built_with():
    """Items a term rule changed keep status machine; the card says a rule reviewed by annotators changed them."""
    pt = small_testset("pt")
    plain = dataclasses.replace(pt, stats={**pt.stats, "corrections": {"file": "corrections/pt.jsonl", "translations": 0,
                                                                         "relevance": 0}})
    assert "Term rules" not in render_card("0.1.0", "testset@v0.1.0", [plain], "0.1.0", {"pt": load("pt")})
    rules = {"file": "corrections/pt.rules.jsonl", "sources_changed": 16, "matching_nothing": [],
             "rules": [{"id": "r1"}, {"id": "r2"}]}
    ruled = dataclasses.replace(pt, stats={**plain.stats, "corrections": {**plain.stats["corrections"], "rules": rules}})
    card = render_card("0.1.0", "testset@v0.1.0", [ruled], "0.1.0", {"pt": load("pt")})
    assert ("Term rules applied: 2 reviewed rule(s) changed the titles of 16 English sources; their items have "
            "`status = rule` (unless a person or the review decided them) and name the rule in `provenance` "
            "(`…+rule:<id>`).") in card
