"""The Polish gender layer (builder.polish) on inline titles, and a whole pl build from a small translated copy.

Every case runs the real resources: Morfeusz 2 with its SGJP dictionary (PyPI morfeusz2) and the Debian Hunspell
word lists hunspell-pl and hunspell-en-us; the expected forms are what a Polish speaker writes (the feminine
derivations and the adjective agreement of Polish grammar), never read back from the layer's own output.
"""

from __future__ import annotations

import sys

import polars as pl
import pytest

from builder.__main__ import main
from builder.inflection import Decision
from builder.lexicon import LexiconError
from builder.polish import (INSTALL_LEXICON, INSTALL_WORDLISTS, PolishGenderLayer, feminine_candidates,
                            load_morfeusz, masculine_candidates)
from builder.routes import decide_given
from eval.testset import read_testset
from tests.builder.test_dutch import write_dataset


@pytest.fixture(scope="module")
def pl_layer():
    return PolishGenderLayer("pl")


def decided(layer: PolishGenderLayer, title: str) -> Decision:
    layer.prepare([title])
    return layer.decide(title)


@pytest.mark.parametrize("masculine, feminine", [
    ("kierownik", "kierowniczka"),  # -nik -> -niczka
    ("analityk", "analityczka"),  # -yk -> -yczka
    ("sprzedawca", "sprzedawczyni"),  # -ca -> -czyni
    ("naukowiec", "naukowczyni"),  # -iec -> -czyni
    ("specjalista", "specjalistka"),  # -a -> -ka
    ("psycholog", "psycholożka"),  # -log -> -lożka
    ("pielęgniarz", "pielęgniarka"),  # -rz -> -rka
    ("nauczyciel", "nauczycielka"),
    ("inżynier", "inżynierka"),  # consonant + -ka
    ("mistrz", "mistrzyni"),
    ("członek", "członkini"),
    ("księgowy", "księgowa"),  # an adjectival noun
])
def test_the_derivation_rules_propose_the_feminine(masculine, feminine):
    assert feminine in feminine_candidates(masculine)
    assert masculine in masculine_candidates(feminine)


@pytest.mark.parametrize("title, masculine, feminine", [
    ("inżynier", "inżynier", "inżynierka"),
    ("starszy inżynier", "starszy inżynier", "starsza inżynierka"),  # an adjective before the head agrees
    ("inżynier budowlany", "inżynier budowlany", "inżynierka budowlana"),  # ... and one after it
    ("kierownik projektu", "kierownik projektu", "kierowniczka projektu"),  # a genitive complement stays
    ("nauczyciel szkoły podstawowej", "nauczyciel szkoły podstawowej", "nauczycielka szkoły podstawowej"),
    ("okręgowy kierownik ochrony mienia", "okręgowy kierownik ochrony mienia", "okręgowa kierowniczka ochrony mienia"),
    ("główny księgowy", "główny księgowy", "główna księgowa"),  # an adjectival noun is the head
    ("specjalista ds. komunikacji", "specjalista ds. komunikacji", "specjalistka ds. komunikacji"),
    ("zastępca dyrektora generalnego", "zastępca dyrektora generalnego", "zastępczyni dyrektora generalnego"),
    ("wykwalifikowany technik", "wykwalifikowany technik", "wykwalifikowana techniczka"),  # a participle agrees
    ("kierowca", "kierowca", "kierowczyni"),  # SGJP has the feminine: a pair, not a masculine for both
    ("steward", "steward", "stewardesa"),  # a declared pair
])
def test_masculine_titles_are_inflected(pl_layer, title, masculine, feminine):
    d = decided(pl_layer, title)
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", masculine, feminine), d.reason
    assert "feminine_base" not in d.flags and "adjective_unchecked" not in d.flags


@pytest.mark.parametrize("title, masculine", [
    ("pielęgniarka", "pielęgniarz"),
    ("dyplomowana pielęgniarka", "dyplomowany pielęgniarz"),  # the adjective agrees back
    ("korporacyjna stewardesa", "korporacyjny steward"),
])
def test_feminine_titles_give_the_masculine(pl_layer, title, masculine):
    d = decided(pl_layer, title)
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", masculine, title), d.reason
    assert "feminine_base" in d.flags


