"""The Dutch gender layer (experimental): one decision per Dutch job title, grounded in the Hunspell word list.

Dutch has no grammatical gender agreement in a job title beyond the person noun itself: attributive adjectives
take *-e* or not by definiteness and the noun's article, never by the person's sex (*senior verkoper* /
*senior verkoopster*, *financiële journalist* / *financiële journaliste*). So the layer finds the title's head
person noun and makes its other form; every other word stays as written.

Resources (DESIGN.md §7): Debian ``hunspell-nl`` (OpenTaal, with Dutch compounding: it accepts
*hoofdverkoopster*, *beleidsadviseuse*) read through ``builder.lexicon.WordList``; Debian ``hunspell-en-us`` to
tell an English loan Dutch ads keep (*manager*, *developer*, *recruiter*) from an unknown word. There is no Dutch
lexicon with gender here, so **a made form is kept only when the word list knows it** (no silent invention).

One noun (``noun``), first match wins:

| the noun | kind | other form |
|---|---|---|
| a declared pair (*koning/koningin*, *kok/kokkin*, *prins/prinses*, *secretaris/secretaresse*) | person | the declared form, if the word list knows it |
| a declared common-gender noun (*arts*, *hoofd*, *lid*, *chef*) or one ending in a common-gender noun (*-kracht*, *-kundige*, *-hulp*, *-personeel*: *leerkracht*, *verpleegkundige*) | common | — |
| a feminine by the productive rules whose masculine the rules make and the word list knows (*lerares* → *leraar*, *verkoopster* → *verkoper*, *directrice* → *directeur*, *biologe* → *bioloog*, *brandweervrouw* → *brandweerman*) | person, feminine | that masculine |
| an agent noun (*-er*, *-aar*, *-eur*, *-ier*, *-ist*, *-ant*, *-ent*, *-aat*, *-oog*, *-ator*, *-or*, *-icus*, *-man*, *-air*) whose feminine the rules make and the word list knows (*verkoper* → *verkoopster*, *medewerker* → *medewerkster*, *leraar* → *lerares*, *chauffeur* → *chauffeuse*, *redacteur* → *redactrice*, *analist* → *analiste*, *assistent* → *assistente*, *advocaat* → *advocate*, *psycholoog* → *psychologe*, *brandweerman* → *brandweervrouw*); in a compound the word list does not know whole, its longest final part that is such a noun (*netwerk|beheerder*) | person, masculine | that feminine |
| an agent noun the word list knows with no feminine it knows (*ingenieur*, *manager*, *ontwikkelaar*, *bankier*, *monteur*) | common: the Dutch base form names either sex (job ads write *ontwikkelaar (m/v)*) | — |
| an adjectival noun in *-e* whose adjective the word list knows (*deskundige*, *gedeputeerde*, *verantwoordelijke*) | common | — |
| an English agent noun of the English word list that Dutch ads keep (*developer*, *designer*, *officer*) | common (loan) | — |
| any other word the word list knows (*brievenbus*, *netwerkbeveiliging*) | no person noun | — |
| unknown to both word lists | unknown | — |

The head is the last person noun (person or common) of the title's first phrase (the words before *van*, *voor*,
*en*, …): *analist netwerkbeveiliging*, *regionaal logistiek manager*, *medewerker klantenservice*.

Verdicts (``decide``): ``inflected`` (the other form made; flag ``feminine_base`` when the given title is
feminine), ``neutral`` (a common-gender head; the reason names which row), ``unknown`` (flag ``unknown_word``: a
head the word lists do not know; flag ``unknown_head``: no word of the phrase is known as a person noun). Both
``unknown`` cases are review items (builder/routes.py ``decide_given``), never neutral.
"""

from __future__ import annotations

import re
from pathlib import Path

from builder.inflection import Decision
from builder.lexicon import BatchedWordLookups, LookupStore, hunspell_wordlist
from builder.verdict import Verdict
from languages import Language, resolve

