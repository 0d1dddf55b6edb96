"""The German gender layer (builder.german) on inline titles.

Every case runs the real resources: the PyPI lexicon german-nouns and the Debian Hunspell word lists
hunspell-de-de and hunspell-en-us; the expected forms are what a native speaker writes.
"""

import time
from pathlib import Path

import pytest

from builder.german import GermanGenderLayer, INSTALL_WORDLISTS
from builder.inflection import Decision
from builder.lexicon import LexiconError

DATA = Path("/work/shared/data/jobtitlesimilarity/dataset/de")


@pytest.fixture(scope="module")
def de():
    return GermanGenderLayer("de")


def decided(layer: GermanGenderLayer, title: str, feminine: str | None = None, english: str = "") -> Decision:
    layer.prepare([title] + ([feminine] if feminine else []))
    return layer.decide(title, feminine, english)


@pytest.mark.parametrize("title, masculine, feminine", [
    ("Arzt", "arzt", "ärztin"),  # umlaut
    ("Koch", "koch", "köchin"),
    ("Anwalt", "anwalt", "anwältin"),
    ("Rechtsanwalt", "rechtsanwalt", "rechtsanwältin"),
    ("Bauer", "bauer", "bäuerin"),  # not the regional Bauerin the lexicon also lists
    ("Geologe", "geologe", "geologin"),  # -e dropped
    ("Experte", "experte", "expertin"),
    ("Kollege", "kollege", "kollegin"),
    ("Feuerwehrmann", "feuerwehrmann", "feuerwehrfrau"),  # -mann -> -frau
    ("Kaufmann", "kaufmann", "kauffrau"),
    ("Kameramann", "kameramann", "kamerafrau"),
    ("Angestellter", "angestellter", "angestellte"),  # adjectival nouns
    ("Vorsitzender", "vorsitzender", "vorsitzende"),
    ("Beamter", "beamter", "beamtin"),  # the pack's declared pair
    ("Krankenpfleger", "krankenpfleger", "krankenpflegerin"),
    ("Biomedizinischer Techniker", "biomedizinischer techniker", "biomedizinische technikerin"),
    ("Leitender Ingenieur", "leitender ingenieur", "leitende ingenieurin"),
    ("Analyst für Netzwerksicherheit", "analyst für netzwerksicherheit", "analystin für netzwerksicherheit"),
    ("Grafik-Designer", "grafik-designer", "grafik-designerin"),
    ("Netzwerktechniker", "netzwerktechniker", "netzwerktechnikerin"),
    ("Erster Offizier", "erster offizier", "erste offizierin"),
    ("Staatlich geprüfter Techniker", "staatlich geprüfter techniker", "staatlich geprüfte technikerin"),
    ("Medizinisch-technischer Assistent", "medizinisch-technischer assistent", "medizinisch-technische assistentin"),
    ("Leiter Vertrieb", "leiter vertrieb", "leiterin vertrieb"),  # apposition: the person noun is the head
    ("Mitarbeiter Technischer Programm-Manager", "mitarbeiter technischer programm-manager",
     "mitarbeiterin technische programm-managerin"),
    ("Ehe- und Familientherapeut", "ehe- und familientherapeut", "ehe- und familientherapeutin"),
    ("Leiter des Einsatzteams", "leiter des einsatzteams", "leiterin des einsatzteams"),
    ("Barkeeper", "barkeeper", "barkeeperin"),  # the lexicon knows the feminine: inflected, not a loan
    # every adjective of a chain agrees, a capitalised first one too
    ("Regionaler technischer Spezialist", "regionaler technischer spezialist", "regionale technische spezialistin"),
    ("Leitender technischer Redakteur", "leitender technischer redakteur", "leitende technische redakteurin"),
])
def test_masculine_titles_are_inflected(de, title, masculine, feminine):
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine, d.neutral) == ("inflected", masculine, feminine, None)
    assert d.flags == []
    assert "lexicon" in d.method


