"""The English indefinite article, "a" or "an", for the word that follows it, chosen by sound.

English writes "an" before a vowel SOUND and "a" before a consonant sound, whatever the letter: "an hour"
(silent h), "a user" (/ju/), "an HR manager" (the letter H is read "aitch"), "a UI designer" (U is "you"),
"an 8-hour shift" ("eight"). The templates are declared as ``He is a {title}.``; the builder fills them with
``fill_template`` (builder/translate.py), which writes "an" where ``indefinite_article`` says so, so that the
machine translator and the annotators see grammatical English ("He is an account director.").

The rule reads the first token of the title AS WRITTEN (before any lowercasing: "HR" and "MBA" are read
letter by letter, "hr"/"mba" would not be) and is explicit, in this order:

1. Symbols before the first letter or digit: quotes and brackets are skipped; a symbol that is read aloud is
   read by its name (".NET" is "dot net": "a"; "&" is "and": "an").
2. Digits: the number as spoken. Its first word is that of the leading group of up to three digits (the
   thousands grouping): "8", "80", "800", "8,000" start with "eight"; "11" and "18" alone in their group are
   "eleven", "eighteen" ("11,000": "an"; "110" is "one hundred ten": "a"). Only "eight", "eleven" and
   "eighteen" start with a vowel sound among the number words.
3. A single letter (a token like "X-ray", "E-commerce", "A/V", "J2EE") is read by its name. Letters whose
   names start with a vowel sound: A (ay), E (ee), F (ef), H (aitch), I (eye), L (el), M (em), N (en), O (oh),
   R (ar), S (es), X (ex); the others, U (you) and Y (why) included, start with a consonant sound.
4. An abbreviation read as its word (``ABBREVIATIONS``: "Sr" is "senior", "Mgr" is "manager").
5. A run of two or more capitals is an initialism read letter by letter ("HR", "IT", "MBA", "SEO", "RN",
   "LPN": "an"; "PHP", "UI", "CEO": "a"), except the acronyms read as words (``ACRONYMS_READ_AS_WORDS``:
   "SCADA" is "skada": "a"). A run of letters without a vowel letter (a, e, i, o, u, y) cannot be read as a
   word either and is read letter by letter ("Html5": "aitch": "an"; "Vp", "Bsc": "a").
6. A word: "an" before a silent h (``SILENT_H``: hour, heir, honest, honor/honour); "a" before the vowel
   letters that start with a consonant sound (``CONSONANT_SOUND_VOWEL_STARTS``: /ju/ of "user", "unit",
   "utility", "euro", "ewe"; /w/ of "one", "once"); "an" before any other vowel letter; "a" otherwise ("y"
   is a consonant at the start of a word: "a yoga instructor").

Known limits, each a choice: an all-capitals word not in ``ACRONYMS_READ_AS_WORDS`` is read as letters; an
initialism written in Title Case with a vowel letter ("Mba", "Ux") is read as a word, since nothing in its
spelling tells it from one; "herb" and its derivatives keep "a" (the h is sounded in British English and in most
US readings of "herbalist"). On the English source (2,692 titles) 512 take "an"; the PyPI ``inflect`` package
(7.6.0, not a dependency) agrees on all but "Html5 Developer" ("an": H is aitch) and "UI Designer"/"UI
Engineer" ("a": U is you), where this rule is the right one.
"""

from __future__ import annotations

import re

# Names of the letters whose first sound is a vowel: "an HR manager", "an MBA", "an X-ray".
VOWEL_SOUND_LETTERS = frozenset("aefhilmnorsx")

# Word starts (lowercase) with a silent h: "an hour", "an heir", "an honest", "an honorary", "an honour".
SILENT_H = ("hour", "heir", "honest", "honor", "honour")