__all__ = ["DutchGenderLayer", "Noun", "INSTALL_WORDLISTS", "feminine_candidates", "masculine_candidates"]

INSTALL_WORDLISTS = "apt-get install hunspell hunspell-nl hunspell-en-us"

# Words that end the first phrase (prepositions, articles, conjunctions, punctuation).
PHRASE_END = frozenset("""
    van voor in bij op met en of & / + , - – — | ( ) : ; de het een der aan uit naar over tot binnen
    onder tegen zonder via als m/v m/v/x
""".split())
# Conjunctions: a phrase they end may modify the next one's noun (magazijn en logistiek manager); after a word
# ending in a hyphen they join two compounds sharing their last part (verzend- en ontvangstmedewerker).
CONJUNCTIONS = frozenset({"en", "of", "&", "/", "+", ","})
# Declared pairs (masculine -> feminine) no ending rule makes.
DECLARED_PAIRS = {
    "koning": "koningin", "boer": "boerin", "kok": "kokkin", "held": "heldin", "vriend": "vriendin", "god": "godin",
    "graaf": "gravin", "prins": "prinses", "baron": "barones", "voogd": "voogdes", "secretaris": "secretaresse",
    "ober": "serveerster", "steward": "stewardess", "hertog": "hertogin", "abt": "abdis", "monnik": "non",
}
# Nouns of common gender: one form names either sex.
COMMON_NOUNS = frozenset({"arts", "hoofd", "lid", "chef", "coach", "expert", "trainee", "stagiair", "piloot",
                          "gids", "tolk", "genie", "idool", "persoon", "mens", "kracht", "hulp", "personeel",
                          "staf", "team", "ceo", "cfo", "cto", "cio", "coo", "vp"})
# Endings that are common-gender nouns of their own (leer|kracht, verpleeg|kundige, huis|hulp, tand|arts).
COMMON_SUFFIXES = ("kracht", "kundige", "hulp", "personeel", "persoon", "arts", "hoofd", "lid", "chef", "coach",
                   "expert", "tolk", "gids", "piloot")
# Endings of agent nouns (the masculine base): a word with one names a person (ober, monteur, analist ...).
AGENT_SUFFIXES = ("er", "aar", "eur", "ier", "ist", "iest", "ant", "ent", "aat", "oog", "oom", "eeg", "eet", "eut",
                  "ator", "or", "icus", "man", "air", "aris", "iet", "ief", "iaan")
# ... except these endings, which end nouns of things (manage|ment, docu|ment; regist|ratie).
NOT_AGENT_SUFFIXES = ("ment", "ing", "heid", "schap", "tie", "sie", "iteit", "isme", "tuur", "eer")
# English agent nouns Dutch ads keep as they are (developer, designer, officer, engineer, consultant).
ENGLISH_AGENT_SUFFIXES = ("er", "or", "ist", "ant", "ent", "ee", "eer", "ian", "ive")
ENGLISH_AGENT_WORDS = frozenset({"chief", "head", "lead", "clerk", "coach", "scout", "staff", "crew", "guard",
                                 "chef", "pilot", "host", "intern", "associate", "agent", "officer", "member"})
# Masculine -> feminine ending rules, tried in this order (several may apply; the word list decides).
NOUN_RULES = (
    ("teur", "trice"), ("ator", "atrice"), ("eur", "euse"), ("eur", "rice"), ("aar", "ares"), ("aar", "aarster"),
    ("ier", "ière"), ("ier", "ierster"), ("ist", "iste"), ("ant", "ante"), ("ent", "ente"), ("aat", "ate"),
    ("oog", "oge"), ("oom", "ome"), ("eeg", "ege"), ("eet", "ete"), ("eut", "eute"), ("iest", "ieste"), ("aaf", "afe"),
    ("man", "vrouw"), ("air", "aire"), ("iet", "iete"),
    ("er", "ster"), ("er", "eres"), ("er", "erster"), ("or", "rice"),
)
VOWELS = "aeiou"
# Adjectives used as nouns of either sex (deskund|ige, verantwoordel|ijke, gedeputeer|de, gemachtig|de).
ADJECTIVAL_ENDINGS = ("ige", "lijke", "ische", "de", "te")