@pytest.mark.parametrize("title, masculine, feminine", [
    ("Kassiererin", "kassierer", "kassiererin"),
    ("Innenarchitektin", "innenarchitekt", "innenarchitektin"),
    ("Tänzerin", "tänzer", "tänzerin"),
    ("Ärztin", "arzt", "ärztin"),  # the umlaut undone
    ("Kauffrau", "kaufmann", "kauffrau"),
    ("Registrierte Krankenschwester", "registrierter krankenpfleger", "registrierte krankenschwester"),
    ("Internationale Logistik-Koordinatorin", "internationaler logistik-koordinator",
     "internationale logistik-koordinatorin"),
    ("Kunstschaffende", "kunstschaffender", "kunstschaffende"),
])
def test_feminine_titles_give_the_masculine(de, title, masculine, feminine):
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", masculine, feminine)
    assert d.flags == ["feminine_base"]


@pytest.mark.parametrize("title", ["Avioniker/in", "Ingenieur:in", "Ingenieur*in", "IngenieurIn", "Ingenieur/-in",
                                   "Ingenieur (m/w/d)", "Ingenieur_in", "Ingenieur(in)"])
def test_inclusive_spellings_mean_both_forms(de, title):
    d = decided(de, title)
    assert d.verdict == "inflected"
    assert "inclusive_base" in d.flags
    if title.startswith("Avioniker"):
        # Unknown to every resource: the pair is the title's own spelling, kept for review.
        assert (d.masculine, d.feminine, d.flags) == ("avioniker", "avionikerin", ["inclusive_base", "unknown_word"])
        assert d.method == "rule+title"
    else:
        assert (d.masculine, d.feminine, d.flags) == ("ingenieur", "ingenieurin", ["inclusive_base"])


@pytest.mark.parametrize("title, masculine, feminine", [
    ("Technische/r Assistent/in", "technischer assistent", "technische assistentin"),
    ("Leitende(r) Ingenieur(in)", "leitender ingenieur", "leitende ingenieurin"),
    ("Kaufmann/-frau", "kaufmann", "kauffrau"),
    ("Arzt/Ärztin", "arzt", "ärztin"),
])
def test_inclusive_adjectives_and_doublets(de, title, masculine, feminine):
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine, d.flags) == ("inflected", masculine, feminine, ["inclusive_base"])


@pytest.mark.parametrize("title, reason_word", [
    ("Reinigungskraft", "common-gender"),
    ("Küchenpersonal", "common-gender"),
    ("Teamleitung", "gender-neutral role noun"),
    ("Lehrkraft für Lernunterstützung", "common-gender"),
    ("Mitglied des technischen Personals", "common-gender"),
    ("Zweisprachige Lehrkraft", "common-gender"),  # the adjective agrees with Kraft (f) in both genders
])
def test_common_gender_heads_are_neutral(de, title, reason_word):
    d = decided(de, title)
    assert (d.verdict, d.neutral, d.masculine, d.feminine) == ("neutral", title.lower(), None, None)
    assert reason_word in d.reason


def test_invariable_english_titles_are_neutral_loans(de):
    d = decided(de, "Chief Investment Officer")
    assert (d.verdict, d.neutral, d.flags) == ("neutral", "chief investment officer", ["english_loan"])
    assert "English" in d.reason
    d = decided(de, "Frontschalter-Associate", english="Front Desk Associate")
    assert (d.verdict, d.neutral, d.flags) == ("neutral", "frontschalter-associate", ["english_loan"])


def test_epicene_heads_let_the_adjective_agree(de):
    d = decided(de, "Kaufmännischer Azubi")
    assert (d.verdict, d.masculine, d.feminine, d.flags) == (
        "inflected", "kaufmännischer azubi", "kaufmännische azubi", ["common_head"])


@pytest.mark.parametrize("title", ["Reisebüro", "Spendenaktion", "Talentgewinnung", "Software-Firma",
                                   "Abteilung Import", "Kreative Führung"])
def test_things_are_not_persons(de, title):
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine, d.neutral) == ("not_a_person", None, None, None)
    assert d.flags == ["not_a_person_noun"]


def test_unknown_words_are_review_items_never_neutral(de):
    d = decided(de, "Xyzqwerer")
    assert (d.verdict, d.masculine, d.feminine, d.neutral) == ("unverified", None, None, None)
    assert d.flags == ["unknown_word"]
    assert "Xyzqwerer" in d.reason


def test_person_nouns_without_the_other_form(de):
    d = decided(de, "Leutnant")
    assert (d.verdict, d.masculine, d.feminine, d.flags) == ("masculine_only", "leutnant", None, ["no_feminine_form"])
    d = decided(de, "Kindermädchen")
    assert (d.verdict, d.masculine, d.feminine, d.flags) == ("feminine_only", None, "kindermädchen",
                                                             ["no_masculine_form", "declared_single_form"])


