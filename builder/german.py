"""The German gender layer: one decision per German job title, grounded in a noun lexicon and word lists.

German titles come mostly in the generic masculine (*Biomedizinischer Techniker*), sometimes feminine
(*Kassiererin*) or inclusive (*Avioniker/in*). The layer finds the title's person nouns, tells their gender and
makes the other form, accepting a form only when a resource knows it (DESIGN.md §7):

- **lexicon**: PyPI ``german-nouns`` (Wiktionary DE, ~100,000 nouns with genus and forms; data CC BY-SA 4.0),
  read once per process from its CSV: lemma -> genders, adjectival declension (*Angestellter*);
- **word list**: Debian ``hunspell-de-de`` through ``builder.lexicon.WordList`` (the ``hunspell`` command). It
  is case-sensitive: a word it accepts in lower case is no noun (tells *Leitender* the adjective from
  *Leiter* the noun at the start of a title, where both are capitalised);
- **English word list**: Debian ``hunspell-en-us``: an invariable English title German ads use as is
  (*Chief Investment Officer*).

Phrase analysis (``analyse``): inclusive markers are removed first (*Avioniker/in*, *Ingenieur:in*,
*Ingenieur\\*in*, *IngenieurIn*, *Ingenieur/-in*, *(m/w/d)*, *Technische/r*; flag ``inclusive_base``). The
first noun phrase is the words before the first preposition, article or conjunction (``für``, ``des``, ``im``,
…). In it, a word that is not the last one and whose lower-case spelling the word list accepts is an adjective
(it agrees with the next noun: strong declension, ``-er`` masculine, ``-e`` feminine); every other word is a
noun, analysed by its last hyphen part (*Grafik-Designer*). The **head** is the phrase's last person noun
(*Leiter* in *Exekutivteam-Leiter Gast-Erfahrung*), else its last noun. Every person noun of the phrase takes
the target gender (*Mitarbeiter Technischer Programm-Manager* -> *Mitarbeiterin Technische
Programm-Managerin*); the rest of the title stays as written.

One noun (``noun``), first match wins:

| the noun | kind | other form |
|---|---|---|
| ends in a common-gender head (-kraft, -person, -hilfe, -personal, -mitglied, Azubi, …) | common | — |
| declared feminine of the pack (*Krankenschwester*, *Hebamme*, *Beamtin*) | feminine person | the pack's masculine |
| lexicon masculine (or adjectival *Angestellter*) with a feminine the rules make and the lexicon knows (else the word list) | masculine person | -in with umlaut where the resource has it (*Ärztin*), -e dropped (*Geologin*), -mann -> -frau, adjectival -er -> -e |
| lexicon feminine whose masculine the rules make and the lexicon knows (else the word list) | feminine person | -in removed, umlaut undone (*Ärztin* -> *Arzt*), -frau -> -mann, adjectival -e -> -er |
| lexicon masculine and feminine, no derived form (*Azubi*) | common | — |
| not in the lexicon: its longest final component that is (*Netzwerk\\|techniker*); not a short noun that merely ends like an agent suffix (*Kosmeto\\|loge*, *Croup\\|ier*), not an adjectival one after no word (*Landschaftsgest\\|alter*), not a masculine or common one in a feminine or neuter lexicon noun (*Kom\\|mode*) | as the component's | the prefix + the component's form |
| only the word list knows it | as above by the rules, confirmed by the word list | |
| a Latin or Greek agent suffix (-or, -ent, -ant, -ist, -eur, -ier, -ologe, -graf, -nom, -urg(e), -ar, -at, -et, -it) on a stem of 3+ letters, masculine unknown to the lexicon (*Animator*, *Superintendent*, *Intensivist*), or a lexicon masculine with no feminine anywhere in -ist, -eur, -ier, -loge (*Bankier*, *Retuscheur*, *Generalist*) | masculine person | -in by the ending rule (method ``rule``); the reverse for *Animatorin* |
| masculine with no feminine anywhere, agent-noun ending (*Lehrling*, *Leutnant*) | masculine only | — |
| an English agent noun in -er (en word list or the English source title; *Controller*, *Underwriter*) | masculine person | -in by rule, for the head only |
| an English title German keeps invariable (*Officer*, *Associate*, *Executive*, *Trainee*, *Engineer*) | loan, common | — |
| an English agent noun that is also a German word of another kind (*Intern*: *intern*, internal) | unknown | — |
| any other noun the lexicon knows (*Reisebüro*, *Spendenaktion*, *Vertrieb*) | thing | — |
| unknown to all resources | unknown | — |

Verdicts (``decide``): ``gendered`` (a given feminine confirmed), ``inflected`` (the other form made),
``neutral`` (common-gender or loan head, nothing agreeing changes), ``masculine_only`` / ``feminine_only``
(flags ``no_feminine_form`` / ``no_masculine_form``), ``not_a_person`` (flag ``not_a_person_noun``),
``unknown`` (flag ``unknown_word``, a review item). Texts are lower-cased with single spaces.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from builder.inflection import Decision
from builder.lexicon import BatchedWordLookups, LexiconError, LookupStore, hunspell_wordlist
from builder.verdict import Verdict
from languages import Language, resolve

__all__ = ["GermanGenderLayer", "GermanLexicon", "NounForms", "Token", "load_lexicon", "INSTALL_LEXICON",
           "INSTALL_WORDLISTS"]

INSTALL_LEXICON = "pip install german-nouns"
INSTALL_WORDLISTS = "apt-get install hunspell hunspell-de-de hunspell-en-us"

# Words that end the first noun phrase (prepositions, articles, conjunctions); the pack's phrase_end and
# mitigation stop words are added.
PHRASE_END = frozenset("""
    für der des die das dem den ein eine einer eines einem einen von vom im in mit und oder sowie bzw zur zum
    bei beim am an auf aus über unter nach gegen ohne als an & / + , – — | ( ) : ; - sie
