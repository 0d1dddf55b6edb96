"""dvc.yaml's eval stages depend on the code their commands run: each stage's command is run on small test sets
under an import tracer, and every project module it imports must lie in a package folder (or be a file) the stage
depends on (a module left out leaves results stale after a change). Folders, not module lists, so that adding a
module touches no stage (issue 25: DVC's example-get-started depends on src/)."""

from __future__ import annotations

from pathlib import Path

import yaml

from eval.testset import write_testset
from tests.eval.testsets import make_testset
from tests.import_trace import imported_files, uncovered

REPO = Path(__file__).resolve().parents[2]

def test_each_eval_stage_lists_every_module_its_command_imports(tmp_path):
    work = tmp_path / "work"
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), work / "data")
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["languages"] = ["pt", "es"]
    params["eval"].update(models=["tfidf-char"], bootstrap_resamples=20, permutation_resamples=50,
                          cache=str(tmp_path / "cache"))
    params["audit"].update(models=["tfidf-char", "m-e5-small-q4"])
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    items = {"${item.model}": "tfidf-char", "${item.lang}": "pt"}
    for name in ("eval", "eval_collect", "audit", "report"):  # the pipeline's order: each reads the one before
        stage = stages[name]
        cmd = stage["cmd"]
        for key, value in items.items():
            cmd = cmd.replace(key, value)
        cmd = cmd.split()
        assert cmd[:3] == ["python", "-m", "eval"], cmd
        imported = imported_files(cmd, work, tmp_path / f"{name}.imports")
        deps = [str(d) for d in stage["deps"]]
        assert "eval/__main__.py" in imported and not uncovered(imported, deps), \
            f"{name} imports modules dvc.yaml's deps do not cover: {uncovered(imported, deps)}"
        assert all((REPO / d).exists() for d in deps if not d.startswith(("data", "results"))), name
        # whole package folders, not module lists: a new module of eval needs no edit of dvc.yaml
        assert "eval" in deps and not [d for d in deps if d.endswith(".py")], f"{name} lists single modules"
