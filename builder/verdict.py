"""The verdict: what happened to one English source, and which items it gives (``translations.parquet``
``verdict``, ``stats.json`` ``verdicts``; docs/FORMAT.md).

One definition: the builder's route strategies (builder/routes.py) and gender layers decide a ``Verdict``, the
item step (builder/postprocess.py) reads it, annotation sorts review records by it. A ``StrEnum``: a member is
its string (``Verdict.GENDERED == "gendered"``), so the files hold exactly the words they always held, and a
verdict read back from a file compares equal to its member.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    meaning: str

    def __new__(cls, value: str, meaning: str):
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    GENDERED = ("gendered", "masculine and feminine forms differ and the check does not contradict them: two items")
    NEUTRAL = ("neutral", "identical forms that the check finds common-gender (or a person marked neutral): one "
               "neutral item")
    UNINFLECTED_FEMININE = ("uninflected_feminine", "identical forms and the check says masculine: the translator "
                            "failed to inflect; the masculine item is kept, the broken feminine form is dropped "
                            "(needs review)")
    MASCULINE_IS_FEMININE = ("masculine_is_feminine", "identical forms and the check says feminine (the masculine "
                             "template gave a feminine noun): the feminine item is kept, the masculine form is "
                             "dropped (needs review)")
    UNVERIFIED_IDENTICAL = ("unverified_identical", "identical forms the check cannot classify: kept as a masculine "
                            "item only, not neutral (needs review)")
    WRONG_GENDER_FORM = ("wrong_gender_form", "forms differ but one is checked as the other gender: that form is "
                         "dropped (needs review)")
    ONE_FORM_FAILED = ("one_form_failed", "one output failed (not stripped, empty or echoed): only the other form "
                       "is kept (needs review)")
    FAILED = ("failed", "both outputs failed: the source gives no item (needs review)")
    DROPPED_BY_ANNOTATOR = ("dropped_by_annotator", "a person flagged the source not_a_job_title/untranslatable "
                            "without a correction: dropped")
    MASCULINE_ONLY = ("masculine_only", "the occupation is named in the masculine only: a person marked it so, or "
                      "the lexicon and the word list know no feminine of its head (flag no_feminine_form / "
                      "unknown_head): the masculine item alone")
    FEMININE_ONLY = ("feminine_only", "the occupation is named in the feminine only (a person marked it so, or no "
                     "masculine of the head exists, flag no_masculine_form): the feminine item alone")
    REINFLECTED = ("reinflected", "the lexicon made one form from the other because the translator's form was not "
                   "its inflection (flag reinflected_feminine / reinflected_masculine; the translator's forms stay "
                   "in mt_masculine/mt_feminine): two items")
    INFLECTED = ("inflected", "reference route: the given title is one form (flag masculine_base / feminine_base / "
                 "inclusive_base) and the gender layer made the other: two items")
    UNVERIFIED = ("unverified", "the gender layer cannot vouch for the title (a word the lexicon and the word list "
                  "do not know, English left untranslated, a single form nobody confirmed, or on the MT route a "
                  "title that kept the English word order or a verb form: flags head_not_a_noun, verb_form): never "
                  "neutral, never a single-form item; no item until a person decides it in Argilla (needs review)")
    NOT_A_PERSON = ("not_a_person", "the title names a thing, not a person (flag not_a_person_noun): no item "
                    "(needs review)")
    UNALIGNED = ("unaligned", "reference route: no confident alignment to the given translation and no MT route "
                 "for the language: no item (counted in stats.json alignment)")


# Verdicts that put a source on the review list (stats.json needs_review, with the review flags).
NEEDS_REVIEW = frozenset({Verdict.UNINFLECTED_FEMININE, Verdict.MASCULINE_IS_FEMININE, Verdict.UNVERIFIED_IDENTICAL,
                          Verdict.WRONG_GENDER_FORM, Verdict.ONE_FORM_FAILED, Verdict.FAILED, Verdict.UNVERIFIED,
                          Verdict.NOT_A_PERSON, Verdict.UNALIGNED})
# Two items, a masculine and a feminine.
PAIR_VERDICTS = (Verdict.GENDERED, Verdict.REINFLECTED, Verdict.INFLECTED)


# --- how doubtful a source is (annotation orders its review records by it, annotation/doubt.py; the term rules of
# builder/rules.py change only sources that are neither serious nor check) ------------------------------------------
SEVERITIES = ("serious", "check", "routine", "none")  # worst first
SERIOUS_FLAGS = frozenset({"untranslated", "unknown_word", "not_a_person_noun", "unknown_head", "masculine:echo",
                           "feminine:echo", "template_not_stripped", "unaligned", "different_words",
                           "head_not_a_noun", "verb_form"})
# The verdicts as read back from translations.parquet: a member equals its word.
SERIOUS_VERDICTS = frozenset({Verdict.FAILED, Verdict.ONE_FORM_FAILED, Verdict.NOT_A_PERSON, Verdict.UNALIGNED,
                              Verdict.WRONG_GENDER_FORM, Verdict.MASCULINE_IS_FEMININE})
CHECK_VERDICTS = frozenset({Verdict.UNVERIFIED, Verdict.UNINFLECTED_FEMININE, Verdict.UNVERIFIED_IDENTICAL})
# unknown_modifier: a word after the head that no lexicon or word list knows: a loanword (helpdesk, voip) or
# a misspelling (mecanico, saude publica); a person tells them apart.
CHECK_FLAGS = frozenset({"no_feminine_form", "no_masculine_form", "unknown_modifier"})
# A form the lexicon re-made or read off the other output; the verdict says when that failed.
ROUTINE_FLAGS = frozenset({"reinflected_feminine", "reinflected_masculine", "masculine_is_feminine",
                           "from_feminine_output", "feminine_output_read", "agreement_made"})
ROUTINE_VERDICTS = frozenset({Verdict.REINFLECTED, Verdict.INFLECTED})
# Where a form came from, not a doubt (builder/reference.py, builder/german.py).
INFORMATIVE_FLAGS = frozenset({"masculine_base", "feminine_base", "inclusive_base", "loanword", "english_loan",
                               "common_head", "declared_single_form"})


def severity(verdict: str, flags: list[str], has_masculine: bool, has_feminine: bool) -> str:
    """``serious`` (the title is likely wrong), ``check`` (the build could not vouch for it), ``routine`` (the
    lexicon made a form) or ``none``: the table in annotation/doubt.py."""
    flags = set(flags)
    if flags & SERIOUS_FLAGS or verdict in SERIOUS_VERDICTS:
        return "serious"
    # A flag this table does not know is a doubt to look at, never silently routine.
    unknown = flags - INFORMATIVE_FLAGS - ROUTINE_FLAGS - CHECK_FLAGS
    if verdict in CHECK_VERDICTS or flags & CHECK_FLAGS or unknown or not (has_masculine and has_feminine) and verdict not in (
            Verdict.MASCULINE_ONLY, Verdict.FEMININE_ONLY):
        return "check"
    if flags & ROUTINE_FLAGS or verdict in ROUTINE_VERDICTS:
        return "routine"
    return "none"