@pytest.mark.parametrize("title, masculine, feminine", [
    ("Perfusionist", "perfusionist", "perfusionistin"),  # -ist, unknown to every resource
    ("Leitender Phlebotomist", "leitender phlebotomist", "leitende phlebotomistin"),
    ("Evaluator", "evaluator", "evaluatorin"),  # -or, an English word too: German inflects it all the same
    ("Konsulent", "konsulent", "konsulentin"),  # -ent
    ("Sonograf", "sonograf", "sonografin"),  # -graf: no compound of Graf (Gräfin)
    ("Epidemiologe", "epidemiologe", "epidemiologin"),  # a lexicon masculine whose feminine no resource knows
    ("Polier", "polier", "polierin"),
    ("Croupier", "croupier", "croupierin"),  # no compound of Pier
    ("Taxidermist", "taxidermist", "taxidermistin"),
])
def test_latin_and_greek_agent_nouns_take_in_by_the_ending_rule(de, title, masculine, feminine):
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine, d.neutral, d.flags) == ("inflected", masculine, feminine, None, [])
    assert "rule" in d.method and "agent suffix" in d.reason


def test_the_ending_rule_reads_feminines_and_spares_things_and_ranks(de):
    d = decided(de, "Phlebotomistin")
    assert (d.verdict, d.masculine, d.feminine, d.flags) == ("inflected", "phlebotomist", "phlebotomistin",
                                                             ["feminine_base"])
    d = decided(de, "Perfusionist", "Perfusionistin")
    assert (d.verdict, d.masculine, d.feminine) == ("gendered", "perfusionist", "perfusionistin")
    # A rank with no feminine in use and things with the same endings keep their verdicts.
    assert decided(de, "Oberleutnant").verdict == "masculine_only"
    for thing in ("Format", "Budget", "Fluggesellschaft"):
        assert decided(de, thing).verdict == "not_a_person", thing


@pytest.mark.parametrize("title, masculine, feminine", [
    ("Fundraiser", "fundraiser", "fundraiserin"),
    ("Erfahrener Scheduler", "erfahrener scheduler", "erfahrene schedulerin"),
    ("Payroll Controller", "payroll controller", "payroll controllerin"),
])
def test_english_agent_nouns_in_er_take_in(de, title, masculine, feminine):
    d = decided(de, title, english=title)
    assert (d.verdict, d.masculine, d.feminine, d.neutral, d.flags) == ("inflected", masculine, feminine, None, [])
    assert "rule" in d.method


@pytest.mark.parametrize("title", ["Software Engineer", "Compliance Officer", "Sales Executive"])
def test_invariable_english_titles_stay_neutral(de, title):
    d = decided(de, title, english=title)
    assert (d.verdict, d.neutral, d.flags) == ("neutral", title.lower(), ["english_loan"])


def test_a_form_only_a_rule_makes_is_made_for_the_head_alone(de):
    d = decided(de, "Fundraiser Koordinator")
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", "fundraiser koordinator", "fundraiser koordinatorin")


@pytest.mark.parametrize("title, english", [("Marketing Intern", "Marketing Intern"),
                                            ("Intern für Recht", "Legal Intern"),
                                            ("Resident", "Resident")])
def test_english_words_that_are_german_words_of_another_kind_are_review_items(de, title, english):
    # intern, resident: German adjectives; German ads do not use them as titles (Praktikant/Praktikantin).
    d = decided(de, title, english=english)
    assert (d.verdict, d.masculine, d.feminine, d.neutral) == ("unverified", None, None, None)
    assert d.flags == ["unknown_word"]
    assert "German word of another kind" in d.reason


@pytest.mark.parametrize("title, masculine, feminine", [
    ("Gestalter", "gestalter", "gestalterin"),  # not Gest|alter, an adjectival noun
    ("Mediengestalter", "mediengestalter", "mediengestalterin"),
    ("Kommunikationsgestalter", "kommunikationsgestalter", "kommunikationsgestalterin"),
    ("Betreuer digitaler Inhalte", "betreuer digitaler inhalte", "betreuerin digitaler inhalte"),  # not Inh|alte
    ("Bundesangestellter", "bundesangestellter", "bundesangestellte"),  # a true adjectival compound
])
def test_an_er_ending_is_an_adjective_ending_only_in_an_adjectival_noun(de, title, masculine, feminine):
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine, d.flags) == ("inflected", masculine, feminine, [])