# Word starts (lowercase) spelt with a vowel letter but spoken with a consonant sound.
CONSONANT_SOUND_VOWEL_STARTS = (
    # /ju/ "you": uni- of unit, union, unique, universal, university, uniform, unify, unicorn, unisex, unilateral
    # (not the negating un- of "uninsured", "unimportant", "unidentified": "an")
    "unic", "unif", "unio", "uniq", "unis", "unit", "univ", "unila", "unanim",
    # /ju/: use, user, usage, using, usual, usurp (not "usher": "an")
    "usa", "use", "usi", "usu",
    # /ju/: utensil, uterus, utility, utilization, utopia (not "utter": "an")
    "ute", "uti", "uto",
    # /jʊ/: uranium, urethra, urinal, urology, urologist (not "urban", "urgent": "an")
    "ura", "ure", "uri", "uro",
    # /ju/: ukulele, Ukrainian, ubiquitous, uvula
    "uk", "ubiq", "uvu",
    # /ju/: every eu- (euro, European, eulogy, euphoria) and ewe
    "eu", "ewe",
    # /w/: one, one-off, once (not "onerous": "an")
    "one", "once",
)
_CONSONANT_SOUND_EXCEPTIONS = ("onerous",)

# Abbreviations read as the word they stand for (not letter by letter): "a Sr. manager" is "a senior manager".
ABBREVIATIONS = {"sr": "senior", "jr": "junior", "mgr": "manager", "mr": "mister", "mrs": "missus", "ms": "miz",
                 "dr": "doctor", "st": "saint", "asst": "assistant", "dept": "department", "govt": "government"}

# All-capital acronyms read as words, not letter by letter: "a SCADA engineer" ("skada"), "a NASA scientist".
ACRONYMS_READ_AS_WORDS = frozenset({"scada", "nasa", "nato", "osha", "fema", "hipaa", "unix", "unicef", "unesco",
                                    "swat", "scuba", "laser", "radar", "ajax", "asap", "gaap", "covid"})

# Symbols read aloud before a word: ".NET" is "dot net", "&" is "and", "@" is "at", "#" is "hash".
SYMBOL_NAMES = {".": "dot", "&": "and", "@": "at", "#": "hash", "$": "dollar", "+": "plus", "%": "percent"}
_SKIPPED = "\"'“”‘’([{«¿¡*_ \t"

_FIRST = re.compile(r"[A-Za-z]+|[0-9][0-9,.]*")


def indefinite_article(text: str) -> str:
    """"a" or "an" for ``text``, the words that follow the article as written (case matters: "HR" is read
    "aitch-ar", "UI" "you-eye"). The rule: this module's docstring. Nothing to read (empty, only symbols
    not in ``SYMBOL_NAMES``): "a"."""
    text = text.lstrip(_SKIPPED)
    if not text:
        return "a"
    if text[0] in SYMBOL_NAMES:
        return indefinite_article(SYMBOL_NAMES[text[0]])
    found = _FIRST.match(text)
    if not found:
        return "a"
    token = found.group()
    if token[0].isdigit():
        return _number_article(token)
    if len(token) == 1:
        return _letters_article(token)
    word = token.lower()
    if token != token.upper() and word in ABBREVIATIONS:
        return _word_article(ABBREVIATIONS[word])
    if token == token.upper():
        return _word_article(word) if word in ACRONYMS_READ_AS_WORDS else _letters_article(word)
    if not any(v in word for v in "aeiouy"):
        return _letters_article(word)
    return _word_article(word)


def _letters_article(letters: str) -> str:
    return "an" if letters[0].lower() in VOWEL_SOUND_LETTERS else "a"


def _word_article(word: str) -> str:
    if word.startswith(SILENT_H):
        return "an"
    if word[0] not in "aeiou":
        return "a"
    if word.startswith(CONSONANT_SOUND_VOWEL_STARTS) and not word.startswith(_CONSONANT_SOUND_EXCEPTIONS):
        return "a"
    return "an"


def _number_article(number: str) -> str:
    digits = re.match(r"[0-9,]*", number).group().replace(",", "").lstrip("0") or "0"
    lead = digits[: len(digits) % 3 or 3]  # the leading group of the thousands grouping: its words come first
    if lead.startswith("8") or lead in ("11", "18"):  # eight..., eleven, eighteen
        return "an"
    return "a"
