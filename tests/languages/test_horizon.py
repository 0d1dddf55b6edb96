"""languages/horizon.yaml (issue 36 item 4): the ESCO languages with grammatical gender and no pack, as data; the
section of docs/esco.md is rendered from it by scripts/horizon.py, so the two cannot drift; the pack loader never
reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import horizon

REPO = Path(__file__).resolve().parents[2]
EIGHT = ["ro", "cs", "sk", "sl", "hr", "bg", "lt", "lv"]  # issue 36's list: ESCO's gendered languages without a pack


def test_the_horizon_lists_exactly_the_eight_languages():
    entries = horizon.load()
    assert [e["code"] for e in entries] == EIGHT


def test_docs_show_the_rendered_horizon_and_every_verdict():
    entries = horizon.load()
    doc = (REPO / "docs" / "esco.md").read_text(encoding="utf-8")
    assert horizon.section(doc) == horizon.render(entries), "run: python scripts/horizon.py --write"
    for e in entries:
        assert f"| {e['verdict']} |" in doc, e["code"]


def test_each_verdict_names_the_resources_the_entry_lists():
    for e in horizon.load():
        if e["lexicon"]:
            lex, words = e["lexicon"][0], e["word_list"]
            assert e["verdict"] == (f"buildable here: lexicon {lex['package']} {lex['version']} + word list "
                                    f"{words['package']} {words['version']}"), e["code"]
        else:
            assert e["verdict"] == "not buildable here: no lexicon", e["code"]


def test_the_pack_loader_does_not_read_the_horizon():
    import languages

    assert (REPO / "languages" / "horizon.yaml").is_file()
    assert languages.BUILTIN_DIR == REPO / "languages" / "packs"
    found = languages.available()
    assert "horizon" not in found and not set(EIGHT) & set(found), found
    with pytest.raises(languages.LanguageError):
        languages.load("ro")


def test_the_dual_form_counts_are_builder_esco_s_on_the_real_files():
    """The counts in the file are what builder/esco.py counts on MELO's files (../shared/data/melo, where this
    checkout has it)."""
    from builder import esco

    if not esco.DEFAULT_MELO_DIR.is_dir():
        pytest.skip("no ../shared/data/melo here")
    got = horizon.count(esco.DEFAULT_MELO_DIR)
    assert got == {e["code"]: (e["occupations"], e["preferred_dual_form"]) for e in horizon.load()}


def test_the_count_is_the_one_stats_json_gives(tmp_path):
    """preferred_dual_form counts a "/" in the preferred label, alternatives aside."""
    from builder.esco import Occupation, preferred_dual_form

    occ = [Occupation("u1", 1, "učitel/učitelka", ()), Occupation("u2", 2, "analytik", ("a/b",)),
           Occupation("u3", 3, "operátor/operátorka stroja", ())]
    assert preferred_dual_form(occ) == 2


def test_a_bad_verdict_is_refused_naming_the_file_and_entry(tmp_path):
    text = (REPO / "languages" / "horizon.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "horizon.yaml"
    bad.write_text(text.replace("verdict: 'not buildable here: no lexicon'", "verdict: 'maybe'", 1), encoding="utf-8")
    with pytest.raises(horizon.HorizonError, match=rf"^{bad}: cs: verdict 'maybe'"):
        horizon.load(bad)


def test_docs_without_the_bounds_are_refused():
    with pytest.raises(horizon.HorizonError, match="expected one"):
        horizon.section("no section here")


@pytest.mark.parametrize("text, message", [
    ("languages: [{code: ro}]\n", "languages[0] lacks name, melo"),
    ("languages: [\n", "horizon.yaml:2: not YAML (expected the node content"),
])
def test_a_bad_horizon_file_is_one_error_line(tmp_path, capsys, text, message):
    bad = tmp_path / "horizon.yaml"
    bad.write_text(text, encoding="utf-8")
    assert horizon.main(["--horizon", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0] and "Traceback" not in err[0], err


def test_measure_asks_the_word_list_and_the_lexicon_about_the_first_words(tmp_path):
    """measure() on a small MELO folder written here, with the Spanish resources the es pack uses (installed by
    scripts/setup.sh): the values follow from the definitions and Spanish (xyzzyqa is no word)."""
    share = Path("/usr/share")
    if not (share / "apertium" / "apertium-eng-spa" / "spa-eng.automorf.bin").is_file():
        pytest.skip("apertium-eng-spa is not installed here")
    folder = tmp_path / "processed" / "melo" / "esp_q_es_c_es"
    folder.mkdir(parents=True)
    labels = ["director técnico/directora técnica", "taxista", "xyzzyqa (de obras)"]
    (folder / "corpus_elements.tsv").write_text("".join(f"C{n:06d}_es_000\t{x}\n" for n, x in enumerate(labels, 1)),
                                                encoding="utf-8")
    (folder / "concept_mapping.tsv").write_text(
        "".join(f"C{n:06d}_es_000\thttp://data.europa.eu/esco/occupation/u{n}\n" for n in range(1, 4)), encoding="utf-8")
    entry = {"code": "es", "melo": "esp_q_es_c_es",
             "lexicon": [{"package": "apertium-eng-spa", "analyser": "spa-eng.automorf.bin"}],
             "word_list": {"package": "hunspell-es", "dictionary": "es_ES"}}
    assert horizon.measure([entry], tmp_path, share) == {"es": {
        "first_words": 4, "hunspell_known": 3, "analysed": 3, "noun_gender": 3,
        "feminine_first_words": 1, "feminine_hunspell_known": 1, "feminine_nouns": 1}}
    assert horizon.measure([{**entry, "lexicon": []}], tmp_path, share)["es"] == {
        "first_words": 4, "hunspell_known": 3, "feminine_first_words": 1, "feminine_hunspell_known": 1}
