"""scripts/check_reproduction.py: its hashes are DVC's own (a real `dvc repro` of a small pipeline in a temporary
folder writes the dvc.lock it is checked against), and each verdict and reason follows from what changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.check_reproduction import check, dir_md5, explain, file_md5, ignore_patterns, main

# A stage run as the builder's are (`python -m builder ...`): the temporary folder's own `builder` package, found
# first on the path of `python -m` there, writes a file and a folder from params.yaml and its input.
BUILDER = '''import json, pathlib, sys, yaml
params = yaml.safe_load(open("params.yaml"))
out = pathlib.Path("data")
(out / "xx" / "nested").mkdir(parents=True, exist_ok=True)
(out / "xx" / "stats.json").write_text(json.dumps({"version": params["release"]["version"], "scale": params["build"]["scale"]}))
(out / "xx" / "nested" / "a.txt").write_text(open("corrections/xx.jsonl").read() * params["build"]["scale"])
(out / "xx" / "b.txt").write_text("b\\n")
'''

DVC_YAML = """stages:
  postprocess:
    foreach: [xx]
    do:
      cmd: python -m builder postprocess
      deps:
        - builder
        - corrections/${item}.jsonl
      params:
        - build.scale
        - release.version
      outs:
        - data/${item}/stats.json
        - data/${item}/nested
  other:
    cmd: python -c "open('other.txt', 'w').write('x')"
    outs:
      - other.txt