@pytest.mark.parametrize("title", ["Deko Drahtkommode", "Kopierpapier", "Schlafkammer", "Blutorange",
                                   "Beraterschaft"])
def test_things_ending_like_a_common_gender_noun_are_not_persons(de, title):
    # Drahtkom|mode, Kopier|pier, Schlafk|ammer, Blut|orange: the lexicon has Mode, Pier, Ammer, Range in both
    # genders, but these nouns are feminine or neuter things.
    d = decided(de, title)
    assert (d.verdict, d.masculine, d.feminine, d.neutral) == ("not_a_person", None, None, None)
    assert d.flags == ["not_a_person_noun"]


def test_a_given_feminine_is_confirmed_or_replaced(de):
    d = decided(de, "Biomedizinischer Techniker", "Biomedizinische Technikerin")
    assert (d.verdict, d.masculine, d.feminine) == ("gendered", "biomedizinischer techniker",
                                                    "biomedizinische technikerin")
    d = decided(de, "Krankenpfleger", "Krankenschwester")  # the declared irregular pair
    assert (d.verdict, d.masculine, d.feminine) == ("gendered", "krankenpfleger", "krankenschwester")
    d = decided(de, "Techniker", "Technik")
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", "techniker", "technikerin")
    assert "reinflected_feminine" in d.flags


def test_texts_are_lowercased_with_single_spaces(de):
    d = decided(de, "  Leitender   Ingenieur  ")
    assert (d.masculine, d.feminine) == ("leitender ingenieur", "leitende ingenieurin")
    assert decided(de, "").verdict == "failed"


def test_resource_names(de):
    assert de.lexicon_name.startswith("german-nouns:")
    assert de.wordlist_name == "hunspell:de_DE"


def test_a_missing_word_list_names_the_install_command():
    with pytest.raises(LexiconError) as err:
        GermanGenderLayer("de", hunspell_dicts=("de_XX_missing",))
    assert INSTALL_WORDLISTS in str(err.value)
    assert "apt-get install" in str(err.value) and "hunspell-de-de" in str(err.value)


def test_the_cache_keeps_word_list_answers(tmp_path):
    cache = tmp_path / "lexicon.sqlite"
    first = GermanGenderLayer("de", cache=cache)
    first.prepare(["Bäcker"])
    assert first.decide("Bäcker").feminine == "bäckerin"
    first.store.close()
    second = GermanGenderLayer("de", cache=cache)
    assert "Bäckerin" in second.wordlist.known(["Bäckerin"])  # read back from the file
    assert second.decide("Bäcker").feminine == "bäckerin"


@pytest.mark.skipif(not (DATA / "queries.tsv").is_file(), reason="the German job-title data set is not here")
def test_real_titles_are_decided_in_seconds(de):
    titles = [line.rstrip("\n").split("\t")[1] for name in ("queries.tsv", "corpus_documents.tsv")
              for line in (DATA / name).read_text(encoding="utf-8").splitlines() if "\t" in line]
    assert len(titles) > 2000
    start = time.perf_counter()
    de.prepare(titles)
    decisions = [de.decide(t) for t in titles]
    assert time.perf_counter() - start < 10
    verdicts = [d.verdict for d in decisions]
    assert verdicts.count("inflected") > 0.85 * len(titles)
    assert verdicts.count("unverified") < 0.03 * len(titles)
    for d in decisions:
        for text in (d.masculine, d.feminine, d.neutral):
            assert text is None or (text == text.lower() and "  " not in text)


def test_a_derived_adjective_the_word_list_lacks_agrees_by_its_ending_and_is_flagged(de):
    d = decided(de, "Verhaltensmedizinischer Techniker")
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", "verhaltensmedizinischer techniker",
                                                    "verhaltensmedizinische technikerin")
    assert d.flags == ["adjective_unchecked"]


def test_a_noun_ending_like_an_adjective_stays_a_noun(de):
    # Fischer ends as -ischer adjectives do, but the lexicon knows it as a person noun
    d = decided(de, "Fischer")
    assert (d.verdict, d.masculine, d.feminine) == ("inflected", "fischer", "fischerin")
