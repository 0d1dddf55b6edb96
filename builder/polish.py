"""The Polish gender layer (experimental): one decision per Polish job title, grounded in Morfeusz 2 and Hunspell.

Polish marks the person's gender on the head noun (*inżynier* / *inżynierka*, *kierownik* / *kierowniczka*) and on
the adjectives agreeing with it, before or after it (*starszy inżynier* / *starsza inżynierka*, *inżynier
budowlany* / *inżynierka budowlana*); a genitive complement keeps its form (*kierownik projektu* / *kierowniczka
projektu*, *nauczyciel szkoły podstawowej* / *nauczycielka szkoły podstawowej*).

Resources (DESIGN.md §7):

- **lexicon**: PyPI ``morfeusz2`` (Morfeusz 2 with the SGJP dictionary; licence: morfeusz.sgjp.pl/doc/license): analysis (lemma and
  tag: ``subst:sg:nom:m1`` is a personal masculine noun, ``subst:sg:nom:f`` a feminine one, ``m2``/``m3``/``n``
  animals and things) and generation (the forms of an adjective or participle lemma: agreement);
- **word list**: Debian ``hunspell-pl`` (through ``builder.lexicon.WordList``): accepts a derived feminine SGJP
  lacks; Debian ``hunspell-en-us`` tells an English loan (*web developer*) from an unknown word.

The head (``analyse``): the title's first words that can be nominative singular form the phrase (a genitive
complement, a preposition or *ds.* ends it). Its head is the first noun of it that is only a noun (not also an
adjective: *starszy*, *budowlany* are both), else its last noun (*główny księgowy*). The adjectives and
participles of the phrase before and right after the head agree with it.

The head noun, first match wins:

| the head | kind | other form |
|---|---|---|
| a personal masculine (``m1``) whose feminine the derivation rules make and SGJP knows as a feminine noun (else Hunspell pl knows): -nik → -niczka/-nica, -ik/-yk → -iczka/-yczka, -ca → -czyni, -a → -ka (*specjalista*, *farmaceuta*), -log → -lożka, -k → -czka, -rz → -rka, consonant + -ka (*inżynierka*, *dyrektorka*), -yni/-ini (*mistrzyni*, *członkini*), an adjectival noun's feminine (*księgowy* → *księgowa*) | person, masculine | that feminine |
| a feminine (``f``) whose masculine the rules give back and SGJP knows as ``m1`` (*pielęgniarka* → *pielęgniarz*) | person, feminine | that masculine |
| ``m1`` with no feminine in either resource, that SGJP also lists as a feminine noun (*psycholog:Sf*, *sędzia*) | common: one form for either sex, in SGJP's own words | — |
| ``m1`` with no feminine in either resource (*chirurg*, *mechanik*) | common: the masculine names either sex (Polish ads write *chirurg (k/m)*); the reason says no feminine is known | — |
| a feminine with no ``m1`` partner (*rada*, *komunikacja*) | unknown: no person noun known (a review item) | — |
| only a thing or an animal (``m2``, ``m3``, ``n``: *serwer*, *nabór*) | thing | — |
| unknown to SGJP, an English agent noun of the English word list (*developer*) | loan, common | — |
| unknown to every resource | unknown | — |

Verdicts (``decide``): ``inflected`` (the other form made; flag ``feminine_base`` when the given title is
feminine), ``neutral`` (a common-gender or loan head and nothing agreeing to change), ``not_a_person`` (flag
``not_a_person_noun``), ``unknown`` (flags ``unknown_word`` / ``unknown_head``; a review item). An agreeing word
whose other form Morfeusz cannot generate is left as written and flagged ``adjective_unchecked``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from builder.inflection import Decision
from builder.lexicon import LexiconError, LookupStore, hunspell_wordlist
from builder.verdict import Verdict
from languages import Language, resolve

__all__ = ["PolishGenderLayer", "feminine_candidates", "masculine_candidates", "INSTALL_LEXICON",
           "INSTALL_WORDLISTS"]

INSTALL_LEXICON = "pip install morfeusz2"
INSTALL_WORDLISTS = "apt-get install hunspell hunspell-pl hunspell-en-us"

# Masculine -> feminine derivations, tried in order (several may apply; the lexicon or the word list decides).
FEMININE_RULES = (
    ("nik", "niczka"), ("nik", "nica"), ("ik", "iczka"), ("yk", "yczka"), ("ak", "aczka"), ("log", "lożka"),
    ("g", "żka"), ("ca", "czyni"), ("niec", "nka"), ("iec", "czyni"), ("ec", "czyni"), ("a", "ka"), ("ek", "kini"), ("rz", "rka"),
    ("rz", "rzyni"), ("ciel", "cielka"), ("owy", "owa"), ("y", "a"), ("i", "a"), ("", "ka"), ("", "yni"),
    ("", "ini"), ("", "owa"),
)
# Pairs no derivation rule makes (masculine -> feminine), each still confirmed by the lexicon or the word list.
DECLARED_PAIRS = {"steward": "stewardesa", "kolega": "koleżanka", "gospodarz": "gospodyni"}
CONSONANT_END = re.compile(r"[bcćdfghjklłmnńprsśtwzźż]$")
# English agent-noun endings: a word SGJP does not know with one, known to the English word list, is a loan.
ENGLISH_AGENT_SUFFIXES = ("er", "or", "ist", "ant", "ent", "ee", "eer", "ian", "ive", "ager")
AGREEING = ("adj", "ppas", "pact")  # adjectives and participles: they agree with the head
PERSON_GENDERS = ("m1", "f")


def feminine_candidates(lemma: str) -> list[str]:
    """Feminines the derivation rules propose for a masculine lemma (unchecked)."""
    out = [DECLARED_PAIRS[lemma]] if lemma in DECLARED_PAIRS else []
    for m_end, f_end in FEMININE_RULES:
        if not lemma.endswith(m_end) or len(lemma) <= len(m_end) + 2:
            continue
        if m_end == "" and not CONSONANT_END.search(lemma):
            continue
        out.append(lemma[: len(lemma) - len(m_end)] + f_end)
    return list(dict.fromkeys(out))


def masculine_candidates(lemma: str) -> list[str]:
    """Masculines the derivation rules give back for a feminine lemma (unchecked; round-trip checked by the
    caller)."""
    out = [m for m, f in DECLARED_PAIRS.items() if f == lemma]
    for m_end, f_end in FEMININE_RULES:
        if lemma.endswith(f_end) and len(lemma) > len(f_end) + 2:
            out.append(lemma[: len(lemma) - len(f_end)] + m_end)
    return list(dict.fromkeys(out))


class Reading:
    __slots__ = ("lemma", "cls", "fields")

    def __init__(self, lemma: str, tag: str):
        self.lemma = lemma
        parts = tag.split(":")
        self.cls, self.fields = parts[0], parts[1:]

    @property
    def base(self) -> str:
        """The lemma without SGJP's homonym mark (psycholog:Sf -> psycholog)."""
        return self.lemma.split(":")[0]

    def sg_nom(self, gender: str | None = None) -> bool:
        """Nominative singular (of this gender)."""
        f = self.fields
        return (len(f) >= 3 and f[0] == "sg" and "nom" in f[1].split(".")
                and (gender is None or gender in f[2].split(".")))


