"""One definition of what each correction flag does (builder/corrections.py FLAG_MEANINGS), shown word for word in
docs/FORMAT.md, the annotation UI's question help and its guidelines (issue 35: the UI said a flag drops a title
while the build kept it)."""

from pathlib import Path

from builder.corrections import FLAG_MEANINGS, FLAGS

REPO = Path(__file__).resolve().parents[2]


def test_format_md_says_what_the_code_does():
    text = (REPO / "docs" / "FORMAT.md").read_text(encoding="utf-8")
    for flag, meaning in FLAG_MEANINGS.items():
        assert f"  - `{flag}`: {meaning}\n" in text, flag
    assert set(FLAGS) == {None, *FLAG_MEANINGS}


def test_the_ui_help_and_guidelines_say_the_same():
    from annotation.translations import FLAG_LABELS, flag_help, guidelines_text

    assert set(FLAG_LABELS) == set(FLAG_MEANINGS)
    help_text, guidelines = flag_help(), guidelines_text()
    for flag, meaning in FLAG_MEANINGS.items():
        assert meaning in help_text and f"*{FLAG_LABELS[flag]}*: {meaning}." in guidelines
    assert "{flag_meanings}" not in guidelines


def test_every_build_flag_is_documented_and_the_tables_name_only_known_flags():
    from builder.postprocess import REVIEW_FLAGS
    from builder.verdict import (BUILD_FLAGS, CHECK_FLAGS, INFORMATIVE_FLAGS, ROUTINE_FLAGS, SERIOUS_FLAGS)

    text = (REPO / "docs" / "FORMAT.md").read_text(encoding="utf-8")
    for flag, meaning in BUILD_FLAGS.items():
        assert f"  - `{flag}`: {meaning}\n" in text, flag
    for table in (SERIOUS_FLAGS, CHECK_FLAGS, ROUTINE_FLAGS, INFORMATIVE_FLAGS, REVIEW_FLAGS):
        assert table <= set(BUILD_FLAGS), sorted(table - set(BUILD_FLAGS))


def test_the_build_refuses_a_flag_without_a_meaning():
    import polars as pl
    import pytest

    from builder.build import _refuse_undocumented_flags
    from builder.errors import BuildError

    known = pl.DataFrame({"flags": [["masculine_base"], []]}, schema={"flags": pl.List(pl.String)})
    _refuse_undocumented_flags(known, known)
    stray = pl.DataFrame({"flags": [["masculine_base", "brand_new_flag"]]})
    with pytest.raises(BuildError, match=r"\['brand_new_flag'\].*BUILD_FLAGS"):
        _refuse_undocumented_flags(known, stray)