@pytest.mark.parametrize("title, reason_word", [
    ("chirurg", "no feminine in SGJP or the word list"),  # Polish ads: chirurg for either sex
    ("mechanik samochodowy", "no feminine in SGJP or the word list"),
    ("sędzia", "SGJP lists the masculine form as a feminine noun too"),
    ("web developer", "no feminine in SGJP or the word list"),  # English modifiers before the head
])
def test_one_form_for_both_is_neutral_with_its_reason(pl_layer, title, reason_word):
    d = decided(pl_layer, title)
    assert (d.verdict, d.neutral) == ("neutral", title), d.reason
    assert reason_word in d.reason


@pytest.mark.parametrize("title", ["serwer restauracji", "nabór talentu", "ołów wysyłkowy"])
def test_things_are_not_persons(pl_layer, title):
    """SGJP's gender m3 is inanimate: a mistranslated head (serwer for a server, ołów for a lead) is no title."""
    d = decided(pl_layer, title)
    assert d.verdict == "not_a_person" and "not_a_person_noun" in d.flags


@pytest.mark.parametrize("title, flag", [
    ("komunikacja strategiczna", "unknown_head"),  # a feminine noun with no personal masculine
    ("xyzblorf", "unknown_word"),
])
def test_no_person_noun_known_is_a_review_item_never_neutral(pl_layer, title, flag):
    d = decided(pl_layer, title)
    assert d.verdict == "unverified" and flag in d.flags and d.neutral is None
    given = decide_given(pl_layer, title, "", keeps_case=False)
    assert given.verdict == "unverified" and given.neutral is None and given.feminine is None


def test_resource_names(pl_layer):
    assert pl_layer.lexicon_name.startswith("morfeusz2:") and "sgjp" in pl_layer.lexicon_name
    assert pl_layer.wordlist_name == "hunspell:pl_PL"


def test_a_missing_word_list_names_the_install_command():
    with pytest.raises(LexiconError) as err:
        PolishGenderLayer("pl", hunspell_dicts=("pl_XX_missing",))
    assert INSTALL_WORDLISTS in str(err.value) and "hunspell-pl" in str(err.value)


def test_a_missing_lexicon_names_the_install_command(monkeypatch):
    load_morfeusz.cache_clear()
    monkeypatch.setitem(sys.modules, "morfeusz2", None)  # import morfeusz2 raises ImportError
    try:
        with pytest.raises(LexiconError) as err:
            PolishGenderLayer("pl")
        assert INSTALL_LEXICON in str(err.value) and "\n" not in str(err.value)
    finally:
        load_morfeusz.cache_clear()


# --- a whole build from a small translated copy (the English set of tests/builder/test_dutch.py) ----------------
POLISH = {"Salesperson": "Sprzedawca", "Teacher": "Nauczyciel", "Nurse": "Pielęgniarka",
          "Sales_Associate": "Starszy sprzedawca", "Store_Manager": "Kierownik sklepu",
          "Math_Teacher": "Nauczyciel matematyki", "Tutor": "Korepetytor", "Registered_Nurse": "Dyplomowana pielęgniarka",
          "Caregiver": "Opiekun", "Letter_Carrier": "Skrzynka pocztowa"}


def test_polish_build_from_the_given_titles(tmp_path):
    english = write_dataset(tmp_path / "dataset", "pl", POLISH)
    rc = main(["build", "--source", str(english), "--lang", "pl", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--quiet"])
    assert rc == 0
    ts = read_testset(tmp_path / "out", "pl")
    texts = {r["text"]: r["gender"] for r in pl.concat([ts.queries, ts.corpus]).iter_rows(named=True)}
    for masculine, feminine in (("sprzedawca", "sprzedawczyni"), ("nauczyciel", "nauczycielka"),
                                ("pielęgniarz", "pielęgniarka"), ("starszy sprzedawca", "starsza sprzedawczyni"),
                                ("kierownik sklepu", "kierowniczka sklepu"),
                                ("dyplomowany pielęgniarz", "dyplomowana pielęgniarka"), ("opiekun", "opiekunka")):
        assert (texts.get(masculine), texts.get(feminine)) == ("masculine", "feminine"), (masculine, feminine)
    assert "skrzynka pocztowa" not in texts  # a mailbox: no person noun, a review item
    assert ts.stats["gender_layer"]["module"] == "builder/polish.py"
    assert ts.stats["gender_layer"]["lexicon"].startswith("morfeusz2:")