@functools.lru_cache(maxsize=1)
def load_morfeusz():
    """Morfeusz 2 with its SGJP dictionary, once per process (0.1 s)."""
    try:
        import morfeusz2
    except ImportError:
        raise LexiconError(f"pl: the Polish lexicon needs the PyPI package morfeusz2; install it with: "
                           f"{INSTALL_LEXICON}") from None
    return morfeusz2.Morfeusz(generate=True, expand_tags=False)


class Head:
    __slots__ = ("kind", "gender", "masculine", "feminine", "method", "note")

    def __init__(self, kind, gender=None, masculine=None, feminine=None, method="", note=""):
        self.kind, self.gender, self.masculine, self.feminine = kind, gender, masculine, feminine
        self.method, self.note = method, note


class PolishGenderLayer:
    """Morfeusz-grounded gender analysis and inflection of Polish titles (see the module docstring)."""

    def __init__(self, lang: Language | str = "pl", cache: Path | None = None, *,
                 hunspell_dicts: tuple[str, ...] = ("pl_PL",), english_dicts: tuple[str, ...] = ("en_US",)):
        import importlib.metadata

        lang = resolve(lang)
        self.lang = lang
        self.store = LookupStore(cache) if cache else None
        self.morfeusz = load_morfeusz()
        self.wordlist = hunspell_wordlist(lang.code, "hunspell-pl", tuple(hunspell_dicts), INSTALL_WORDLISTS, self.store)
        self.english = hunspell_wordlist(lang.code, "hunspell-en-us", tuple(english_dicts), INSTALL_WORDLISTS, self.store)
        self.lexicon_name = f"morfeusz2:{importlib.metadata.version('morfeusz2')}:{self.morfeusz.dict_id()}"
        self.wordlist_name = self.wordlist.name
        self.method_names = {"lexicon": self.lexicon_name, "wordlist": self.wordlist_name}  # builder/layers.py
        self._readings: dict[str, list[Reading]] = {}
        self._forms: dict[str, list[tuple[str, Reading]]] = {}

    # --- the resources ------------------------------------------------------------------------------------------
    def readings(self, word: str) -> list[Reading]:
        """Morfeusz's readings of one word ([] when it does not know it)."""
        found = self._readings.get(word)
        if found is None:
            found = []
            for _start, _end, (_orth, lemma, tag, _names, _quals) in self.morfeusz.analyse(word):
                if tag not in ("ign", "interp"):
                    found.append(Reading(lemma, tag))
            self._readings[word] = found
        return found

    def forms(self, lemma: str) -> list[tuple[str, Reading]]:
        """Every form Morfeusz generates of a lemma (with its homonym mark), with its reading."""
        found = self._forms.get(lemma)
        if found is None:
            try:
                found = [(g[0], Reading(g[1], g[2])) for g in self.morfeusz.generate(lemma)]
            except RuntimeError:  # a lemma the generator does not know
                found = []
            self._forms[lemma] = found
        return found

    def _noun_of(self, word: str, gender: str) -> bool:
        """SGJP knows ``word`` as the nominative singular of a noun of that gender (its own lemma)."""
        return any(r.cls == "subst" and r.sg_nom(gender) and r.base == word for r in self.readings(word))

    def prepare(self, titles: list[str]) -> None:
        """One Hunspell batch for the derived forms the decisions may ask about (Morfeusz answers in-process)."""
        words = {w for t in titles if t for w in t.split()}
        cands: set[str] = set()
        for w in words:
            for r in self.readings(w):
                if r.cls == "subst" and r.sg_nom():
                    cands.update(feminine_candidates(r.base) + masculine_candidates(r.base))
        self.wordlist.known(sorted(cands))
        self.english.known(sorted(w for w in words if not self.readings(w)))

    prepare_labels = prepare

    # --- the head noun --------------------------------------------------------------------------------------------
    def head(self, word: str) -> Head:
        rs = self.readings(word)
        nouns = [r for r in rs if r.cls == "subst" and r.sg_nom()]
        m1 = [r for r in nouns if r.sg_nom("m1")]
        fem = [r for r in nouns if r.sg_nom("f")]
        for r in m1:
            lemma = r.base
            for c in feminine_candidates(lemma) + self._adjectival_feminines(word):
                if self._noun_of(c, "f"):
                    return Head("person", "m", word, c, "lexicon", f"feminine {c!r} of SGJP (Morfeusz)")
            for c in feminine_candidates(lemma):
                if self.wordlist.is_word(c):
                    return Head("person", "m", word, c, "rule+wordlist",
                                f"feminine {c!r} by the derivation rules, in the word list (SGJP lacks it)")
        for r in fem:
            for c in masculine_candidates(r.base) + self._adjectival_masculines(word):
                if c != word and self._noun_of(c, "m1") and (word in feminine_candidates(c)
                                                             or word in self._adjectival_feminines(c)):
                    return Head("person", "f", c, word, "lexicon", f"feminine of {c!r} (SGJP, Morfeusz)")
        if m1:
            if any(r.sg_nom("f") and r.base == m1[0].base for r in nouns):
                return Head("common", method="lexicon",
                            note="SGJP lists the masculine form as a feminine noun too: one form for either sex")
            return Head("common", method="lexicon+wordlist",
                        note="personal masculine with no feminine in SGJP or the word list: the masculine names "
                             "either sex")
        if fem:
            return Head("unknown", note=f"{word!r} is a feminine noun with no personal masculine: no person noun known")
        if nouns:
            return Head("thing", method="lexicon", note=f"{word!r} is a noun of a thing or an animal in SGJP "
                                                        f"({'/'.join(sorted({r.fields[2] for r in nouns}))})")
        return Head("unknown", note=f"{word!r} is no noun SGJP knows")

    def _adjectival_feminines(self, word: str) -> list[str]:
        """The feminine of an adjectival noun (księgowy -> księgowa, śledczy -> śledcza) by its adjective."""
        return [f for f, _ in self._agree_forms(word, "f")]

    def _adjectival_masculines(self, word: str) -> list[str]:
        return [m for m, _ in self._agree_forms(word, "m1")]

    def _agree_forms(self, word: str, target: str) -> list[tuple[str, str]]:
        """(form, lemma): the nominative singular of ``target`` gender of each adjective or participle reading."""
        out = []
        for r in self.readings(word):
            if r.cls not in AGREEING or not r.sg_nom():
                continue
            for form, g in self.forms(r.lemma):
                if g.cls == r.cls and g.sg_nom(target) and g.fields[3:] == r.fields[3:]:
                    out.append((form, r.lemma))
        return list(dict.fromkeys(out))

    def _agreeing(self, word: str, gender: str) -> bool:
        return any(r.cls in AGREEING and r.sg_nom(gender) for r in self.readings(word))

    def _loan(self, word: str) -> bool:
        return word.endswith(ENGLISH_AGENT_SUFFIXES) and self.english.is_word(word)

    # --- one title ------------------------------------------------------------------------------------------------
    def decide(self, masculine: str | None, feminine: str | None = None, english: str = "") -> Decision:
        """One decision for a Polish title (``masculine``: the base text, lower case; it may be feminine)."""
        base = masculine or feminine
        if not base or not base.strip():
            return Decision(Verdict.FAILED, reason="no title")
        words = base.split()
        # The phrase: the first words that can be nominative singular (a genitive complement, ds., a preposition end
        # it), after any leading words that cannot (English modifiers: web developer).
        start = next((i for i, w in enumerate(words) if any(r.sg_nom() for r in self.readings(w))), len(words))
        run = start
        while run < len(words) and any(r.sg_nom() for r in self.readings(words[run])):
            run += 1
        nouns = [i for i in range(start, run) if any(r.cls == "subst" and r.sg_nom() for r in self.readings(words[i]))]
        pure = [i for i in nouns if not any(r.cls in AGREEING for r in self.readings(words[i]))]
        h = pure[0] if pure else (nouns[-1] if nouns else None)
        if h is None:
            loans = [w for w in words if not self.readings(w) and self._loan(w)]
            if loans:
                return Decision(Verdict.NEUTRAL, neutral=base, method="wordlist", flags=["english_loan"],
                                reason=f"English agent noun {loans[-1]!r} Polish ads keep as it is, for either sex")
            unknown = [w for w in words if not self.readings(w)]
            flag = "unknown_word" if unknown else "unknown_head"
            why = (f"{', '.join(repr(u) for u in unknown)} unknown to SGJP and the word lists" if unknown
                   else "no noun of the title is nominative")
            return Decision(Verdict.UNVERIFIED, method="lexicon", flags=[flag], reason=f"{why}; needs review")
        head = self.head(words[h])
        if head.kind == "thing":
            return Decision(Verdict.NOT_A_PERSON, method="lexicon", flags=["not_a_person_noun"],
                            reason=f"the head {words[h]!r} is not a person noun ({head.note})")
        if head.kind == "unknown":
            return Decision(Verdict.UNVERIFIED, method="lexicon", flags=["unknown_head"],
                            reason=f"the head {words[h]!r}: {head.note}; needs review")
        if head.kind == "common":
            return Decision(Verdict.NEUTRAL, neutral=base, method=_method(head.method),
                            reason=f"common-gender head {words[h]!r} ({head.note})")
        # The agreeing words: adjectives and participles of the phrase before the head, and right after it.
        source = "m1" if head.gender == "m" else "f"
        m_words, f_words = list(words), list(words)
        m_words[h], f_words[h] = head.masculine, head.feminine
        flags = ["feminine_base"] if head.gender == "f" else []
        after = h + 1
        while after < run and self._agreeing(words[after], source):
            after += 1
        for i in list(range(start, h)) + list(range(h + 1, after)):
            if not self._agreeing(words[i], source):
                continue
            target = "f" if source == "m1" else "m1"
            other = self._agree_forms(words[i], target)
            if not other:
                if "adjective_unchecked" not in flags:
                    flags.append("adjective_unchecked")
                continue
            (m_words if target == "m1" else f_words)[i] = other[0][0]
        return Decision(Verdict.INFLECTED, " ".join(m_words), " ".join(f_words), method=_method(head.method), flags=flags,
                        reason=f"head {words[h]!r}: {head.note}")


def _method(method: str) -> str:
    parts = [p for p in ("lexicon", "rule", "wordlist") if p in method.split("+")]
    return "+".join(parts) or "none"