def _ster_stems(stem: str) -> list[str]:
    """The verb stem that takes -ster where -er leaves it (DESIGN.md §7): verkop|er -> verkoop|ster (a single vowel
    before one consonant is long: written double once the syllable closes), bakk|er -> bak|ster (a doubled
    consonant made single), schrijv|er -> schrijf|ster, beheerd|er -> beheer|ster (a d after r, l, n dropped),
    medewerk|er -> medewerk|ster."""
    if len(stem) >= 3 and stem[-1] not in VOWELS and stem[-2] in VOWELS and stem[-3] not in VOWELS:
        stem = stem[:-1] + stem[-2] + stem[-1]  # an open syllable: kaper -> kaap|ster, not kap|ster (kapper's)
    out = [stem]
    if len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in VOWELS:
        out.append(stem[:-1])
    if stem.endswith("v"):
        out.append(stem[:-1] + "f")
    if stem.endswith("z"):
        out.append(stem[:-1] + "s")
    if stem.endswith(("rd", "ld", "nd")):
        out.append(stem[:-1])
    return list(dict.fromkeys(out))


def feminine_candidates(word: str) -> list[str]:
    """Feminines the productive rules propose for a masculine (unchecked; the word list decides)."""
    out = []
    if word in DECLARED_PAIRS:
        out.append(DECLARED_PAIRS[word])
    for m_end, f_end in NOUN_RULES:
        if not word.endswith(m_end) or len(word) <= len(m_end) + 1:
            continue
        stem = word[: len(word) - len(m_end)]
        if (m_end, f_end) == ("er", "ster"):
            out += [s + "ster" for s in _ster_stems(stem)]
        elif (m_end, f_end) == ("aar", "ares"):
            out.append(stem + "ares")  # leraar -> lerares
        else:
            out.append(stem + f_end)
    return list(dict.fromkeys(out))


def masculine_candidates(word: str) -> list[str]:
    """Masculines the productive rules propose for a feminine (unchecked)."""
    out = [m for m, f in DECLARED_PAIRS.items() if f == word]
    for m_end, f_end in NOUN_RULES:
        if not word.endswith(f_end) or len(word) <= len(f_end) + 1:
            continue
        stem = word[: len(word) - len(f_end)]
        if (m_end, f_end) == ("er", "ster"):
            # verkoop|ster -> verkop|er, bak|ster -> bakk|er, schrijf|ster -> schrijv|er, beheer|ster -> beheerd|er
            stems = [stem]
            if re.search(r"([aeou])\1[^aeiou]$", stem):
                stems.append(stem[:-3] + stem[-2:])
            if stem and stem[-1] not in VOWELS:
                stems.append(stem + stem[-1])
            if stem.endswith("f"):
                stems.append(stem[:-1] + "v")
            if stem.endswith("s"):
                stems.append(stem[:-1] + "z")
            if stem.endswith(("r", "l", "n")):
                stems.append(stem + "d")
            out += [s + "er" for s in stems]
        else:
            out.append(stem + m_end)
    return list(dict.fromkeys(out))


class Noun:
    """One word as a noun: its kind and its two forms (lower case)."""

    __slots__ = ("kind", "gender", "masculine", "feminine", "method", "note", "no_feminine")

    def __init__(self, kind: str, gender: str | None = None, masculine: str | None = None,
                 feminine: str | None = None, method: str = "", note: str = ""):
        self.kind = kind  # person | common | loan | word | unknown
        self.gender = gender  # m | f for a person noun: the form written in the title
        self.masculine, self.feminine = masculine, feminine
        self.method, self.note = method, note
        self.no_feminine = False  # an agent noun whose feminine the word list lacks (a compound's part may have one)

    @property
    def is_person(self) -> bool:
        return self.kind in ("person", "common", "loan", "adjectival")


