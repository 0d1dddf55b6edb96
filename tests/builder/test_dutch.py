"""The Dutch gender layer (builder.dutch) on inline titles, and a whole nl build from a small translated copy.

Every case runs the real resources: the Debian Hunspell word lists hunspell-nl and hunspell-en-us; the expected
forms are what a Dutch speaker writes (the feminine of the productive rules, DESIGN.md §7), never read back from
the layer's own output.
"""

from __future__ import annotations

import polars as pl
import pytest

from builder.__main__ import main
from builder.align import Relevance
from builder.dutch import INSTALL_WORDLISTS, DutchGenderLayer, feminine_candidates, masculine_candidates
from builder.inflection import Decision
from builder.lexicon import LexiconError
from builder.routes import decide_given
from eval.testset import read_testset
from tests.builder.test_reference import tid, write_copy


@pytest.fixture(scope="module")
def nl():
    return DutchGenderLayer("nl")


def decided(layer: DutchGenderLayer, title: str) -> Decision:
    layer.prepare([title])
    return layer.decide(title)


@pytest.mark.parametrize("masculine, feminine", [
    ("verkoper", "verkoopster"),  # -er -> -ster on the verb stem, its vowel written double
    ("medewerker", "medewerkster"),
    ("bakker", "bakster"),  # a doubled consonant made single
    ("schrijver", "schrijfster"),  # v -> f
    ("beheerder", "beheerster"),  # d after r dropped
    ("leraar", "lerares"),  # -aar -> -ares
    ("chauffeur", "chauffeuse"),  # -eur -> -euse
    ("directeur", "directrice"),  # -teur -> -trice
    ("coördinator", "coördinatrice"),
    ("journalist", "journaliste"),  # -ist -> -iste
    ("assistent", "assistente"),  # -ent -> -ente
    ("advocaat", "advocate"),
    ("psycholoog", "psychologe"),
    ("brandweerman", "brandweervrouw"),  # -man -> -vrouw
    ("zanger", "zangeres"),
    ("kok", "kokkin"),  # a declared pair
])
def test_the_productive_rules_propose_the_feminine(masculine, feminine):
    assert feminine in feminine_candidates(masculine)
    assert masculine in masculine_candidates(feminine)


def test_an_open_syllable_is_not_a_doubled_consonant():
    """kaper (a pirate) would be kaapster, kapper (a hairdresser) kapster: kapster names the kapper only."""
    assert "kapster" not in feminine_candidates("kaper") and "kapster" in feminine_candidates("kapper")


@pytest.mark.parametrize("title, masculine, feminine", [
    ("verkoper", "verkoper", "verkoopster"),
    ("senior verkoper", "senior verkoper", "senior verkoopster"),  # adjectives do not agree
    ("financiële journalist", "financiële journalist", "financiële journaliste"),
    ("medewerker klantenservice", "medewerker klantenservice", "medewerkster klantenservice"),  # head first
    ("analist netwerkbeveiliging", "analist netwerkbeveiliging", "analiste netwerkbeveiliging"),
    ("directeur ontwerp en ontwikkeling", "directeur ontwerp en ontwikkeling", "directrice ontwerp en ontwikkeling"),
    ("brandweerman", "brandweerman", "brandweervrouw"),
    ("beleidsadviseur", "beleidsadviseur", "beleidsadviseuse"),  # a compound the word list knows whole
    ("systeembeheerder", "systeembeheerder", "systeembeheerster"),  # ... or by its last part
    ("student informatica", "student informatica", "studente informatica"),  # -ica is a field, not a feminine
    ("verzend- en ontvangstmedewerker", "verzend- en ontvangstmedewerker", "verzend- en ontvangstmedewerkster"),
    ("ober", "ober", "serveerster"),
])
def test_masculine_titles_are_inflected(nl, title, masculine, feminine):
    d = decided(nl, title)
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", masculine, feminine), d.reason
    assert "feminine_base" not in d.flags


@pytest.mark.parametrize("title, masculine", [
    ("lerares", "leraar"),
    ("verkoopster", "verkoper"),
    ("kapster", "kapper"),
    ("juridisch secretaresse", "juridisch secretaris"),
    ("zakelijke stewardess", "zakelijke steward"),
])
def test_feminine_titles_give_the_masculine(nl, title, masculine):
    d = decided(nl, title)
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", masculine, title), d.reason
    assert "feminine_base" in d.flags


@pytest.mark.parametrize("title, reason_word", [
    ("verpleegkundige", "common-gender noun"),  # -kundige
    ("basisschoolleerkracht", "common-gender noun"),  # -kracht
    ("hoofd vermogensbeheer", "common-gender noun"),
    ("deskundige", "common-gender noun"),
    ("regionaal logistiek manager", "no feminine in the word list"),  # manager: the base form for either sex
    ("softwareontwikkelaar", "no feminine in the word list"),
    ("kern ingenieur", "no feminine in the word list"),
    ("magazijn en logistiek manager", "no feminine in the word list"),  # modifiers joined by en
    ("web developer", "English agent noun"),
])
def test_common_gender_heads_are_neutral_with_their_reason(nl, title, reason_word):
    d = decided(nl, title)
    assert (d.verdict, d.neutral) == ("neutral", title), d.reason
    assert reason_word in d.reason


