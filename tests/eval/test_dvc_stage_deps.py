"""dvc.yaml's eval stages list exactly the code their commands run: each stage's command is run on small
test sets under an import tracer, and every project module it imports must be a listed dependency (a module
left out leaves results stale after a change); no stage lists a whole code folder (it would rerun for any
change of a module it never imports)."""

from __future__ import annotations

from pathlib import Path

import yaml

from eval.testset import write_testset
from tests.eval.conftest import make_testset
from tests.import_trace import imported_files

REPO = Path(__file__).resolve().parents[2]
CODE_FOLDERS = {"builder", "eval", "releases", "annotation", "config", "languages"}

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
        listed = {d for d in deps if d.endswith(".py")}
        assert "eval/__main__.py" in imported and imported <= listed, \
            f"{name} imports modules dvc.yaml does not list: {sorted(imported - listed)}"
        assert all((REPO / path).is_file() for path in listed), name
        assert not [d for d in deps if d.rstrip("/") in CODE_FOLDERS], f"{name} lists a whole code folder"