"""


def dvc(cwd: Path, *args: str) -> None:
    env = {**os.environ, "DVC_NO_ANALYTICS": "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory) -> Path:
    """A DVC project after `dvc repro`: its dvc.lock holds DVC's md5 of a folder (``builder``, holding compiled files
    .dvcignore leaves out), of a nested output folder and of files."""
    root = tmp_path_factory.mktemp("project")
    (root / "builder").mkdir()
    (root / "builder" / "__init__.py").write_text("")
    (root / "builder" / "__main__.py").write_text(BUILDER)
    (root / "builder" / "__pycache__").mkdir()  # as a checkout's, after a run: not an input (.dvcignore)
    (root / "builder" / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\x00compiled")
    (root / "builder" / "stray.pyc").write_bytes(b"\x00compiled")
    (root / "corrections").mkdir()
    (root / "corrections" / "xx.jsonl").write_text('{"id": "a"}\n')
    (root / "params.yaml").write_text("build:\n  scale: 2\nrelease:\n  version: 1.2.3\n")
    (root / "dvc.yaml").write_text(DVC_YAML)
    dvc(root, "init", "--no-scm", "-q")
    (root / ".dvcignore").write_text("# compiled Python\n__pycache__/\n*.pyc\n")
    dvc(root, "repro", "-q")
    return root


def lock_of(root: Path) -> dict:
    import yaml

    return yaml.safe_load((root / "dvc.lock").read_text())


def test_the_hashes_are_the_ones_dvc_repro_recorded(pipeline):
    stage = lock_of(pipeline)["stages"]["postprocess@xx"]
    recorded = {d["path"]: d["md5"] for d in stage["deps"] + stage["outs"]}
    patterns = ignore_patterns(pipeline)
    assert dir_md5(pipeline / "builder", patterns) == recorded["builder"]
    assert dir_md5(pipeline / "data/xx/nested", patterns) == recorded["data/xx/nested"]
    assert file_md5(pipeline / "data/xx/stats.json") == recorded["data/xx/stats.json"]
    assert recorded["builder"].endswith(".dir") and not recorded["data/xx/stats.json"].endswith(".dir")


def test_the_hashes_equal_dvc_datas_on_a_folder_of_its_own(tmp_path):
    from dvc_data.hashfile.build import build
    from dvc_data.hashfile.db import HashFileDB
    from dvc_data.hashfile.hash import file_md5 as dvc_file_md5
    from dvc_objects.fs.local import LocalFileSystem

    folder = tmp_path / "folder"
    (folder / "sub" / "deeper").mkdir(parents=True)
    for rel, text in {"z.txt": "z", "a b.txt": "space", "sub/é.txt": "é\r\n", "sub/deeper/x.bin": "\x00\x01",
                      "sub-x": "dash sorts before /"}.items():
        (folder / rel).write_bytes(text.encode())
    fs = LocalFileSystem()
    _, _, obj = build(HashFileDB(fs, str(tmp_path / "odb")), str(folder), fs, "md5")
    assert dir_md5(folder, []) == obj.hash_info.value
    assert file_md5(folder / "sub" / "é.txt") == dvc_file_md5(str(folder / "sub" / "é.txt"))


def verdicts(root: Path, outputs: Path | None = None) -> dict[str, tuple[str, str]]:
    return {path: (verdict, why) for path, verdict, why in check(root / "dvc.lock", root, outputs)}


def test_a_fresh_lock_is_the_same_everywhere_and_only_the_builders_stages_are_read(pipeline):
    assert verdicts(pipeline) == {"data/xx/stats.json": ("same", ""), "data/xx/nested": ("same", "")}


def copy_of(pipeline: Path, tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(pipeline, root, ignore=shutil.ignore_patterns(".dvc"))
    return root


def test_other_bytes_from_the_same_inputs_are_not_understood(pipeline, tmp_path):
    root = copy_of(pipeline, tmp_path)
    (root / "data/xx/nested/a.txt").write_text("tampered")
    assert verdicts(root)["data/xx/nested"] == ("differs", "not understood: the same inputs gave other bytes")
    (root / "data/xx/nested/a.txt").unlink()
    (root / "data/xx/nested").rmdir()
    assert verdicts(root)["data/xx/nested"] == ("missing", "not written by this build")


def test_a_changed_input_or_param_is_named(pipeline, tmp_path):
    root = copy_of(pipeline, tmp_path)
    (root / "builder" / "__main__.py").write_text(BUILDER + "# changed\n")
    (root / "params.yaml").write_text("build:\n  scale: 3\nrelease:\n  version: 1.2.3\n")
    (root / "data/xx/nested/a.txt").write_text("rebuilt")
    verdict, why = verdicts(root)["data/xx/nested"]
    assert verdict == "differs"
    assert why == ("postprocess@xx: its inputs are not the ones dvc.lock records (builder, params.yaml:build.scale); "
                   "dvc repro records the new bytes")
    # __pycache__ is no input: a new compiled file changes nothing
    (root / "builder" / "__main__.py").write_text(BUILDER)
    (root / "builder" / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"\x00")
    (root / "params.yaml").write_text("build:\n  scale: 2\nrelease:\n  version: 1.2.3\n")
    assert verdicts(root)["data/xx/nested"][1] == "not understood: the same inputs gave other bytes"


def test_the_outputs_of_a_build_elsewhere_are_read_there(pipeline, tmp_path):
    import shutil

    build = tmp_path / "build"
    shutil.copytree(pipeline / "data", build / "data")
    root = copy_of(pipeline, tmp_path)
    shutil.rmtree(root / "data")
    assert verdicts(root, build) == {"data/xx/stats.json": ("same", ""), "data/xx/nested": ("same", "")}


def test_what_builder_defaults_records_otherwise_is_explained(tmp_path):
    (tmp_path / "params.yaml").write_text("release:\n  version: 0.6.0\n")
    stage = {"cmd": "python -m builder postprocess --lang pt"}
    stats = tmp_path / "data" / "pt" / "stats.json"
    stats.parent.mkdir(parents=True)
    stats.write_text(json.dumps({"version": None, "alignment": {"reference": "/elsewhere/dataset/pt"}}))
    why = explain("data/pt/stats.json", stats, "postprocess@pt", stage, tmp_path)
    assert why == ("it records the folder its given translations were read from, /elsewhere/dataset/pt; the pipeline "
                   "reads the source stage's copy, data/source/reference/pt; it records no release version; the "
                   "pipeline's postprocess passes release.version 0.6.0 (builder defaults passes none)")
    stats.write_text(json.dumps({"version": "0.6.0", "alignment": {"reference": "data/source/reference/pt"}}))
    assert explain("data/pt/stats.json", stats, "postprocess@pt", stage, tmp_path) is None
    corrections = {"cmd": "python -m builder corrections --lang pt"}
    assert "git keeps" in explain("corrections/pt.jsonl", tmp_path / "corrections/pt.jsonl", "corrections@pt",
                                  corrections, tmp_path)
    assert "reads that folder in place" in explain("data/source", tmp_path / "data/source", "source",
                                                    {"cmd": "python -m builder source --out data/source"}, tmp_path)


def test_the_command_prints_a_line_per_output_and_a_count_and_exits_0_on_differences(pipeline, tmp_path, capsys):
    root = copy_of(pipeline, tmp_path)
    (root / "data/xx/stats.json").write_text("{}")
    assert main(["--lock", str(root / "dvc.lock"), "--root", str(root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["same     data/xx/nested",
                   "differs  data/xx/stats.json  (it records no release version; the pipeline's postprocess passes "
                   "release.version 1.2.3 (builder defaults passes none))",
                   f"reproduction against {root / 'dvc.lock'}: 1 same, 1 differ, 0 missing, of 2 builder outputs"]


@pytest.mark.parametrize("text", ["stages: [1, 2]", "{{{", ""])
def test_a_lock_that_is_no_dvc_lock_is_one_error_line_and_2(tmp_path, capsys, text):
    (tmp_path / "dvc.lock").write_text(text)
    assert main(["--lock", str(tmp_path / "dvc.lock"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'dvc.lock'}: ") and err.count("\n") == 1


def test_raw_translations_by_apertium_from_the_same_inputs_name_the_translation_cache(tmp_path):
    import polars as pl

    stage = {"cmd": "python -m builder translate --lang gl"}
    raw = tmp_path / "data" / "gl" / "raw_translations.parquet"
    raw.parent.mkdir(parents=True)
    pl.DataFrame({"source_id": ["a"], "translator": ["apertium"]}).write_parquet(raw)
    assert explain("data/gl/raw_translations.parquet", raw, "translate@gl", stage, tmp_path).startswith(
        "likely the translation cache: Apertium translates")
    assert explain("data/gl/raw_translations.parquet", raw, "translate@gl", stage, tmp_path, inputs_changed=True) is None
    pl.DataFrame({"source_id": ["a"], "translator": ["bergamot"]}).write_parquet(raw)
    assert explain("data/gl/raw_translations.parquet", raw, "translate@gl", stage, tmp_path) is None
