"""Fuzzing the manifest verifier: whatever manifest.json holds, `releases verify` ends with exit status 0
or 2 and never with a traceback (hypothesis generates the manifests)."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from releases import make_release
from releases.__main__ import main

from .conftest import Project, add_esco_family

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
# Paths an attacker or a careless edit could write: traversal, absolute, odd characters, other languages.
paths = st.one_of(
    st.sampled_from(["README.md", "pt/qrels.tsv", "../x", "/etc/passwd", "pt/../../x", "fr/queries.parquet",
                     "pt//qrels.tsv", "pt/./qrels.tsv", "manifest.json", "pt", "", "pt\\qrels.tsv", "pt/\x00",
                     "pt/new\nline", "es/corpus.parquet/x", "esco/README.md", "esco/pt/qrels.tsv", "esco/../x",
                     "esco/fr/queries.parquet", "esco", "esco/pt"]),
    st.text(max_size=30),
)


@pytest.fixture(scope="module", params=["job-titles", "with-esco"])
def release(request, tmp_path_factory, project_template):
    """A release of the job-title sets, and one that also carries the ESCO family (manifest ``families``)."""
    root = tmp_path_factory.mktemp("fuzz") / "repo"
    shutil.copytree(project_template, root, symlinks=True)
    if request.param == "with-esco":
        add_esco_family(Project(root=root, data=root / "data", params=root / "params.yaml"))
    make_release(root / "data", "0.1.0", root / "release", root / "params.yaml")
    return root / "release"


def _mutate(manifest: dict, data) -> dict:
    manifest = copy.deepcopy(manifest)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["top", "drop-top", "entry-field", "entry-path", "entry", "files",
                                          "languages", "families"]))
        files = manifest.get("files")
        if kind == "top":
            manifest[data.draw(st.sampled_from(sorted(manifest) + ["extra"]))] = data.draw(
                json_values | st.sampled_from(["0.1.0", "0.1.0\nforged", "1.2"]))
        elif kind == "drop-top" and manifest:
            manifest.pop(data.draw(st.sampled_from(sorted(manifest))))
        elif kind == "files":
            manifest["files"] = data.draw(st.lists(json_values, max_size=3))
        elif kind == "languages":
            manifest["languages"] = data.draw(st.lists(st.sampled_from(["pt", "es", "fr", "", "PT", "../x"]),
                                                       max_size=4) | json_values)
        elif kind == "families":
            manifest["families"] = data.draw(json_values | st.fixed_dictionaries({"esco": st.fixed_dictionaries({
                "languages": st.lists(st.sampled_from(["pt", "de", "fr", "", "../x"]), max_size=3) | json_values})}))
        elif isinstance(files, list) and files:
            index = data.draw(st.integers(0, len(files) - 1))
            if kind == "entry":
                files.insert(index, data.draw(json_values | st.just(copy.deepcopy(files[index]))))
            elif isinstance(files[index], dict):
                if kind == "entry-path":
                    files[index]["path"] = data.draw(paths)
                else:
                    key = data.draw(st.sampled_from(["path", "sha256", "rows", "bytes", "other"]))
                    files[index][key] = data.draw(json_values)
    return manifest


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_verify_of_any_manifest_exits_0_or_2_without_a_traceback(release, capsys, data):
    path = release / "manifest.json"
    original = path.read_bytes()
    try:
        how = data.draw(st.sampled_from(["mutated", "json", "bytes"]))
        if how == "mutated":
            path.write_text(json.dumps(_mutate(json.loads(original), data)), encoding="utf-8")
        elif how == "json":
            path.write_text(json.dumps(data.draw(json_values)), encoding="utf-8")
        else:
            path.write_bytes(data.draw(st.binary(max_size=200)))
        capsys.readouterr()
        code = main(["verify", str(release)])  # any exception other than the handled ones fails the test
        captured = capsys.readouterr()
        assert code in (0, 2)
        assert "Traceback" not in captured.out + captured.err
        if code == 2:
            assert captured.err.startswith("error: ") and captured.err.count("\n") == 1
    finally:
        path.write_bytes(original)