""".split())
# Conjunctions joining modifiers before a shared head (Film & Video Editor, Ehe- und Familientherapeut).
CONJUNCTIONS = frozenset({"und", "oder", "&", "/", "+", ",", "sowie"})
# Heads of common gender: the noun names a person of either gender and nothing in it changes (DESIGN.md §7).
COMMON_SUFFIXES = ("kraft", "person", "hilfe", "personal", "mitglied", "persönlichkeit",
                   # Gender-neutral role nouns German ads use for the person (Teamleitung, Assistenz der Leitung).
                   "leitung", "assistenz", "aufsicht")
ROLE_SUFFIXES = ("leitung", "assistenz", "aufsicht")
NOT_COMMON_SUFFIXES = ("gehilfe", "begleitung")  # Anwaltsgehilfe: the head is Gehilfe (m), not -hilfe
# Women's titles with no masculine counterpart (das Kindermädchen).
FEMININE_ONLY_SUFFIXES = ("mädchen",)
# Declared pairs beside the pack's (feminine -> masculine): a nurse's -schwester is a -pfleger.
DECLARED_PAIRS = {"schwester": "pfleger", "stewardess": "steward"}
# Endings of participles and adjectives used as nouns (Vortragende/Vortragender, Beitragender).
PARTICIPLE_ENDINGS = ("nde", "nder", "te", "ter", "ige", "iger", "ene", "ener", "che", "cher")
# Of these, the ones with one form for both genders (der/die Azubi): an adjective before them agrees with the person.
EPICENE_NOUNS = frozenset({"azubi", "profi", "trainee", "star", "waise", "model"})
COMMON_NOUNS = frozenset({"azubi", "profi", "model", "staff", "trainee", "waise", "geisel", "star", "crew",
                          "double", "mitglied", "personal", "person", "kraft", "hilfe", "aushilfe"})
# Masculine person nouns with no feminine in use are recognised by an agent-noun ending; other masculine nouns
# without a feminine name things (Vertrieb, Dienst, Import).
AGENT_ENDINGS = ("er", "or", "ist", "ant", "eur", "ier", "ling", "loge", "nom", "soph", "graf", "graph", "mann")
# Latin and Greek agent suffixes German inflects with -in (Animatorin, Superintendentin, Intensivistin,
# Retuscheurin, Kosmetologin): a masculine noun with one of them, on a stem of three letters or more, makes its
# feminine by the ending rule even when no resource knows the feminine (method "rule"), unless the noun is a thing.
LATIN_AGENT_SUFFIXES = ("ologe", "loge", "graph", "graf", "urge", "urg", "nom", "eur", "ier", "ist", "ent", "ant",
                        "or", "ar", "är", "at", "et", "it")
# Of these, the endings whose masculine nouns name persons nearly without exception: applied also to a masculine of
# the lexicon with no feminine anywhere (Bankier, Barbier, Retuscheur, Generalist). The lexicon's masculines without
# a feminine in -or, -ant, -at, -et, -it, -ar, -graf name things as often as persons (Prozessor, Motor, Diamant,
# Automat, Komet, Paragraf; Leutnant, a rank with no feminine): they keep the verdicts below.
PERSON_SUFFIXES = ("ologe", "loge", "eur", "ier", "ist")
# Shapes with these endings that are no agent nouns (Management, Dokument; Geier, Schleier; Indoor, Floor).
NOT_AGENT_SUFFIXES = ("ment", "eier", "oor")
# The short suffixes end many English words that name no person (Budget, Audit, Format, Seminar): an English word
# with one of them is not read by the rule.
SHORT_SUFFIXES = ("ar", "är", "at", "et", "it")
# Linking elements between a compound's parts (Landschafts|gestalter, Bundes|angestellter, Kinder|arzt).
LINKS = ("s", "es", "n", "en", "e", "er", "ns")
# English agent nouns a German title keeps as they are (Officer, Associate, Executive, Trainee, Chief) ...
ENGLISH_AGENT_ENDINGS = ("er", "or", "ist", "ee", "ive", "ian")
ENGLISH_THING_ENDINGS = ("ware", "center", "water", "paper", "letter", "computer", "printer")
# ... except the English agent nouns in -er that German ads inflect (Managerin, Designerin, Controllerin,
# Trainerin, Underwriterin): those take -in by rule. English titles that stay invariable:
ENGLISH_INVARIABLE_ENDINGS = ("eer", "ee", "ive", "ian")  # Engineer, Volunteer, Trainee, Executive, Technician
ENGLISH_AGENT_WORDS = frozenset({"chief", "head", "lead", "clerk", "coach", "scout", "nanny", "staff", "crew",
                                  "guard", "chef", "pilot", "host", "intern", "associate", "consultant",
                                  "accountant", "assistant", "attendant", "agent", "resident", "officer", "member",
                                  "president", "sheriff", "counsel", "provost", "ceo", "cfo", "cto", "coo", "cio",
                                  "cmo", "vp", "svp", "evp", "avp"})
UMLAUT = {"a": "ä", "o": "ö", "u": "ü", "A": "Ä", "O": "Ö", "U": "Ü"}
DEUMLAUT = {v: k for k, v in UMLAUT.items()}
LETTERS = re.compile(r"^[^\W\d_]+$")
# Inclusive spellings of a noun (ingenieur*in, ingenieur:in, ingenieur_in, ingenieur/in, ingenieur/-in,
# ingenieur(in), IngenieurIn) and of an adjective (technische/r, leitende(r), leitende*r).
GENDER_NOTE = re.compile(r"\s*\((?:[mwfdxi]|gn|div|divers|all genders|alle geschlechter)"
                         r"(?:\s*[/|,]\s*(?:[mwfdxi]|gn|div|divers))*\)", re.IGNORECASE)
NOUN_MARKER = re.compile(r"(?<=[^\W\d_])(?:(?:[*:_]|/-?)in(?:nen)?|\(in(?:nen)?\))(?![^\W\d_])")
BINNEN_I = re.compile(r"(?<=[a-zäöüß])In(?:nen)?(?![^\W\d_])")
ADJ_MARKER = re.compile(r"(?<=[^\W\d_]e)(?:(?:[*:_]|/-?)r|\(r\))(?![^\W\d_])")
MANN_FRAU = re.compile(r"(?<=[^\W\d_])mann\s*/\s*-?\s*(?:[^\W\d_]*)frau(?![^\W\d_])", re.IGNORECASE)
FRAU_MANN = re.compile(r"(?<=[^\W\d_])frau\s*/\s*-?\s*(?:[^\W\d_]*)mann(?![^\W\d_])", re.IGNORECASE)

M, F = "m", "f"
PERSON_KINDS = ("person", "common", "loan", "masculine_only", "feminine_only")


# --- the lexicon: german-nouns, read once per process --------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    genders: frozenset[str]  # m, f, n of the noun readings with this nominative singular
    adjectival: bool  # adjectival declension (Angestellter / Angestellte)


class GermanLexicon:
    """German nouns of Wiktionary (PyPI ``german-nouns``): nominative singular -> genders."""

    def __init__(self, csv_path: Path, version: str):
        self.name = f"german-nouns:{version}"
        self.entries: dict[str, Entry] = {}
        skip = {"Toponym", "Vorname", "Nachname", "Eigenname", "Buchstabe", "Symbol", "Straßenname", "Affix",
                "Suffix", "Gebundenes Lexem", "Redewendung", "Grußformel", "Geflügeltes Wort", "Partikel"}
        genders: dict[str, set[str]] = {}
        adjectival: set[str] = set()
        with open(csv_path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader)
            g_cols = [i for i, h in enumerate(header) if h.startswith("genus")]
            plain = [i for i, h in enumerate(header) if h.startswith("nominativ singular")
                     and not h.endswith(("schwach", "gemischt"))]
            for row in reader:
                pos = set(row[1].split(","))
                if "Substantiv" not in pos or pos & skip:
                    continue
                gs = {row[i] for i in g_cols if row[i] in ("m", "f", "n")}
                if not gs:
                    continue
                adj = "adjektivische Deklination" in pos
                forms = {row[0]} | {row[i] for i in plain if row[i]}
                for form in forms:
                    if " " in form:
                        continue
                    genders.setdefault(form, set()).update(gs)
                    if adj:
                        adjectival.add(form)
        self.entries = {w: Entry(frozenset(g), w in adjectival) for w, g in genders.items()}

    def get(self, word: str) -> Entry | None:
        return self.entries.get(word)

    def has(self, word: str, gender: str) -> bool:
        e = self.entries.get(word)
        return e is not None and gender in e.genders


@functools.lru_cache(maxsize=1)
def load_lexicon() -> GermanLexicon:
    """The lexicon, loaded once per process (about half a second)."""
    try:
        from german_nouns.config import CSV_FILE_PATH
    except ImportError:
        raise LexiconError(f"de: the German lexicon needs the PyPI package german-nouns; install it with: "
                           f"{INSTALL_LEXICON}") from None
    import importlib.metadata

    path = Path(CSV_FILE_PATH)
    if not path.is_file():
        raise LexiconError(f"de: {path} is missing; reinstall the lexicon with: {INSTALL_LEXICON}")
    try:
        version = importlib.metadata.version("german-nouns")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return GermanLexicon(path, version)


# --- analysis results ----------------------------------------------------------------------------------------
@dataclass
class NounForms:
    """One noun: its kind and its two forms (as written, capitalised)."""

    kind: str  # person | common | loan | masculine_only | feminine_only | thing | unknown
    gender: str | None = None  # m | f: the gender of the form written in the title
    masculine: str | None = None
    feminine: str | None = None
    method: set[str] = field(default_factory=set)  # lexicon, rule, wordlist
    note: str = ""
    epicene: bool = False  # one form for both genders, adjectives agree with the person (der/die Azubi, Officer)
    marked_unknown: bool = False  # unknown to the resources, its feminine written by the title (Avioniker/in)
    ruled: bool = False  # the other form made by an ending rule alone: made for the head only


@dataclass
class Token:
    text: str  # as written (markers removed)
    role: str  # adjective | noun | other
    noun: NounForms | None = None


# --- the layer ------------------------------------------------------------------------------------------------
class GermanGenderLayer(BatchedWordLookups):
    """Lexicon-grounded gender analysis and inflection of German titles (see the module docstring)."""

    def __init__(self, lang: Language | str = "de", cache: Path | None = None, *,
                 hunspell_dicts: tuple[str, ...] = ("de_DE",), english_dicts: tuple[str, ...] = ("en_US",)):
        """lang: the German declaration (or its code); its pack's mitigation lexicon gives the irregular pairs.
        cache: a SQLite file keeping the word lists' answers between builds (``LookupStore``).
        hunspell_dicts / english_dicts: the Hunspell dictionaries (file names without .dic)."""
        lang = resolve(lang)
        self.lang = lang
        self.store = LookupStore(cache) if cache else None
        self.lexicon = load_lexicon()
        self.wordlist = hunspell_wordlist(lang.code, "hunspell-de-de", tuple(hunspell_dicts), INSTALL_WORDLISTS, self.store)
        self.english = hunspell_wordlist(lang.code, "hunspell-en-us", tuple(english_dicts), INSTALL_WORDLISTS, self.store)
        self.lexicon_name = self.lexicon.name
        self.wordlist_name = self.wordlist.name
        self.method_names = {"lexicon": self.lexicon_name, "wordlist": self.wordlist_name}  # builder/layers.py
        ends = set(PHRASE_END) | set(lang.gender_rules.phrase_end)
        if lang.mitigation is not None:
            ends |= {w for w in lang.mitigation.stop_words}
        self.phrase_end = frozenset(ends)
        # Declared irregular pairs (feminine -> masculine, lower case), singular entries of the pack's lexicon whose
        # masculine no rule makes from the feminine (Krankenschwester -> Krankenpfleger, Beamtin -> Beamter).
        declared = dict(lang.mitigation.lexicon) if lang.mitigation is not None else {}
        self.fem_to_masc = {f: m for f, m in declared.items()
                            if not f.endswith("innen") and f not in ("frau",) and not m.endswith("e")
                            and not _rule_pair(f, m)}
        self.fem_to_masc.update({f: m for f, m in DECLARED_PAIRS.items() if f not in self.fem_to_masc})
        self.masc_to_fem = {m: f for f, m in self.fem_to_masc.items()}
        mit = lang.mitigation
        self.keep_words = frozenset(mit.keep_words) if mit is not None else frozenset()
        self.keep_suffixes = tuple(mit.keep_suffixes) if mit is not None else ()
        self._nouns: dict[str, NounForms] = {}

    # --- one noun ---------------------------------------------------------------------------------------------
    def _known_as(self, gender: str, word: str) -> tuple[bool, str]:
        """Whether ``word`` is a noun of that gender in the lexicon, else a word of the word list; and which said so."""
        if self.lexicon.has(word, gender):
            return True, "lexicon"
        if self._is_word(word):
            return True, "wordlist"
        return False, ""

    @staticmethod
    def _feminine_candidates(word: str, adjectival: bool) -> list[str]:
        low = word.lower()
        out: list[str] = []
        if adjectival and low.endswith("er"):
            out.append(word[:-1])  # Angestellter -> Angestellte
        if low.endswith("mann") and len(word) > 4:
            out.append(word[:-4] + ("Frau" if word[-4] == "M" else "frau"))
        if low.endswith("e") and len(word) > 3:
            stem = word[:-1]
            out += [stem + "in"] + [u + "in" for u in _umlauts(stem)]  # Geologin, Französin
        if low.endswith("erer"):
            out.append(word[:-2] + "in")  # Zauberer -> Zauberin
        if not adjectival or not low.endswith("er"):
            out += [word + "in"] + [u + "in" for u in _umlauts(word)]  # Technikerin, Ärztin, Bäuerin
        return list(dict.fromkeys(out))

    @staticmethod
    def _masculine_candidates(word: str, adjectival: bool) -> list[str]:
        low = word.lower()
        out: list[str] = []
        if adjectival and low.endswith("e"):
            out.append(word + "r")  # Angestellte -> Angestellter
        if low.endswith("frau") and len(word) > 4:
            out.append(word[:-4] + ("Mann" if word[-4] == "F" else "mann"))
        if low.endswith("in") and len(word) > 4:
            stem = word[:-2]
            plain = [stem] + _deumlauts(stem)
            out += plain + [s + "e" for s in plain] + [s + "er" for s in plain if s.endswith("er")]  # Zauberin
        return list(dict.fromkeys(out))

    def _pick(self, candidates: list[str], known) -> tuple[str | None, str]:
        """The first candidate the lexicon knows (of several, the first the word list knows too: Bäuerin before the
        regional Bauerin), else the first the word list knows."""
        in_lexicon = [c for c in candidates if known(c)[1] == "lexicon"]
        if in_lexicon:
            both = [c for c in in_lexicon if self._is_word(c)] if len(in_lexicon) > 1 else []
            return (both or in_lexicon)[0], "lexicon"
        for c in candidates:
            if self._is_word(c):
                return c, "rule+wordlist"
        return None, ""

    def noun(self, word: str, english: str = "") -> NounForms:
        """The kind and forms of one noun as written (a hyphenated noun by its last part)."""
        key = word + "\0" + english
        found = self._nouns.get(key)
        if found is None:
            found = self._nouns[key] = self._noun(word, english)
        return found

    def _noun(self, word: str, english: str) -> NounForms:
        parts = word.split("-")
        last = parts[-1]
        prefix = "-".join(parts[:-1]) + "-" if len(parts) > 1 else ""
        if not LETTERS.match(last or "-"):
            return NounForms("unknown", note=f"{word!r} is not a word")
        if last.islower():
            last = last[0].upper() + last[1:]
        res = self._simple(last, english, allow_split=True)
        if prefix and res.masculine:
            res.masculine = prefix + res.masculine
        if prefix and res.feminine:
            res.feminine = prefix + res.feminine
        return res

    def _simple(self, w: str, english: str, allow_split: bool) -> NounForms:
        low = w.lower()
        if w.isupper() and low in ENGLISH_AGENT_WORDS:  # VP, CEO: English abbreviations of titles
            return NounForms("loan", method={"rule"}, epicene=True, note="English title abbreviation, invariable")
        # Common-gender heads (Reinigungskraft, Fachpersonal, Küchenhilfe, Teammitglied, Azubi, Teamleitung).
        if low in COMMON_NOUNS or any(low.endswith(s) and not low.endswith(NOT_COMMON_SUFFIXES)
                                      and self._known_any(w[len(w) - len(s):].capitalize()) for s in COMMON_SUFFIXES):
            return NounForms("common", method={"rule"}, epicene=low in EPICENE_NOUNS,
                             note="gender-neutral role noun" if low.endswith(ROLE_SUFFIXES) else "common-gender noun")
        # Declared irregular pairs (Krankenschwester -> Krankenpfleger), also as a compound's end.
        for fem, masc in self.fem_to_masc.items():
            if low.endswith(fem) and (low == fem or len(low) - len(fem) >= 2):
                head = w[:len(w) - len(fem)]
                m_form = head + (masc if head else masc.capitalize())
                return NounForms("person", F, m_form, w, {"rule"}, note=f"declared pair {masc}/{fem}")
        for suffix in FEMININE_ONLY_SUFFIXES:
            if low.endswith(suffix):
                return NounForms("feminine_only", F, None, w, {"rule"},
                                 note=f"a woman's title (-{suffix}) with no masculine counterpart")
        entry = self.lexicon.get(w)
        if entry is not None:
            res = self._from_entry(w, entry)
            if res is not None:
                return res
        else:
            res = self._adjectival(w)
            if res is not None:
                return res
        # A compound the lexicon lacks (or has with no other form): its longest final component that is a person
        # noun of the lexicon (Netzwerk|techniker); the prefix stays as written.
        things = None
        if allow_split:
            # A word with an agent suffix is no compound of a short noun that merely ends like it (Croupier is no
            # kind of Pier, Sonograf no kind of Graf).
            suffix = self._agent_suffix(w, PERSON_SUFFIXES if entry is not None else LATIN_AGENT_SUFFIXES)
            fem = self._feminine_suffix(w) if entry is None else None  # Superintendentin is no kind of Dentin
            shortest = len(suffix) + 3 if suffix is not None else len(fem[1]) + 5 if fem is not None else 0
            for i in range(2, len(w) - 3):
                comp = w[i].upper() + w[i + 1:]
                comp_entry = self.lexicon.get(comp)
                if comp_entry is None or len(comp) < shortest:
                    continue
                pre = w[:i]
                # A component declined like an adjective (Alter/Alte, Angestellter) ends a compound only after a word
                # (Bundes|angestellter), and not where the word list knows the -in feminine of the whole word: in
                # Landschaftsgest|alter, Gest|alter (Gestalterin) or Inh|alte the -er/-e is no adjective ending.
                if comp_entry.adjectival and (not self._is_prefix(pre) or self._is_word(w + "in")):
                    continue
                sub = self._simple(comp, english, allow_split=False)
                if sub.kind == "unknown":
                    continue
                # A compound has its last component's gender: a noun the lexicon knows only as a feminine or neuter
                # is no masculine or common-gender person of a component that happens to match (Kom|mode).
                if entry is not None and M not in entry.genders and (
                        (sub.kind == "common" and "lexicon" in sub.method)
                        or (sub.kind == "person" and sub.gender == M)):
                    continue
                # In a word the lexicon lacks, a component it has in both genders (Mode, Haft, Pier: mostly things) is
                # read only after a first part that is a word: Beratersc|haft is no compound of Haft.
                if entry is None and sub.kind == "common" and "lexicon" in sub.method and not self._is_prefix(pre):
                    continue
                res = NounForms(sub.kind, sub.gender, pre + sub.masculine.lower() if sub.masculine else None,
                                pre + sub.feminine.lower() if sub.feminine else None, set(sub.method),
                                note=f"compound of {comp}: {sub.note}", epicene=sub.epicene)
                if sub.kind in ("person", "common"):
                    return res
                things = things or res
        if entry is not None:
            return self._without_pair(w, entry, english, whole=allow_split)
        # Only the word lists know it: the rules, each form confirmed by the German word list.
        if self._is_word(w):
            if low.endswith("in") and len(w) > 4:
                m_form, how = self._pick(self._masculine_candidates(w, False), functools.partial(self._known_as, M))
                if m_form:
                    return NounForms("person", F, m_form, w, {"rule", "wordlist"} | set(how.split("+")),
                                     note="feminine in -in, masculine by rule (" + how + ")")
            f_form, how = self._pick(self._feminine_candidates(w, False), functools.partial(self._known_as, F))
            if f_form:
                return NounForms("person", M, w, f_form, {"rule", "wordlist"} | set(how.split("+")),
                                 note="masculine, feminine by rule confirmed by the word list")
        # A Latin or Greek agent suffix (Animator, Superintendent, Intensivist, Akupunkteur) or its feminine
        # (Animatorin, Kosmetologin): the ending rule, unless a component ends the word (Polizei|leutnant,
        # Schnell|restaurant; the split above skipped the short nouns that merely end like the suffix: Loge, Rist).
        if things is None and low not in ENGLISH_AGENT_WORDS:
            fem = self._feminine_suffix(w)
            if fem is not None:
                return NounForms("person", F, fem[0], w, {"rule"}, ruled=True,
                                 note=f"feminine in -in of a masculine with the agent suffix -{fem[1]}: masculine by "
                                      f"the ending rule (no resource knows it)")
            suffix = self._agent_suffix(w, LATIN_AGENT_SUFFIXES)
            rule = self._by_suffix(w, suffix, in_lexicon=False) if suffix is not None else None
            if rule is not None:
                return rule
        loan = self._loan(w, english, None, whole=allow_split)
        if loan is not None:
            return loan
        if things is not None and not (things.kind == "thing" and low.endswith(AGENT_ENDINGS)):
            return things
        if self._is_word(w):
            if low.endswith(AGENT_ENDINGS):
                return NounForms("masculine_only", M, w, None, {"wordlist"},
                                 note="word-list noun with an agent-noun ending and no feminine form known")
            return NounForms("thing", method={"wordlist"}, note="word-list noun that names no person")
        return NounForms("unknown", note=f"{w} is unknown to the lexicon and the word lists")

    def _agent_suffix(self, w: str, suffixes: tuple[str, ...]) -> str | None:
        """The agent suffix the noun ends in, on a stem of three letters or more; None also for a compound of a short
        noun that merely ends like the suffix (Zeit|geist)."""
        low = w.lower()
        s = next((x for x in suffixes if low.endswith(x)), None)
        if s is None or low.endswith(NOT_AGENT_SUFFIXES) or len(low) - len(s) < 3:
            return None
        for k in (len(s) + 1, len(s) + 2):
            tail = self.lexicon.get(w[len(w) - k:].capitalize())
            if (k < len(w) - 1 and tail is not None and M in tail.genders
                    and self._is_prefix(w[:len(w) - k], nouns_only=True)):
                return None
        return s

    def _by_suffix(self, w: str, suffix: str, in_lexicon: bool) -> NounForms | None:
        """A masculine with a Latin or Greek agent suffix: its feminine in -in by the ending rule (Animatorin,
        Kosmetologin), which no resource needs to know."""
        low = w.lower()
        if suffix in SHORT_SUFFIXES and not in_lexicon and self._is_word(low, english=True):
            return None  # Budget, Audit, Format: an English word in -et/-it/-at/-ar names no person
        fem = (w[:-1] if low.endswith("e") else w) + "in"
        where = "of the lexicon " if in_lexicon else ""
        return NounForms("person", M, w, fem, {"rule"} | ({"lexicon"} if in_lexicon else set()), ruled=True,
                         note=f"masculine {where}with the agent suffix -{suffix}: feminine -in by the ending rule "
                              f"(no resource knows it)")

    def _feminine_suffix(self, w: str) -> tuple[str, str] | None:
        """(masculine, suffix) of a feminine in -in whose masculine has a Latin or Greek agent suffix (Animatorin,
        Kosmetologin). Not for the short suffixes, whose -in words are often no feminines (Kreatin)."""
        if not w.lower().endswith("in"):
            return None
        stem = w[:-2]
        for m_form in (stem, stem + "e"):
            s = self._agent_suffix(m_form, LATIN_AGENT_SUFFIXES)
            if s is not None and s not in SHORT_SUFFIXES and m_form.endswith("e") == s.endswith("e"):
                return m_form, s
        return None

    def _is_prefix(self, pre: str, nouns_only: bool = False) -> bool:
        """A compound's first part is a word, with or without a linking element (Landschafts-, Bundes-, Kinder-):
        a noun of the lexicon, or (unless nouns_only) a word of the word list."""
        p = pre.rstrip("-")
        if len(p) < 2 or not LETTERS.match(p):
            return False
        cands = [p] + [p[:-len(x)] for x in LINKS if p.lower().endswith(x) and len(p) - len(x) >= 2]
        for c in cands:
            c = c[0].upper() + c[1:]
            if c in self.lexicon.entries or (not nouns_only and self._is_word(c)):
                return True
        return False

    def _adjectival(self, w: str) -> NounForms | None:
        """A noun of adjectival declension the lexicon lacks in this gender (Kunstschaffende beside the lexicon's
        Kunstschaffender) or at all (Vortragende: a participle the word list knows in both forms)."""
        low = w.lower()
        if low.endswith("e") and len(w) > 4:
            m_form, f_form, gender = w + "r", w, F
        elif low.endswith("er") and len(w) > 5:
            m_form, f_form, gender = w, w[:-1], M
        else:
            return None
        other = self.lexicon.get(m_form if gender == F else f_form)
        if other is not None and other.adjectival:
            return NounForms("person", gender, m_form, f_form, {"lexicon", "rule"},
                             note="noun of adjectival declension (lexicon), other gender by its ending")
        if low.endswith(PARTICIPLE_ENDINGS) and self._is_word(m_form.lower()) and self._is_word(f_form.lower()) \
                and self._is_word(w):
            return NounForms("person", gender, m_form, f_form, {"rule", "wordlist"},
                             note="participle or adjective used as a noun (word list), other gender by its ending")
        return None

    def _known_any(self, w: str) -> bool:
        return w in self.lexicon.entries

    def _from_entry(self, w: str, entry: Entry) -> NounForms | None:
        """A lexicon noun with its other form, or None when it has none."""
        if M in entry.genders:
            cands = self._feminine_candidates(w, entry.adjectival)
            low = w.lower()
            cands += [w[:len(w) - len(m)] + (f if len(w) > len(m) else f.capitalize())
                      for m, f in self.masc_to_fem.items() if low == m]  # Beamter -> Beamtin
            f_form, how = self._pick(cands, functools.partial(self._known_as, F))
            if f_form:
                return NounForms("person", M, w, f_form, {"lexicon"} | set(how.split("+")),
                                 note="masculine noun, feminine " + ("in the lexicon" if how == "lexicon"
                                                                     else "by rule, in the word list"))
        if F in entry.genders:
            m_form, how = self._pick(self._masculine_candidates(w, entry.adjectival), functools.partial(self._known_as, M))
            if m_form and (how == "lexicon" or w.lower().endswith(("in", "frau")) or entry.adjectival):
                return NounForms("person", F, m_form, w, {"lexicon"} | set(how.split("+")),
                                 note="feminine noun, masculine " + ("in the lexicon" if how == "lexicon"
                                                                     else "by rule, in the word list"))
        return None

    def _without_pair(self, w: str, entry: Entry, english: str, whole: bool = True) -> NounForms:
        if M in entry.genders and F in entry.genders:
            return NounForms("common", method={"lexicon"}, note="the lexicon has the noun in both genders",
                             epicene=True)
        if M in entry.genders and not entry.adjectival and w.lower() not in ENGLISH_AGENT_WORDS:
            suffix = self._agent_suffix(w, PERSON_SUFFIXES)
            if suffix is not None:  # Bankier, Retuscheur, Generalist: the feminine by the ending rule
                return self._by_suffix(w, suffix, in_lexicon=True)
        loan = self._loan(w, english, entry, whole)
        if loan is not None:
            return loan
        if M in entry.genders and (w.lower().endswith(AGENT_ENDINGS) or entry.adjectival):
            return NounForms("masculine_only", M, w, None, {"lexicon", "wordlist"},
                             note="masculine agent noun; neither the lexicon nor the word list knows a feminine")
        low = w.lower()
        if (F in entry.genders and low.endswith("in") and len(low) > 5 and low not in self.keep_words
                and not low.endswith(self.keep_suffixes)):
            return NounForms("feminine_only", F, None, w, {"lexicon", "wordlist"},
                             note="feminine person noun in -in; neither the lexicon nor the word list knows a masculine")
        return NounForms("thing", method={"lexicon"},
                         note=f"{'/'.join(sorted(entry.genders))} noun of the lexicon with no other-gender form")

    def _loan(self, w: str, english: str, entry: Entry | None = None, whole: bool = True) -> NounForms | None:
        """An English agent noun a German title keeps (a word of the English word list or of the English source
        title). The English titles German ads keep invariable (Officer, Associate, Executive, Trainee, Lead) are
        loans of either gender; one in -er takes -in as German ads write it (Managerin, Controllerin, Underwriterin);
        one that is also a German word of another kind (intern, the adjective "internal") is no title German ads use:
        unknown, a review item. The -in is made for the word as written (whole), never for a compound's component
        (Cont|roller, Bar|bier), nor for a German noun the lexicon has without the masculine (das Bier)."""
        low = w.lower()
        in_source = bool(english) and low in re.findall(r"[a-z]+", english.lower())
        if not (low in ENGLISH_AGENT_WORDS or (low.endswith(ENGLISH_AGENT_ENDINGS)
                                                and not low.endswith(ENGLISH_THING_ENDINGS))):
            return None
        if not (in_source or self._is_word(low, english=True)):
            return None
        if self._is_word(low):  # the German word list accepts it in lower case: no German noun
            return NounForms("unknown", method={"wordlist"},
                             note=f"English {low!r} is also a German word of another kind, not a title German ads use")
        if (whole and low.endswith("er") and not low.endswith(ENGLISH_INVARIABLE_ENDINGS)
                and low not in ENGLISH_AGENT_WORDS and (entry is None or M in entry.genders)):
            return NounForms("person", M, w, w + "in", {"rule", "wordlist"}, ruled=True,
                             note="English agent noun in -er: feminine -in as German ads write it (Controllerin)")
        return NounForms("loan", method={"wordlist"}, epicene=True,
                         note="English agent noun German titles use as is, invariable")

    # --- one title --------------------------------------------------------------------------------------------
    def normalise(self, title: str) -> tuple[str, str | None, list[str], set[str]]:
        """(base title, a feminine written beside it or None, flags, the words that carried an -in marker): the
        inclusive markers removed."""
        flags: list[str] = []
        marked: set[str] = set()
        t = " ".join(title.split())
        other = None
        new = GENDER_NOTE.sub("", t)
        if new != t:
            flags.append("inclusive_base")
        t = new
        for pat, repl in ((MANN_FRAU, "mann"), (FRAU_MANN, "mann")):
            new = pat.sub(repl, t)
            if new != t:
                t = new
                if "inclusive_base" not in flags:
                    flags.append("inclusive_base")
        for pat, repl in ((NOUN_MARKER, ""), (BINNEN_I, ""), (ADJ_MARKER, "r")):
            if repl == "":
                for mo in pat.finditer(t):
                    marked.add(re.findall(r"[\w-]+$", t[:mo.start()])[0])
            new = pat.sub(repl, t)
            if new != t:
                t = new
                if "inclusive_base" not in flags:
                    flags.append("inclusive_base")
        # Full doublets: Arzt/Ärztin, Kassierer / Kassiererin.
        m = re.match(r"^(?P<a>[^\W\d_][\w-]*)\s*/\s*(?P<b>[^\W\d_][\w-]*)(?P<rest>(?:\s.*)?)$", t)
        if m:
            a, b = m.group("a"), m.group("b")
            na, nb = self.noun(a), self.noun(b)
            if na.kind == "person" and nb.kind == "person" and na.masculine == nb.masculine and na.gender != nb.gender:
                masc, fem = (a, b) if na.gender == M else (b, a)
                t = masc + m.group("rest")
                other = fem + m.group("rest")
                flags.append("inclusive_base")
        return " ".join(t.split()), other, flags, marked

    def _is_adjective(self, word: str) -> bool:
        last = word.split("-")[-1]
        if not LETTERS.match(last or "-"):
            return False
        low = last.lower()
        if last[0].islower():
            return True
        if self._adjective_shape(low) and self._is_word(low):
            return True
        # A derived adjective the word list lacks (Verhaltensmedizinischer): its ending says so, and no noun of
        # the lexicon is spelled so (Fischer, Mischer are nouns).
        return bool(ADJECTIVE_SUFFIX.search(low)) and self.lexicon.get(last) is None

    def _before_noun(self, phrase: list[str], i: int) -> bool:
        """The words after phrase[i] are lowercase adjectives up to a capitalised word (the noun)."""
        for w in phrase[i + 1:]:
            if w[:1].isupper():
                return True
            if not self._is_adjective(w):
                return False
        return False

    @staticmethod
    def _adjective_shape(low: str) -> bool:
        return low.endswith(("er", "e", "es", "en", "em", "ig", "isch", "lich", "ch", "al", "iv", "ell", "bar"))

    def analyse(self, title: str, english: str = "") -> tuple[list[Token], list[str]]:
        """The tokens of the title: the first noun phrase's adjectives and nouns, the rest ``other``. A phrase with
        no person noun that a conjunction ends is a modifier of the next one (*Ehe- und Familientherapeut*,
        *Film & Video Editor*): the phrase read is then the next."""
        words = title.split(" ")
        tokens: list[Token] = []
        start = 0
        phrase: list[str] = []
        while start < len(words):
            end = len(words)
            for i in range(start, len(words)):
                w = words[i]
                if w.lower() in self.phrase_end or not (re.search(r"[^\W\d_]", w) or w.isdigit()):
                    end = i
                    break
            phrase = words[start:end]
            part: list[Token] = []
            last_word = max((i for i, w in enumerate(phrase) if not w.isdigit()), default=-1)
            for i, w in enumerate(phrase):
                if w.isdigit():
                    part.append(Token(w, "other"))
                elif i < last_word and self._is_adjective(w) and (w[0].islower() or self._before_noun(phrase, i)):
                    # (a capitalised word is an adjective only before a noun or another adjective: not Ausleihe
                    # in "Ausleihe näher"; Regionaler in "Regionaler technischer Spezialist")
                    part.append(Token(w, "adjective"))
                else:
                    part.append(Token(w, "noun", self.noun(w, english)))
            tokens += part
            has_person = any(t.role == "noun" and t.noun.kind in PERSON_KINDS for t in part)
            if not has_person and end + 1 < len(words) and words[end].lower() in CONJUNCTIONS:
                # Modifiers before a shared head: kept as written, the next phrase is read.
                for t in part:
                    t.role, t.noun = "other", None
                tokens.append(Token(words[end], "other"))
                start = end + 1
                continue
            tokens += [Token(w, "other") for w in words[end:]]
            break
        return tokens, phrase

    def decide(self, masculine: str | None, feminine: str | None = None, english: str = "") -> Decision:
        """One decision for a German title (``masculine``: the base text, as written; it may be feminine)."""
        base = masculine or feminine
        if not base or not base.strip():
            return Decision(Verdict.FAILED, reason="no title")
        given_f = feminine if masculine else None
        text, written_f, flags, marked = self.normalise(base)
        if written_f and not given_f:
            given_f = written_f
        if given_f:
            given_f = self.normalise(given_f)[0]
        tokens, phrase = self.analyse(text, english)
        for t in tokens:
            # An inclusive spelling of a word the resources do not know (Avioniker/in): the title itself writes the
            # feminine; the pair is kept and flagged for review.
            if t.role == "noun" and t.text in marked and t.noun.kind == "unknown":
                t.noun = NounForms("person", M, t.text, t.text + "in", {"rule"}, "unknown word written inclusively "
                                   "(-in marker in the title): the feminine is the title's own", marked_unknown=True)
        nouns = [t for t in tokens if t.role == "noun"]
        if not nouns:
            return Decision(Verdict.UNVERIFIED, flags=flags + ["unknown_word"], method="none",
                            reason=f"no noun found in {text!r}")
        # The head: the last person noun with both forms or of common gender, else the last person noun, else the
        # last noun (Sachbearbeiter in Sachbearbeiter Versand, where Versand ends like an agent noun).
        paired = [t for t in nouns if t.noun.kind in ("person", "common", "loan")]
        persons = [t for t in nouns if t.noun.kind in PERSON_KINDS]
        head = (paired or persons or nouns)[-1]
        hn = head.noun
        for t in nouns:
            if t is not head and t.noun.kind == "person" and t.noun.ruled:
                # A form that only an ending rule makes is made for the head alone; a modifier stays as written
                # (Master Control Bediener, Indoor Cycling-Ausbilder).
                t.role, t.noun = "other", None
        nouns = [t for t in nouns if t.role == "noun"]
        methods = set(hn.method)
        for t in nouns:
            if t.noun.kind == "person":
                methods |= t.noun.method
        if hn.kind == "thing":
            return Decision(Verdict.NOT_A_PERSON, method=_method(methods), flags=flags + ["not_a_person_noun"],
                            reason=f"the head {head.text!r} is not a person noun ({hn.note})")
        if hn.kind == "unknown":
            return Decision(Verdict.UNVERIFIED, method=_method(methods), flags=flags + ["unknown_word"],
                            reason=f"the head {head.text!r}: {hn.note or 'unknown to the lexicon and the word lists'}; "
                                   "needs review")
        m_text, f_text, adj_unchecked = self._render(tokens)
        if adj_unchecked:
            methods.add("rule")
        if hn.kind == "feminine_only":
            # declared_single_form: a documented rule (FEMININE_ONLY_SUFFIXES) says no masculine exists, so the
            # builder keeps the single form (builder/routes.py earned); a lexicon's silence would not.
            declared = ["declared_single_form"] if hn.note.startswith("a woman's title") else []
            return Decision(Verdict.FEMININE_ONLY, feminine=f_text, method=_method(methods),
                            flags=flags + ["no_masculine_form"] + declared,
                            reason=f"no masculine form of {head.text!r} exists ({hn.note})")
        if hn.kind == "masculine_only" and hn.gender == M:
            return Decision(Verdict.MASCULINE_ONLY, masculine=m_text, method=_method(methods),
                            flags=flags + ["no_feminine_form"],
                            reason=f"no feminine form of {head.text!r} exists in the lexicon or the word list ({hn.note})")
        if hn.kind in ("common", "loan") and m_text == f_text:
            return Decision(Verdict.NEUTRAL, neutral=m_text, method=_method(methods),
                            flags=flags + (["english_loan"] if hn.kind == "loan" else []),
                            reason=f"common-gender head {head.text!r} ({hn.note}); nothing agreeing changes")
        extra = ["feminine_base"] if hn.kind == "person" and hn.gender == F else []
        if hn.kind in ("common", "loan"):
            extra.append("common_head" if hn.kind == "common" else "english_loan")
        if adj_unchecked:
            extra.append("adjective_unchecked")
        if any(t.role == "noun" and t.noun.marked_unknown for t in tokens):
            extra.append("unknown_word")
            methods.add("title")
        reason = f"head {head.text!r}: {hn.note}"
        if given_f and not written_f:
            if self._confirms(given_f, m_text, f_text, english):
                return Decision(Verdict.GENDERED, m_text, _lower(given_f), method=_method(methods), flags=flags + extra,
                                reason=f"given feminine confirmed: {reason}")
            return Decision(Verdict.INFLECTED, m_text, f_text, method=_method(methods),
                            flags=flags + extra + ["reinflected_feminine"],
                            reason=f"given feminine {given_f!r} is not the inflection of the masculine; {reason}")
        if written_f and _lower(written_f) != f_text and self._confirms(written_f, m_text, f_text, english):
            f_text = _lower(written_f)
        return Decision(Verdict.INFLECTED, m_text, f_text, method=_method(methods), flags=flags + extra, reason=reason)

    def _confirms(self, given_f: str, m_text: str, f_text: str, english: str) -> bool:
        """The given feminine is the feminine made here, or a title whose masculine is the same (Krankenschwester
        beside Krankenpfleger: the pack's declared pair)."""
        g = _lower(given_f)
        if g == f_text:
            return True
        tokens, _ = self.analyse(" ".join(given_f.split()), english)
        nouns = [t for t in tokens if t.role == "noun" and t.noun.kind == "person"]
        if not nouns or nouns[-1].noun.gender != F:
            return False
        m2, _, _ = self._render(tokens)
        if m2 == m_text:
            return True
        # A declared alternative feminine of the masculine head (Krankenpfleger -> Krankenschwester).
        words = m_text.split(" ")
        for i, w in enumerate(words):
            for masc, fem in self.masc_to_fem.items():
                if w.endswith(masc):
                    alt = words[:i] + [w[: len(w) - len(masc)] + fem] + words[i + 1:]
                    if g == " ".join(alt) or g == " ".join(_agree_all(alt, i)):
                        return True
        return False

    def _render(self, tokens: list[Token]) -> tuple[str, str, bool]:
        """(masculine text, feminine text, an adjective form was made that the word list does not know)."""
        m_out, f_out = [], []
        unchecked = False
        for i, t in enumerate(tokens):
            if t.role == "noun" and t.noun.kind in ("person", "masculine_only", "feminine_only"):
                m_out.append(t.noun.masculine or t.text)
                f_out.append(t.noun.feminine or t.text)
            elif t.role == "adjective":
                nxt = next((x for x in tokens[i + 1:] if x.role == "noun"), None)
                if nxt is not None and ((nxt.noun.kind == "person" and nxt.noun.masculine != nxt.noun.feminine)
                                        or nxt.noun.epicene):
                    m_adj, f_adj = _adjective_forms(t.text)
                    for form in {m_adj, f_adj} - {t.text}:
                        if not self._is_word(form.split("-")[-1].lower()):
                            unchecked = True
                    m_out.append(m_adj)
                    f_out.append(f_adj)
                else:
                    m_out.append(t.text)
                    f_out.append(t.text)
            else:
                m_out.append(t.text)
                f_out.append(t.text)
        return _lower(" ".join(m_out)), _lower(" ".join(f_out)), unchecked


# Endings only derived adjectives have, inflected strong (-isch, -lich, -ig + e/er/es).
ADJECTIVE_SUFFIX = re.compile(r"(isch|lich|ig)(e|er|es)$")


# --- helpers ---------------------------------------------------------------------------------------------------
def _umlauts(stem: str) -> list[str]:
    """The stem with one of its last vowels umlauted (Arzt -> Ärzt, Bauer -> Bäuer, Anwalt -> Anwält)."""
    out = []
    for i in range(len(stem) - 1, -1, -1):
        c = stem[i]
        if c in UMLAUT:
            if c in "uU" and i > 0 and stem[i - 1] in "aA":
                out.append(stem[:i - 1] + UMLAUT[stem[i - 1]] + stem[i:])  # au -> äu
            elif not (c in "aAoO" and i + 1 < len(stem) and stem[i + 1] in "aeiouAEIOU"):
                out.append(stem[:i] + UMLAUT[c] + stem[i + 1:])
            if len(out) >= 2:
                break
    return out


def _deumlauts(stem: str) -> list[str]:
    return [stem[:i] + DEUMLAUT[c] + stem[i + 1:] for i, c in enumerate(stem) if c in DEUMLAUT]


def _rule_pair(fem: str, masc: str) -> bool:
    """A feminine the -in rule makes from the masculine (chirurgin/chirurg, ärztin/arzt): no declaration needed."""
    return fem in [c.lower() for c in GermanGenderLayer._feminine_candidates(masc, False)]


def _adjective_forms(word: str) -> tuple[str, str]:
    """(masculine, feminine) strong nominative of an adjective before a person noun; the last hyphen part
    agrees (Medizinisch-technischer). Other endings stay (staatlich)."""
    parts = word.split("-")
    last = parts[-1]
    low = last.lower()
    if low.endswith("er") and len(low) > 3:
        m, f = last, last[:-1]
    elif low.endswith("e") and len(low) > 2:
        m, f = last + "r", last
    else:
        m = f = last
    pre = "-".join(parts[:-1]) + "-" if len(parts) > 1 else ""
    return pre + m, pre + f


def _agree_all(words: list[str], head: int) -> list[str]:
    out = list(words)
    for j in range(head):
        if out[j].endswith("er"):
            out[j] = out[j][:-1]
    return out


def _lower(text: str) -> str:
    return " ".join(text.lower().split())


def _method(parts: set[str]) -> str:
    flat = set()
    for p in parts:
        flat.update(x for x in p.split("+") if x and x != "none")
    names = [x for x in ("lexicon", "rule", "wordlist", "title") if x in flat]
    return "+".join(names) or "none"
