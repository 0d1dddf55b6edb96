"""The indefinite article of the templates ("He is an account director."): builder/article.py, by sound.

Each case is English orthography and phonology with its reason (the pronunciation that decides); none is taken
from the function's own output."""

from pathlib import Path

import polars as pl
import pytest

from builder.article import indefinite_article
from builder.cache import TranslationCache
from builder.source import load_source
from builder.translate import fill_template, translate_source
from builder.translators import make_translator, offline_available

CASES = [
    # (text as written, article, why)
    ("Account Director", "an", "vowel letter, vowel sound /ə/"),
    ("Engineer", "an", "/ɛ/"),
    ("Interpreter", "an", "/ɪ/"),
    ("Office Manager", "an", "/ɒ/"),
    ("Urban Planner", "an", "u as /ɜ/, not /ju/"),
    ("Underwriting Assistant", "an", "u as /ʌ/"),
    ("Ultrasound Technician", "an", "u as /ʌ/"),
    ("Usher", "an", "u as /ʌ/ (not the /ju/ of use)"),
    ("Uninsured Claims Clerk", "an", "the negating un- /ʌn/, not uni- /juːnɪ/"),
    ("User Researcher", "a", "u as /ju/ (you)"),
    ("Utility Worker", "a", "u as /ju/"),
    ("University Lecturer", "a", "uni- as /juːnɪ/"),
    ("Universal Banker", "a", "uni- as /juːnɪ/"),
    ("Union Representative", "a", "uni- as /juːnj/"),
    ("Urologist", "a", "u as /jʊ/"),
    ("Usual Suspect", "a", "u as /ju/"),
    ("European Sales Manager", "a", "eu- as /jʊ/"),
    ("Ewe Shearer", "a", "ewe is /juː/"),
    ("One-off Consultant", "a", "one is /wʌn/"),
    ("Hourly Worker", "an", "silent h: /aʊ/"),
    ("Honest Broker", "an", "silent h: /ɒ/"),
    ("Honorary Consul", "an", "silent h"),
    ("Honours Graduate", "an", "silent h (British spelling)"),
    ("Heir Hunter", "an", "silent h: /ɛə/"),
    ("Head Chef", "a", "h sounded"),
    ("Hotel Manager", "a", "h sounded"),
    ("Yoga Instructor", "a", "y as /j/, a consonant"),
    ("HR Manager", "an", "initialism: H is 'aitch'"),
    ("IT Director", "an", "initialism: I is 'eye'"),
    ("MBA Intern", "an", "initialism: M is 'em'"),
    ("RN Supervisor", "an", "initialism: R is 'ar'"),
    ("LPN", "an", "initialism: L is 'el'"),
    ("SEO Specialist", "an", "initialism: S is 'es'"),
    ("FBI Agent", "an", "initialism: F is 'ef'"),
    ("NHS Nurse", "an", "initialism: N is 'en'"),
    ("PHP Developer", "a", "initialism: P is 'pee'"),
    ("UI Designer", "a", "initialism: U is 'you'"),
    ("UX Researcher", "a", "initialism: U is 'you'"),
    ("CEO", "a", "initialism: C is 'see'"),
    ("Html5 Developer", "an", "no vowel letter: read as letters, H is 'aitch'"),
    ("Vp Sales", "a", "no vowel letter: read as letters, V is 'vee'"),
    ("SCADA Engineer", "a", "an acronym read as a word: 'skada'"),
    ("NASA Scientist", "a", "an acronym read as a word: 'nasa'"),
    ("X-ray Technician", "an", "a single letter: X is 'ex'"),
    ("E-commerce Manager", "an", "a single letter: E is 'ee'"),
    ("J2EE Developer", "a", "a single letter: J is 'jay'"),
    ("A/V Technician", "an", "a single letter: A is 'ay'"),
    ("U-boat Captain", "a", "a single letter: U is 'you'"),
    ("iOS Developer", "an", "i as /aɪ/"),
    ("Sr. Accountant", "a", "an abbreviation read as its word: 'senior'"),
    ("Mgr Operations", "a", "an abbreviation read as its word: 'manager'"),
    ("3D Artist", "a", "'three'"),
    ("8-hour Shift Nurse", "an", "'eight'"),
    ("80s Cover Band Singer", "an", "'eighty'"),
    ("800 Number Operator", "an", "'eight hundred'"),
    ("8,000-seat Arena Manager", "an", "'eight thousand'"),
    ("11-plus Tutor", "an", "'eleven'"),
    ("18-wheeler Driver", "an", "'eighteen'"),
    ("110 Volt Electrician", "a", "'one hundred ten'"),
    ("11,000 Volt Lineman", "an", "'eleven thousand'"),
    ("1st Line Support", "a", "'first'"),
    ("8th Grade Teacher", "an", "'eighth'"),
    (".NET Developer", "a", "'dot net'"),
    ("\"Acting\" Director", "an", "quotes are not read"),
    ("(Associate) Producer", "an", "brackets are not read"),
    ("", "a", "nothing follows"),
]


