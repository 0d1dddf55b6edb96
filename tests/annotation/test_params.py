"""annotation: in params.yaml, read through config: defaults, the nested relevance: section, errors naming the key."""

import json

import pytest

from annotation import AnnotationError
from annotation.params import AnnotationParams, RelevanceParams, load_params, with_overrides


def test_missing_file_or_section_gives_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_params("params.yaml") == AnnotationParams()  # the default file, absent: the defaults
    with pytest.raises(AnnotationError, match="none.yaml: params file not found"):  # a file named must be there
        load_params(tmp_path / "none.yaml")
    (tmp_path / "p.yaml").write_text("languages: [pt]\n")
    assert load_params(tmp_path / "p.yaml") == AnnotationParams()


def test_the_project_params_and_the_nested_relevance_section(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(json.dumps({"annotation": {"batch_size": 20, "relevance": {"models": ["tfidf-char"], "seed": 3}}}))
    params = load_params(path)
    assert params.batch_size == 20 and params.workspace == AnnotationParams().workspace
    assert params.relevance == RelevanceParams(models=("tfidf-char",), seed=3)


@pytest.mark.parametrize("section, message", [
    ({"batch_size": 0}, "annotation.batch_size is 0; it must be 1 or more"),
    ({"relevance": {"pool_depth": 0}}, "annotation.relevance.pool_depth is 0; it must be 1 or more"),
    ({"relevance": {"models": []}}, "annotation.relevance.models is empty"),
    ({"relevance": {"depth": 5}}, "unknown key(s) annotation.relevance.depth"),
    ({"min_submitted": "two"}, "annotation.min_submitted is 'two'; expected an integer"),
])
def test_errors_name_the_file_and_key(tmp_path, section, message):
    path = tmp_path / "p.yaml"
    path.write_text(json.dumps({"annotation": section}))
    with pytest.raises(AnnotationError) as exc:
        load_params(path)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)


def test_command_line_overrides_are_checked_too():
    params = with_overrides(AnnotationParams(), "p.yaml", pool_depth=3, workspace="w", dataset_version=None)
    assert params.relevance.pool_depth == 3 and params.workspace == "w" and params.dataset_version == "v1"
    with pytest.raises(AnnotationError, match=r"^p.yaml: annotation.relevance.pool_depth is 0"):
        with_overrides(AnnotationParams(), "p.yaml", pool_depth=0)
