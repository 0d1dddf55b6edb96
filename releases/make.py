"""Make a release folder from what the builder wrote, refusing anything that would not be reproducible."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

import polars as pl

from config.files import write_folder_atomically
from eval.testset import (BEIR_FOLDER, ESCO_FAMILY, FEMININE, MASCULINE, VERSION_RE, TestSet, TestSetError,
                          list_languages, read_testset, table1_counts)
from languages import CODE, LanguageError, check_code, load

from .beir import BEIR_PATHS, write_beir
from .anchor import (folder_md5, git, git_root, md5_of, read_published, recorded_md5, recorded_outs, resolve_release,
                     relative_to_repo)
from .card import render_card, render_family_card
from .manifest import FAMILY_CARD, MANIFEST_NAME, ReleaseError, read_json, read_manifest, write_manifest
from .params import read_release_params

# What a release ships per language: the test set eval reads, and a Parquet copy of the qrels for
# `datasets`. The builder's working file translations.parquet stays out: it is the builder's raw
# material (schema owned by the builder), not part of the benchmark contract.
SHIPPED_FILES = ("queries.parquet", "corpus.parquet", "qrels.tsv", "stats.json")
# Everything make_release writes into --out: a release folder holding anything else (a user's note) is refused
# rather than replaced (config.files.write_folder_atomically).
_LANGUAGE_FOLDER = (rf"{CODE.pattern}"
                    rf"(/({'|'.join(map(re.escape, (*SHIPPED_FILES, 'qrels.parquet')))}|{BEIR_PATHS.pattern}))?")
# The ESCO family (esco.languages) goes into <out>/esco/: its card and one folder per language, the same files.
RELEASE_FOLDER = re.compile(rf"README\.md|{re.escape(MANIFEST_NAME)}|{_LANGUAGE_FOLDER}"
                            rf"|{ESCO_FAMILY}(/{re.escape(FAMILY_CARD)}|/{_LANGUAGE_FOLDER})?")
COUNT_KEYS = ("pairs", "neutral", "titles", MASCULINE, FEMININE)
TOOLKIT = "gendered-job-titles"


def release_tag(version: str) -> str:
    return f"testset@v{version}"


def check_version(repo: Path, version: str, out: Path) -> str | None:
    """Refuse a malformed version and an --out that cannot take it. A version already published (tagged, or
    recorded in published.json's history) may only be made again to reproduce it: returns the DVC md5 its
    commit records for the folder, which the new bytes must match."""
    if not VERSION_RE.fullmatch(version):
        raise ReleaseError(f"version {version!r} is not of the form X.Y.Z (e.g. 0.1.0)")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} exists and is a file, not a folder; choose another --out")
    if (out / MANIFEST_NAME).is_file():
        existing = read_manifest(out).get("version")
        if existing == version:
            raise ReleaseError(f"{out} already holds release {version}; choose a new version number "
                               "(or delete the folder if that release was never published)")
    elif out.exists() and any(out.iterdir()):
        raise ReleaseError(f"{out} exists and is not a release folder; choose another --out")
    try:  # its tag, or without one the commit that added it to published.json (tags do not travel with clones)
        resolved = resolve_release(repo, version)
    except ReleaseError:
        return None
    commit = resolved.commit
    recorded = [e["dvc_md5"] for e in read_published(repo, commit) if e["version"] == version]
    out_rel = relative_to_repo(out, repo)
    recorded += [o.md5 for o in recorded_outs(repo, commit) if o.path == out_rel]
    if not recorded:
        raise ReleaseError(f"version {version} was already released ({resolved.how}, {commit[:12]}) and "
                           "that commit records no digest of it to reproduce; choose a new version number")
    return recorded[0]


def check_inputs_committed(repo: Path, inputs: list[str], params_path: Path) -> None:
    """Refuse an untracked params file and uncommitted changes to the git-tracked inputs (params, pipeline,
    code, corrections) and to the DVC records (dvc.lock, *.dvc) the data is checked against. Inside `dvc repro`
    (DVC_STAGE set) dvc.lock is being rewritten by that same run, so it is left out."""
    params_rel = relative_to_repo(params_path, repo)  # repo is the params file's own repository
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files", "--error-unmatch", "--", params_rel],
                             capture_output=True, text=True)
    if tracked.returncode != 0:
        raise ReleaseError(f"--params {params_rel} is not tracked by git, so no commit can reproduce this release; "
                           f"`git add {params_rel} && git commit`, or use the committed params.yaml")
    paths = [*inputs, params_rel]  # git status accepts paths that do not exist, and so reports deleted inputs
    if "DVC_STAGE" not in os.environ:
        paths += ["dvc.lock", "*.dvc"]
    dirty = [line for line in git(repo, "status", "--porcelain", "--untracked-files=all", "--", *paths).splitlines()
             if not _created_empty(repo, line)]
    if dirty:
        shown = "\n  ".join(dirty[:20]) + ("\n  …" if len(dirty) > 20 else "")
        raise ReleaseError(f"uncommitted changes to tracked inputs in {repo}:\n  {shown}\n"
                           "commit them (or revert them) and make the release again, so that the "
                           "recorded commit reproduces it")


def _created_empty(repo: Path, status_line: str) -> bool:
    """An untracked, empty corrections or rules file (``?? corrections/<lang>.jsonl``): what the ``corrections@<lang>``
    stage creates for a language nobody has annotated (builder/corrections.py ``prepare_corrections``). It says
    "no corrections", as no file does, so the same run's release does not refuse it (issue 35)."""
    if not status_line.startswith("?? "):
        return False
    rel = status_line[3:].strip().strip('"')
    path = repo / rel
    return (Path(rel).parts[:1] == ("corrections",) and rel.endswith(".jsonl") and path.is_file()
            and path.stat().st_size == 0)


def check_data_recorded(repo: Path, data: Path, languages: list[str]) -> None:
    """Every file a release packs must be the DVC output recorded at this commit (dvc.lock or a .dvc file),
    byte for byte: then the commit that holds dvc.lock, and the tag on it, say how the data was built."""
    data_rel = relative_to_repo(data, repo)
    if data_rel is None:
        raise ReleaseError(f"--data {data} lies outside the repository {repo}: no commit records how it was "
                           "built; build it in the repository with `dvc repro` and release from there")
    outs = recorded_outs(repo)
    if not outs:
        raise ReleaseError(f"{repo}: no dvc.lock or .dvc file records the data; build it with `dvc repro` "
                           "(or track it with `dvc add`) and commit dvc.lock")
    for lang in languages:
        for name in SHIPPED_FILES:
            rel = f"{data_rel}/{lang}/{name}".removeprefix("./")
            found = recorded_md5(repo, rel, outs)
            if found is None:
                raise ReleaseError(f"{rel}: not a DVC output recorded in dvc.lock or a .dvc file, so no commit says "
                                   "how it was built; produce it with `dvc repro` and commit dvc.lock")
            actual = md5_of(repo / rel)
            if actual != found[0]:
                raise ReleaseError(f"{rel}: md5 {actual}, but {found[1]} records {found[0]}: the data is not what "
                                   "this commit built; `dvc checkout` (or `dvc repro`) and commit dvc.lock, then "
                                   "make the release again")


def computed_counts(ts: TestSet) -> dict:
    """The Table-1 counts a release records and checks stats.json against (the format's ``table1_counts``)."""
    counts = {}
    for name, items in (("queries", ts.queries), ("corpus", ts.corpus)):
        found = table1_counts(items)
        counts[name] = {key: found[key] for key in COUNT_KEYS}
    counts["qrels"] = ts.qrels.height
    return counts


def check_counts(ts: TestSet, stats_path: Path) -> None:
    found = computed_counts(ts)
    problems = []
    for part in ("queries", "corpus"):
        recorded = ts.stats.get(part)
        if not isinstance(recorded, dict):
            problems.append(f"no '{part}' counts")
            continue
        for key in COUNT_KEYS:
            if key not in recorded:
                problems.append(f"no '{part}.{key}'")
            elif recorded[key] != found[part][key]:
                problems.append(f"{part}.{key} is {recorded[key]} but the files hold {found[part][key]}")
    if ts.stats.get("qrels") != found["qrels"]:
        problems.append(f"qrels is {ts.stats.get('qrels')} but qrels.tsv holds {found['qrels']} lines")
    if problems:
        raise ReleaseError(f"{stats_path}: counts disagree with the test set: " + "; ".join(problems)
                           + "; rebuild the language (the stats and files must come from the same build)")


def check_stats_file(path: Path) -> None:
    if not path.is_file():
        raise ReleaseError(f"{path}: file missing; the release card needs the build's counts (rebuild the language)")
    stats = read_json(path, "; rebuild the language")
    if not isinstance(stats, dict):
        raise ReleaseError(f"{path}: not a JSON object of counts; rebuild the language")


def check_built_as(ts: TestSet, version: str, path: Path) -> None:
    """A set stamped with the version it was built as (stats.json ``version``: the pipeline's build) is released
    as that version only, so its results and its release name the same version."""
    built = ts.stats.get("version")
    if built is not None and built != version:
        raise ReleaseError(f"{path}: built as version {built}, not {version}; rebuild it as {version} (set "
                           f"release.version: {version} in params.yaml and run `dvc repro`, which passes it to "
                           "`builder postprocess --version`)")


def read_languages(data: Path, languages: list[str], key: str = "languages", build: str = "build them first") -> list[TestSet]:
    """Every language of params ``key`` under ``data``, read and checked as eval reads it (counts included)."""
    for lang in languages:  # the one language-code check of every CLI, before a name becomes a path
        try:
            check_code(lang, f"params '{key}' entry")
        except LanguageError as exc:
            raise ReleaseError(str(exc)) from None
    built = list_languages(data)
    missing = [lang for lang in languages if lang not in built]
    if missing:
        raise ReleaseError(f"{data}: language(s) {', '.join(missing)} missing (params '{key}' asks for "
                           f"{', '.join(languages)}; built: {', '.join(built) or 'none'}); {build} "
                           f"or remove them from '{key}'")
    testsets = []
    for lang in languages:
        check_stats_file(data / lang / "stats.json")
        try:
            ts = read_testset(data, lang)
        except TestSetError as exc:
            raise ReleaseError(str(exc)) from None
        check_counts(ts, data / lang / "stats.json")
        testsets.append(ts)
    return testsets


ESCO_BUILD = "build them with `python -m builder defaults` (or `dvc repro esco`), record them with DVC, and make the release again,"


def read_esco_family(root: Path | None, family: list[str], params_path: Path) -> list[TestSet]:
    """The ESCO family of params ``esco.languages`` from its root (release.esco, --esco): refused, never left out,
    when the root or a language is missing; each set must be an ESCO set that records its ESCO version."""
    if not family:
        return []
    if root is None:
        raise ReleaseError(f"{params_path}: esco.languages lists the ESCO family ({', '.join(family)}) but release.esco "
                           "names no folder holding it; set release.esco: data-esco (where `python -m builder defaults` "
                           "writes it) or pass --esco DIR")
    if not root.is_dir():
        raise ReleaseError(f"{root}: missing: the ESCO family of esco.languages ({', '.join(family)}) is not built; "
                           f"{ESCO_BUILD.removesuffix(',')}")
    sets = read_languages(root, family, "esco.languages", ESCO_BUILD)
    for ts in sets:
        e = ts.stats.get("esco")
        if ts.stats.get("source") != "esco" or not isinstance(e, dict) or not e.get("version"):
            raise ReleaseError(f"{root / ts.lang / 'stats.json'}: not an ESCO set (stats.json records no source esco with "
                               "its ESCO version); the ESCO family's folder holds what `python -m builder esco` writes")
    return sets


def check_job_title_sets(data: Path, testsets: list[TestSet]) -> None:
    """An ESCO set among the job-title sets would be released, counted and described as job titles."""
    for ts in testsets:
        if ts.stats.get("source") == "esco":
            raise ReleaseError(f"{data / ts.lang / 'stats.json'}: an ESCO set among the job-title sets of {data}; the "
                               "ESCO family is released from its own folder (release.esco, esco.languages)")


AGREEMENT_KEYS = {"kind", "question", "records", "alpha", "kappa"}


def read_agreement(repo: Path, ts: TestSet) -> list[dict] | None:
    """The annotators' agreement beside the corrections file the set was built with (``annotation pull`` writes
    ``corrections/<lang>.agreement.jsonl``, docs/FORMAT.md): one figure per dataset kind and question; ``[]``
    when the corrections exist but no record had two annotators; None when the set used no corrections."""
    corrections = ts.stats.get("corrections") or {}
    if not corrections.get("file") or not (corrections.get("translations") or corrections.get("relevance")):
        return None  # no annotation: nothing to agree on
    file = corrections["file"]
    figures = []
    # the annotators' (annotation pull) and the maintainers' review's (annotation review import, docs/review.md)
    for path in ((repo / file).with_suffix(".agreement.jsonl"),
                 (repo / file).with_name(f"{Path(file).stem}.review-agreement.jsonl")):
        if path.is_file():
            figures += _agreement_figures(path)
    return figures


def _agreement_figures(path: Path) -> list[dict]:
    figures = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReleaseError(f"{where}: not valid JSON ({exc.msg}); pull again (python -m annotation pull) "
                               "to rewrite it") from None
        if not isinstance(obj, dict) or set(obj) - {"round"} != AGREEMENT_KEYS or not isinstance(
                obj.get("round", ""), str) or not isinstance(obj["records"], int) or any(
                not (v is None or v == "undefined" or isinstance(v, (int, float)) and not isinstance(v, bool))
                for v in (obj["alpha"], obj["kappa"])):
            raise ReleaseError(f"{where}: expected an object with exactly {sorted(AGREEMENT_KEYS)} and, for a review, "
                               "its round (records an integer, alpha and kappa numbers, null or \"undefined\"); pull "
                               "again to rewrite it")
        figures.append(obj)
    return figures


def language_packs(params_path: Path, packs: tuple[str, ...], languages: list[str]) -> dict:
    """Each language's declaration (languages/), resolved once here for the card."""
    try:
        return {code: load(code, list(packs)) for code in languages}
    except LanguageError as exc:
        raise ReleaseError(f"{params_path}: languages: {exc}") from None


def make_release(data: str | Path, version: str, out: str | Path, params_path: str | Path = "params.yaml",
                 esco: str | Path | None = None) -> dict:
    """Package every language of params 'languages' from ``data`` into the release folder ``out``, and the ESCO
    family of params 'esco.languages' from ``esco`` (default: release.esco, from the params file's folder) into
    ``out/esco/``.

    Returns the manifest. The folder is written beside ``out`` and moved into place only when complete.
    """
    data, out, params_path = Path(data), Path(out), Path(params_path)
    settings = read_release_params(params_path)
    params, languages = settings.params, list(settings.pipeline.languages)
    family = list(settings.esco.languages)
    # release.esco is a path from the params file's folder (the repository root, where the pipeline runs)
    esco_root = (Path(esco) if esco is not None else params_path.parent / settings.release.esco
                 if settings.release.esco else None)
    if not languages:
        raise ReleaseError(f"{params_path}: needs a non-empty list 'languages' (the languages a release must contain)")
    packs = language_packs(params_path, settings.pipeline.language_packs, list(dict.fromkeys(languages + family)))
    repo = git_root(params_path.resolve().parent)
    published_md5 = check_version(repo, version, out)
    inputs = list(settings.release.tracked_inputs)
    testsets = read_languages(data, languages)
    check_job_title_sets(data, testsets)
    esco_sets = read_esco_family(esco_root, family, params_path)
    for root, sets in ((data, testsets), (esco_root, esco_sets)):
        for ts in sets:
            check_built_as(ts, version, root / ts.lang / "stats.json")
    check_inputs_committed(repo, inputs, params_path)
    check_data_recorded(repo, data, languages)
    if esco_sets:
        check_data_recorded(repo, esco_root, family)
    toolkit_version = metadata.version(TOOLKIT)

    written = {}

    def pack(sets: list[TestSet], source: Path, into: Path) -> dict[str, list[str]]:
        """Each set of ``source`` into ``into/<lang>/``; returns its BEIR configurations (with release.beir)."""
        beir = {}
        for ts in sets:
            folder = into / ts.lang
            folder.mkdir(parents=True)
            # Byte copies: the release holds exactly what the build wrote and read_testset validated.
            for name in SHIPPED_FILES:
                shutil.copyfile(source / ts.lang / name, folder / name)
            # String ids, as before read_qrels gave Categorical ones (the Parquet schema stays plain strings).
            ts.qrels.select(pl.col("query_id", "doc_id").cast(pl.String), "relevance").sort(
                "query_id", "doc_id").write_parquet(folder / "qrels.parquet")
            if settings.release.beir:
                beir[ts.lang] = write_beir(ts, folder / BEIR_FOLDER)
        return beir

    def fill(staging: Path) -> None:
        beir = pack(testsets, data, staging)
        agreement = {ts.lang: read_agreement(repo, ts) for ts in testsets}
        esco_beir = pack(esco_sets, esco_root, staging / ESCO_FAMILY) if esco_sets else {}
        card = render_card(version, release_tag(version), testsets, toolkit_version, packs, agreement, beir or None,
                           esco_sets or None)
        (staging / "README.md").write_text(card, encoding="utf-8")
        if esco_sets:
            (staging / ESCO_FAMILY / FAMILY_CARD).write_text(render_family_card(
                version, release_tag(version), esco_sets, toolkit_version, packs, esco_beir or None), encoding="utf-8")
        # Nothing here may change from one commit to the next while the inputs stay the same: the release
        # is a DVC output, and `dvc repro` on a clean checkout must give the bytes dvc.lock records. The
        # commit is recorded by git (the tag, published.json), not inside the release.
        header = {
            "name": TOOLKIT,
            "version": version,
            "tag": release_tag(version),
            "languages": languages,
            "toolkit": {"package": TOOLKIT, "version": toolkit_version},
            "params": {"languages": params["languages"], "release": params.get("release")},
            "counts": {ts.lang: computed_counts(ts) for ts in testsets},
        }
        if esco_sets:  # a release without the family has the manifest it always had
            header["params"]["esco"] = {"languages": family}
            header["families"] = {ESCO_FAMILY: {"languages": family,
                                                "counts": {ts.lang: computed_counts(ts) for ts in esco_sets}}}
        written["manifest"] = write_manifest(staging, header)
        if published_md5 is not None and folder_md5(staging) != published_md5:
            # `dvc repro` on a checkout of a published version remakes it; it must give the published bytes.
            raise ReleaseError(f"version {version} was already released (published with DVC md5 "
                               f"{published_md5}) and these inputs make other bytes ({folder_md5(staging)}); "
                               "choose a new version number")

    # Written into a hidden sibling and swapped in whole (the toolkit's one folder writer): a failed or killed
    # make leaves the previous release as it was.
    write_folder_atomically(out, fill, ours=RELEASE_FOLDER)
    return written["manifest"]
