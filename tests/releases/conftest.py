"""Small inline test sets in a throwaway git + DVC repository, the shape a maintainer's checkout has."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
import yaml

from eval.testset import TestSet, write_testset

# (id, text, gender, pair_id, status)
QUERIES = [
    ("q-m1", "advogado", "masculine", "p1", "machine"),
    ("q-f1", "advogada", "feminine", "p1", "corrected"),
    ("q-m2", "engenheiro", "masculine", "p2", "machine"),
    ("q-f2", "engenheira", "feminine", "p2", "machine"),
    ("q-n1", "analista", "neutral", "p3", "machine"),
]
CORPUS = [
    ("d-m1", "juiz", "masculine", "p1", "machine"),
    ("d-f1", "juíza", "feminine", "p1", "machine"),
    ("d-m2", "professor", "masculine", "p2", "machine"),
    ("d-f2", "professora", "feminine", "p2", "machine"),
    ("d-m3", "enfermeiro", "masculine", "p3", "machine"),
    ("d-f3", "enfermeira", "feminine", "p3", "machine"),
    ("d-n1", "gerente", "neutral", "p4", "machine"),
    ("d-n2", "assistente", "neutral", "p5", "machine"),
]
QRELS = [("q-m1", "d-m1"), ("q-f1", "d-f1"), ("q-m1", "d-n1"), ("q-f1", "d-n1"),
         ("q-m2", "d-m2"), ("q-f2", "d-f2"), ("q-n1", "d-n2")]
# The Table-1 counts of the fixture above, by its construction.
STATS_COUNTS = {
    "queries": {"pairs": 2, "neutral": 1, "titles": 5, "masculine": 2, "feminine": 2},
    "corpus": {"pairs": 3, "neutral": 2, "titles": 8, "masculine": 3, "feminine": 3},
    "qrels": 7,
}


def items(rows: list[tuple[str, str, str, str, str]], lang: str) -> pl.DataFrame:
    return pl.DataFrame([{
        "id": i, "text": text, "gender": g, "pair_id": p, "source_ids": [f"en-{p}"],
        "source_texts": [f"english {p}"], "check_gender": g, "check_method": f"rule:{lang}-suffix",
        "check_ok": True, "flags": [], "status": status,
        "provenance": "human:ana" if status == "corrected" else "fxtranslate:0.5.0",
    } for i, text, g, p, status in rows])


def small_testset(lang: str) -> TestSet:
    stats = {**copy.deepcopy(STATS_COUNTS), "lang": lang, "translator": "fxtranslate", "translator_version": "0.5.0",
             "templates": {"masculine": "He is a {title}.", "feminine": "She is a {title}."},
             "self_match_policy": "drop-own-id", "corrections": {"translations": 1, "relevance": 0},
             "needs_review": 3, "uninflected_feminine": 2}
    qrels = pl.DataFrame([{"query_id": q, "doc_id": d, "relevance": 1} for q, d in QRELS])
    return TestSet(lang=lang, queries=items(QUERIES, lang), corpus=items(CORPUS, lang), qrels=qrels, stats=stats)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@dataclass
class Project:
    root: Path
    data: Path
    params: Path

    def commit(self, message: str = "update") -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)


def init_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "maintainer@example.org")
    git(root, "config", "user.name", "Maintainer")


def dvc(repo: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=repo, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"dvc {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="session")
def project_template(tmp_path_factory) -> Path:
    """Made once: a committed repository with params.yaml (languages pt, es) and data/ tracked by DVC (`dvc add`,
    a real data.dvc and cache), the way `releases make` needs its input recorded."""
    root = tmp_path_factory.mktemp("template") / "repo"
    init_repo(root)
    dvc(root, "init", "-q")
    params = {"languages": ["pt", "es"], "release": {"tracked_inputs": ["params.yaml", "corrections"]}}
    (root / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    (root / ".gitignore").write_text("/release/\n", encoding="utf-8")
    for lang in ("pt", "es"):
        write_testset(small_testset(lang), root / "data")
    dvc(root, "add", "-q", "data")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def project(tmp_path: Path, project_template: Path) -> Project:
    """A private copy of the template repository (git history, DVC cache and data included)."""
    root = tmp_path / "repo"
    shutil.copytree(project_template, root, symlinks=True)
    return Project(root=root, data=root / "data", params=root / "params.yaml")


def record_data(project: Project, message: str = "rebuilt data") -> None:
    """Record changed data as a rebuild would: `dvc add` (data.dvc) and a commit."""
    dvc(project.root, "add", "-q", "data")
    project.commit(message)


# --- the ESCO family (esco.languages, released as <release>/esco/): the same small sets, recorded as the builder
# records an ESCO set built from MELO's pinned files (builder/esco.py: its pins, licence and relevance texts).
ESCO_LANGUAGES = ("de", "pt")


def small_esco_testset(lang: str) -> TestSet:
    from builder.esco import CORPUS_DESIGNS, LICENCE, MELO, RELEVANCE

    ts = small_testset(lang)
    entry = MELO["datasets"][lang]
    folder, version = entry["folder"], entry["esco_version"]
    stats = {**copy.deepcopy(STATS_COUNTS), "lang": lang, "source": "esco", "route": "esco", "translator": None,
             "translator_version": None, "templates": {}, "self_match_policy": "keep_derived", "needs_review": 0,
             "esco": {"layout": "melo", "version": version, "occupations": 5, "file": "corpus_elements.tsv",
                      "sha256": entry["files"]["corpus_elements.tsv"],
                      "files": {f"{folder}/{name}": sha for name, sha in entry["files"].items()},
                      "origin": f"MELO benchmark {MELO['repository']}@{MELO['commit'][:12]} {folder} ({MELO['licence']})",
                      "licence": LICENCE, "relevance": RELEVANCE, "corpus_design": "labels",
                      "corpus_design_meaning": CORPUS_DESIGNS["labels"], "queries_without_relevant": 1,
                      "dropped": {"query:not_the_inflection": 1}}}
    esco = [(name, frame.with_columns(pl.lit("machine").alias("status"), pl.lit(f"esco:{version}:{lang}").alias("provenance")))
            for name, frame in (("queries", ts.queries), ("corpus", ts.corpus))]
    return TestSet(lang=lang, queries=esco[0][1], corpus=esco[1][1], qrels=ts.qrels, stats=stats)


def add_esco_family(project: Project, languages=ESCO_LANGUAGES, root: str = "data-esco") -> Path:
    """The ESCO family as the main job builds it (data-esco/<lang>), recorded with DVC, named in params.yaml
    (esco.languages, release.esco) and committed."""
    for lang in languages:
        write_testset(small_esco_testset(lang), project.root / root)
    dvc(project.root, "add", "-q", root)
    params = yaml.safe_load(project.params.read_text(encoding="utf-8"))
    params["esco"] = {"languages": list(languages)}
    params["release"]["esco"] = root
    project.params.write_text(yaml.safe_dump(params), encoding="utf-8")
    project.commit("the ESCO family")
    return project.root / root