class DutchGenderLayer(BatchedWordLookups):
    """Word-list-grounded gender analysis and inflection of Dutch titles (see the module docstring)."""

    def __init__(self, lang: Language | str = "nl", cache: Path | None = None, *,
                 hunspell_dicts: tuple[str, ...] = ("nl",), english_dicts: tuple[str, ...] = ("en_US",)):
        lang = resolve(lang)
        self.lang = lang
        self.store = LookupStore(cache) if cache else None
        self.wordlist = hunspell_wordlist(lang.code, "hunspell-nl", tuple(hunspell_dicts), INSTALL_WORDLISTS, self.store)
        self.english = hunspell_wordlist(lang.code, "hunspell-en-us", tuple(english_dicts), INSTALL_WORDLISTS, self.store)
        self.lexicon_name = "rules:builder/dutch.py"  # no lexicon: the productive rules, checked by the word list
        self.wordlist_name = self.wordlist.name
        self.method_names = {"lexicon": self.lexicon_name, "wordlist": self.wordlist_name}  # builder/layers.py
        self.phrase_end = PHRASE_END | frozenset(lang.gender_rules.phrase_end)
        self._nouns: dict[str, Noun] = {}

    # --- one noun ---------------------------------------------------------------------------------------------
    def noun(self, word: str) -> Noun:
        found = self._nouns.get(word)
        if found is None:
            found = self._nouns[word] = self._noun(word)
        return found

    def _noun(self, w: str) -> Noun:
        if not re.fullmatch(r"[^\W\d_]+(?:-[^\W\d_]+)*", w):
            return Noun("unknown", note=f"{w!r} is not a word")
        if "-" in w:  # a hyphenated compound by its last part (project-manager)
            pre, _, last = w.rpartition("-")
            sub = self.noun(last)
            return Noun(sub.kind, sub.gender, pre + "-" + sub.masculine if sub.masculine else None,
                        pre + "-" + sub.feminine if sub.feminine else None, sub.method, f"compound of {last}: {sub.note}")
        whole = self._simple(w)
        if whole is not None and not whole.no_feminine:
            return whole
        known = self._is_word(w)
        # A compound: its longest final part that is a person noun (netwerk|beheerder, software|ontwikkelaar); for
        # an agent noun whose whole feminine the word list lacks, a part whose feminine it knows (the list has
        # beheerster, not systeembeheerster). (-ica is no feminine: informatica, the field.)
        for i in range(2, len(w) - 2):
            part = self._simple(w[i:])
            if part is None or part.kind not in ("person", "common", "loan") or (whole is not None and part.kind != "person"):
                continue
            if not (known or self._is_word(w[:i]) or self._is_word(w[:i].rstrip("s"))):
                continue  # neither the whole nor its first part is a word: no compound of this part
            return Noun(part.kind, part.gender, w[:i] + part.masculine if part.masculine else None,
                        w[:i] + part.feminine if part.feminine else None, part.method,
                        f"compound of {w[i:]}: {part.note}")
        if whole is not None:
            return whole
        if known:
            return Noun("word", method="wordlist", note=f"{w!r} is a word of the word list but no person noun")
        return Noun("unknown", note=f"{w!r} is unknown to the Dutch and English word lists")

    def _simple(self, w: str) -> Noun | None:
        """A word read whole: a person noun with its forms, common gender, a loan; None when it is none of them."""
        if w in COMMON_NOUNS or (w.endswith(COMMON_SUFFIXES) and self._is_word(w)):
            return Noun("common", method="rule", note="common-gender noun: one form names either sex")
        if not self._is_word(w):
            return self._loan(w)
        # A feminine of the rules whose masculine the word list knows (lerares, verkoopster, directrice).
        for m in masculine_candidates(w):
            if m != w and (self._agent(m) or m in DECLARED_PAIRS) and self._is_word(m) and w in feminine_candidates(m):
                return Noun("person", "f", m, w, "rule+wordlist", f"feminine of {m!r} (the rules, the word list)")
        if self._agent(w) or w in DECLARED_PAIRS:
            for f in feminine_candidates(w):
                if self._is_word(f):
                    return Noun("person", "m", w, f, "rule+wordlist", f"feminine {f!r} by rule, in the word list")
            found = Noun("common", method="rule+wordlist",
                         note="agent noun with no feminine in the word list: the Dutch base form names either sex")
            found.no_feminine = True
            return found
        if w.endswith(ADJECTIVAL_ENDINGS) and self._is_word(w[:-1]):
            # An adjectival noun (deskundige, verantwoordelijke, gedeputeerde): its adjective is a word. Read as a
            # noun only where it ends the phrase (decide): before a noun it is an adjective (technische analist).
            return Noun("adjectival", method="rule+wordlist", note="adjectival noun in -e: one form names either sex")
        return self._loan(w)  # an English loan the Dutch list knows too (engineer)

    def _agent(self, w: str) -> bool:
        return w.endswith(AGENT_SUFFIXES) and not w.endswith(NOT_AGENT_SUFFIXES) and len(w) > 3

    def _loan(self, w: str) -> Noun | None:
        if (w in ENGLISH_AGENT_WORDS or w.endswith(ENGLISH_AGENT_SUFFIXES)) and self._is_word(w, english=True):
            return Noun("loan", method="wordlist", note="English agent noun Dutch ads keep as it is, for either sex")
        return None

    # --- one title --------------------------------------------------------------------------------------------
    def decide(self, masculine: str | None, feminine: str | None = None, english: str = "") -> Decision:
        """One decision for a Dutch title (``masculine``: the base text, lower case; it may be feminine)."""
        base = masculine or feminine
        if not base or not base.strip():
            return Decision(Verdict.FAILED, reason="no title")
        words = base.split()
        start, end = 0, len(words)
        while True:
            end = next((i for i in range(start + 1, len(words)) if words[i] in self.phrase_end
                        and not (words[i] in CONJUNCTIONS and words[i - 1].endswith("-"))), len(words))
            nouns = [(i, self.noun(words[i])) for i in range(start, end)]
            persons = [(i, n) for i, n in nouns if n.is_person and (n.kind != "adjectival" or i == end - 1)]
            # A phrase with no person noun that a conjunction ends modifies the next (magazijn en logistiek manager).
            if persons or end + 1 >= len(words) or words[end] not in CONJUNCTIONS:
                break
            start = end + 1
        if not persons:
            unknown = [words[i] for i, n in nouns if n.kind == "unknown"]
            flag = "unknown_word" if unknown else "unknown_head"
            why = (f"{', '.join(repr(u) for u in unknown)} unknown to the word lists" if unknown
                   else "no word of the title is known as a person noun")
            return Decision(Verdict.UNVERIFIED, method="wordlist", flags=[flag], reason=f"{why}; needs review")
        i, head = persons[-1]
        if head.kind in ("common", "loan", "adjectival"):
            return Decision(Verdict.NEUTRAL, neutral=" ".join(words), method=_method(head.method),
                            flags=["english_loan"] if head.kind == "loan" else [],
                            reason=f"common-gender head {words[i]!r} ({head.note})")
        m_words, f_words = list(words), list(words)
        m_words[i], f_words[i] = head.masculine, head.feminine
        flags = ["feminine_base"] if head.gender == "f" else []
        return Decision(Verdict.INFLECTED, " ".join(m_words), " ".join(f_words), method=_method(head.method), flags=flags,
                        reason=f"head {words[i]!r}: {head.note}")


def _method(method: str) -> str:
    """check_method's parts (builder/routes.py layer_method): rule and wordlist."""
    parts = [p for p in ("lexicon", "rule", "wordlist") if p in method.split("+")]
    return "+".join(parts) or "none"