def test_an_adjectival_noun_is_a_head_only_at_the_end(nl):
    """technische before a noun is an adjective, not the adjectival noun de technische."""
    d = decided(nl, "analist technische ondersteuning")
    assert (d.verdict, d.feminine) == ("inflected", "analiste technische ondersteuning")


@pytest.mark.parametrize("title, flag", [
    ("brievenbus", "unknown_head"),  # a word, but no person noun (Letter Carrier, mistranslated)
    ("documentatie uitvoerend", "unknown_head"),
    ("xyzblorfer", "unknown_word"),
])
def test_no_person_noun_is_a_review_item_never_neutral(nl, title, flag):
    d = decided(nl, title)
    assert d.verdict == "unverified" and flag in d.flags and d.neutral is None
    given = decide_given(nl, title, "", keeps_case=False)
    assert given.verdict == "unverified" and given.neutral is None and given.feminine is None


def test_resource_names(nl):
    assert nl.wordlist_name == "hunspell:nl"
    assert nl.method_names["wordlist"] == "hunspell:nl"


def test_a_missing_word_list_names_the_install_command():
    with pytest.raises(LexiconError) as err:
        DutchGenderLayer("nl", hunspell_dicts=("nl_XX_missing",))
    assert INSTALL_WORDLISTS in str(err.value) and "hunspell-nl" in str(err.value)
    assert "\n" not in str(err.value)


# --- a whole build from a small translated copy ------------------------------------------------------------------
EN_Q = {"Salesperson": "Salesperson", "Teacher": "Teacher", "Nurse": "Nurse"}
EN_C = {"Sales_Associate": "Sales Associate", "Store_Manager": "Store Manager", "Math_Teacher": "Math Teacher",
        "Tutor": "Tutor", "Registered_Nurse": "Registered Nurse", "Caregiver": "Caregiver",
        "Letter_Carrier": "Letter Carrier", "Teacher": "Teacher"}
EN_R = [("Salesperson", "Sales_Associate"), ("Salesperson", "Store_Manager"), ("Teacher", "Math_Teacher"),
        ("Teacher", "Tutor"), ("Nurse", "Registered_Nurse"), ("Nurse", "Caregiver"), ("Teacher", "Letter_Carrier")]
DUTCH = {"Salesperson": "Verkoper", "Teacher": "Leraar", "Nurse": "Verpleegkundige", "Sales_Associate": "Medewerker verkoop",
         "Store_Manager": "Winkelmanager", "Math_Teacher": "Wiskundeleraar", "Tutor": "Bijlesdocent",
         "Registered_Nurse": "Geregistreerde verpleegster", "Caregiver": "Verzorger", "Letter_Carrier": "Brievenbus"}


def write_dataset(root, lang: str, titles: dict[str, str]):
    (root / "en").mkdir(parents=True)
    (root / "en" / "queries.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in EN_Q.items()), encoding="utf-8")
    (root / "en" / "corpus_documents.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in EN_C.items()), encoding="utf-8")
    (root / "en" / "annotations.tsv").write_text("".join(f"{q}\t0\t{d}\t1\n" for q, d in EN_R), encoding="utf-8")
    copy = Relevance({tid(titles[q]): titles[q] for q in EN_Q}, {tid(titles[d]): titles[d] for d in EN_C},
                     sorted({(tid(titles[q]), tid(titles[d])) for q, d in EN_R}))
    write_copy(root, lang, copy)
    return root / "en"


def test_dutch_build_from_the_given_titles(tmp_path):
    english = write_dataset(tmp_path / "dataset", "nl", DUTCH)
    rc = main(["build", "--source", str(english), "--lang", "nl", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--quiet"])
    assert rc == 0
    ts = read_testset(tmp_path / "out", "nl")
    texts = {r["text"]: r["gender"] for r in pl.concat([ts.queries, ts.corpus]).iter_rows(named=True)}
    for masculine, feminine in (("verkoper", "verkoopster"), ("leraar", "lerares"),
                                ("medewerker verkoop", "medewerkster verkoop"), ("wiskundeleraar", "wiskundelerares"),
                                ("geregistreerde verpleger", "geregistreerde verpleegster"), ("verzorger", "verzorgster")):
        assert (texts.get(masculine), texts.get(feminine)) == ("masculine", "feminine"), (masculine, feminine)
    assert texts.get("verpleegkundige") == "neutral" and texts.get("winkelmanager") == "neutral"
    assert "brievenbus" not in texts  # no person noun: a review item, not a title of the set
    verdict = dict(pl.read_parquet(tmp_path / "out" / "nl" / "translations.parquet")
                   .select("source_id", "verdict").iter_rows())
    assert verdict["Letter_Carrier"] == "unverified"
    assert ts.stats["gender_layer"]["module"] == "builder/dutch.py"
    assert ts.stats["gender_layer"]["word_list"] == "hunspell:nl"


def test_a_build_without_the_word_list_is_one_error_line(tmp_path, monkeypatch, capsys):
    import builder.lexicon as lexicon

    english = write_dataset(tmp_path / "dataset", "nl", DUTCH)
    monkeypatch.setattr(lexicon, "HUNSPELL_DIRS", (tmp_path / "no-dictionaries",))
    rc = main(["build", "--source", str(english), "--lang", "nl", "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("error: ")
    assert INSTALL_WORDLISTS in err
    assert not (tmp_path / "out" / "nl" / "queries.parquet").exists()
