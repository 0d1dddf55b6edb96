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



# --- the build's flags (translations.parquet and the items' ``flags``; stats.json counts them): the one list of
# what each means, shown word for word in docs/FORMAT.md (tests/builder/test_flag_meanings.py). The build refuses to
# write a flag this list lacks (builder/build.py), so a new flag cannot reach the files undocumented.
OUTPUT_FLAGS = {
    "echo": "the translator gave the English back",
    "empty": "the translator gave nothing (or only the template)",
    "template_not_stripped": "the template sentence could not be removed from the output",
}
BUILD_FLAGS = {
    **{f"{side}:{flag}": f"the {side} output failed: {meaning}" for side in ("masculine", "feminine")
       for flag, meaning in OUTPUT_FLAGS.items()},
    "template_not_stripped": "the template sentence could not be removed from the given title",
    "uninflected_feminine": "the verdict of identical outputs the check finds masculine, named as a flag too",
    "masculine_is_feminine": "the verdict of identical outputs the check finds feminine, named as a flag too",
    "different_words": "a pair whose feminine is not the masculine's inflection (pt advogado / procuradora)",
    "reinflected_feminine": "the lexicon made the feminine because the translator's was not its inflection",
    "reinflected_masculine": "the lexicon made the masculine because the translator's was not its inflection",
    "from_feminine_output": "the pair was made from the translator's feminine output, read the other way round",
    "feminine_output_read": "the feminine template gave a masculine, and the pair was made from it",
    "agreement_made": "an adjective made to agree with its head (a given traducteur japonaise: traducteur japonais)",
    "alternatives": "a title of \" / \" alternatives, each inflected on its own (constructeur / entrepreneur de "
                    "construction)",
    "alternative_not_inflected": "an alternative gave no pair: the whole title is a review item, never "
                                 "half-inflected",
    "masculine_base": "the given title is the masculine; the gender layer made the feminine",
    "feminine_base": "the given title is the feminine; the gender layer made the masculine",
    "inclusive_base": "the given title is an inclusive spelling (Ingenieur:in, caissier·ère); the two forms made "
                      "from it",
    "loanword": "an English loan the language keeps, one form for both",
    "english_loan": "the head is an English loan the pack's word list names",
    "common_head": "the head is a common-gender noun; a word that agrees with it makes the two forms",
    "declared_single_form": "the pack or a person declares the occupation single-form",
    "adjective_unchecked": "an adjective left as written: the lexicon cannot generate its other form",
    "unknown_word": "a word no lexicon or word list of the language knows (needs review)",
    "unknown_modifier": "a word after the head no resource of the language knows: a pivot or English word, or a "
                        "misspelling (needs review; a neutral title with one is not an item)",
    "untranslated": "English left untranslated (needs review)",
    "unknown_head": "the head noun is unknown to the lexicon and the word list (needs review)",
    "not_a_person_noun": "the head names a thing, not a person (needs review)",
    "no_feminine_form": "the lexicon and the word list know no feminine of the head (needs review)",
    "no_masculine_form": "the lexicon and the word list know no masculine of the head (needs review)",
    "unaligned": "no confident alignment to the given translation and no MT route",
    "head_not_a_noun": "MT route: the first word is a determiner, a preposition or an adjective qualifying a word "
                       "after it, the English word order kept (clínic associar professor): no item",
    "verb_form": "MT route: a gerund, a finite verb or an infinitive after \"de\" where a noun belongs (director de "
                 "xestionar): no item",
    "gender_conflict": "a text that is masculine for one source and feminine for another: one neutral item, "
                       "check_ok false",
    "absorbed_gendered_form": "a neutral item whose text another source gives as a gendered form: merged into it",
    "esco_dual_form": "ESCO set: the pair read off a preferred label in dual form (Altenpfleger/Altenpflegerin)",
    "esco_alternative_labels": "ESCO set: the pair read off two alternative labels of one occupation",
}

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