@pytest.mark.parametrize("text,article,why", CASES, ids=[c[0] or "empty" for c in CASES])
def test_the_article_follows_the_sound(text, article, why):
    assert indefinite_article(text) == article, why


def test_the_casing_as_written_decides_not_the_lowercased_title():
    # Lowercased, "ui" would read as a word (/uː/ or /wiː/) and "mba" as "mbah"; as written they are initialisms.
    assert indefinite_article("UI Designer") == "a" and indefinite_article("ui designer") == "an"
    assert indefinite_article("MBA Intern") == "an" and indefinite_article("mba intern") == "a"
    assert fill_template("He is a {title}.", "UI Designer", lowercase=True) == "He is a ui designer."
    assert fill_template("She is a {title}.", "MBA Intern", lowercase=True) == "She is an mba intern."


def test_fill_template_turns_a_into_an_only_before_the_title():
    assert fill_template("He is a {title}.", "Account Director") == "He is an Account Director."
    assert fill_template("She is a {title}.", "Baker") == "She is a Baker."
    assert fill_template("A {title} is here.", "Engineer") == "An Engineer is here."
    # the paper's colon template has no article: unchanged
    assert fill_template("He is: {title}.", "Account Director") == "He is: Account Director."
    # an "a" elsewhere in the sentence is not the title's article
    assert fill_template("She is a person and a {title}.", "Engineer") == "She is a person and an Engineer."
    assert fill_template("She works as a {title}.", "Nurse", lowercase=True) == "She works as a nurse."


def test_translate_writes_the_agreeing_sentence(tmp_path):
    if not offline_available("apertium", "es"):
        pytest.skip("apertium-eng-spa not installed")
    en = tmp_path / "en"
    en.mkdir()
    titles = {"Account_Director": "Account Director", "HR_Manager": "HR Manager", "Baker": "Baker",
              "User_Researcher": "User Researcher"}
    (en / "queries.tsv").write_text("".join(f"{i}\t{t}\n" for i, t in titles.items()))
    (en / "corpus_documents.tsv").write_text("".join(f"{i}\t{t}\n" for i, t in titles.items()))
    (en / "annotations.tsv").write_text("Baker\t0\tAccount_Director\t1\n")
    templates = {"masculine": "He is a {title}.", "feminine": "She is a {title}.", "lowercase": True}
    cache = TranslationCache(Path(tmp_path) / "translations.sqlite")
    try:
        raw = translate_source(load_source(en), make_translator("apertium", "es"), templates, cache, progress=False)
    finally:
        cache.close()
    got = {r["source_id"]: (r["sentence_masculine"], r["sentence_feminine"]) for r in raw.iter_rows(named=True)}
    assert got == {"Account_Director": ("He is an account director.", "She is an account director."),
                   "HR_Manager": ("He is an hr manager.", "She is an hr manager."),
                   "Baker": ("He is a baker.", "She is a baker."),
                   "User_Researcher": ("He is a user researcher.", "She is a user researcher.")}
    # the translator was given those sentences: its outputs are what it says for them
    by_id = {r["source_id"]: r for r in raw.iter_rows(named=True)}
    assert by_id["Account_Director"]["output_feminine"] == make_translator("apertium", "es").translate(
        ["She is an account director."])[0]
    assert isinstance(raw, pl.DataFrame)
