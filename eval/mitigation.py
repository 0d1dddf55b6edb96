"""Mitigation by normalisation: map feminine job titles to a canonical (masculine) form, per language.

The rules are pure functions ``normalise_<lang>(text) -> text`` (pt, es, it, fr, de), documented in
docs/audit.md. Each one rewrites the words of the title's head phrase, word by word:

1. an exact lexicon (irregular pairs: ``jefa -> jefe``, ``ärztin -> arzt``);
2. words that are not feminine forms stay as they are (epicene words and masculine nouns in -a:
   ``analista``, ``dentista``, ``guarda``, ``sistema``; abstract nouns in -ia: ``engenharia``);
3. the first matching suffix rule, longest suffix first (``-ora -> -or`` before ``-a -> -o``).

The head phrase ends at the first preposition: in ``chefe de cozinha`` or ``gerente de loja`` the words
after ``de`` are feminine nouns, not feminine forms of the occupation, and are never touched. It also ends
after a grammatically feminine noun (``gerente planificación estratégica``): the adjectives after it agree
with that noun, whoever holds the job.

Applied to the queries and the corpus of a test set (``normalise_testset``), the same model re-ranks the
normalised texts. A pair whose two normalised forms are the same string gets symmetry 1.0 by
construction (one string, one embedding, one ranking); ``split_pairs`` separates those pairs from the
ones that still differ, which alone measure a real effect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import polars as pl

from eval.errors import EvalError
from eval.testset import FEMININE, MASCULINE, NEUTRAL, TestSet

__all__ = [
    "LanguageRules",
    "RULES",
    "SUPPORTED_LANGUAGES",
    "normalise",
    "normalise_pt",
    "normalise_es",
    "normalise_it",
    "normalise_fr",
    "normalise_de",
    "normalise_testset",
    "split_pairs",
]

# Hyphenated compounds are one word (porta-voz, salva-vidas): their parts are not separate forms.
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@dataclass(frozen=True)
class LanguageRules:
    lang: str
    suffixes: tuple[tuple[str, str], ...]  # (feminine suffix, canonical suffix), tried longest first
    lexicon: Mapping[str, str] = field(default_factory=dict)  # exact feminine word -> canonical word
    keep_words: frozenset[str] = frozenset()  # words that look feminine but are not a feminine form
    keep_suffixes: tuple[str, ...] = ()  # word endings that are never a feminine form (-ista, -ia)
    stop_words: frozenset[str] = frozenset()  # prepositions: the head phrase ends before them
    # Nouns that are grammatically feminine whatever the person's gender (empresa, comunicação, guida): kept,
    # and a title that starts with one is left whole, since its adjectives agree with that noun.
    feminine_nouns: frozenset[str] = frozenset()
    feminine_noun_suffixes: tuple[str, ...] = ()
    min_stem: int = 2  # a suffix rule leaves at least this many letters, so 'ora' or 'in' stay words

    def is_feminine_noun(self, w: str) -> bool:
        return w in self.feminine_nouns or w.endswith(self.feminine_noun_suffixes)

    def word(self, w: str) -> str:
        if w in self.lexicon:
            return self.lexicon[w]
        if w in self.keep_words or w.endswith(self.keep_suffixes) or self.is_feminine_noun(w):
            return w
        for suffix, canonical in sorted(self.suffixes, key=lambda s: -len(s[0])):
            if w.endswith(suffix) and len(w) - len(suffix) >= self.min_stem:
                return w[: len(w) - len(suffix)] + canonical
        return w


# Masculine nouns ending in -a (Greek -ma, -grama) shared by the Romance languages.
_GREEK_MA = frozenset({"sistema", "sistemas", "programa", "problema", "tema", "esquema", "diagrama", "idioma", "diploma",
                       "clima", "dilema", "lema", "drama", "poema", "teorema", "axioma", "organigrama", "cinema",
                       "plasma", "trauma", "aroma", "panorama", "emblema", "dia", "día", "mapa", "planeta", "cometa"})
# English words and acronyms left in machine translations (java developer, mba, scada engineer).
_ENGLISH = frozenset({"java", "mba", "scada"})
# Epicene nouns in -a that name a person of either gender (estratega, cineasta, caposquadra).
_EPICENE_A = frozenset({"colega", "atleta", "pirata", "estratega", "stratega", "cineasta", "entusiasta", "âncora", "ancla",
                        "ancora", "caixa", "copilota"})

PT = LanguageRules(
    "pt",
    suffixes=(("a", "o"), ("ora", "or"), ("eira", "eiro"), ("ã", "ão"), ("triz", "tor"), ("presidenta", "presidente")),
    lexicon={"presidenta": "presidente", "poetisa": "poeta", "sacerdotisa": "sacerdote", "condessa": "conde",
             "duquesa": "duque", "princesa": "príncipe", "baronesa": "barão", "governanta": "governante",
             "embaixatriz": "embaixador", "imperatriz": "imperador", "rainha": "rei", "mulher": "homem", "patroa": "patrão", "atriz": "ator"},
    keep_words=_GREEK_MA | _ENGLISH | _EPICENE_A | {"guarda", "guia", "polícia", "multimídia", "multimédia", "agora"},
    feminine_nouns=frozenset({"hora", "pessoa", "linha", "licença", "reserva", "cômoda", "equipa", "equipe", "empresa", "área", "loja", "escola", "fábrica",
                              "cozinha", "oficina", "obra", "mesa", "vida", "terra", "língua", "pintura", "estrutura",
                              "cultura", "agricultura", "câmera", "câmara", "companhia", "marinha", "rede", "carta"}),
    feminine_noun_suffixes=("ção", "são", "dade", "agem", "aria", "eria", "oria", "gia", "fia", "nomia", "metria", "mia",
                            "nhia", "ência", "ância", "ácia", "ança", "ença"),
    # Abstract nouns in -ia (engenharia, padaria, auditoria, companhia) but not the forms in -ária, -cia
    # (estagiária, secretária, sócia), which are feminine forms of -ário, -cio.
    keep_suffixes=("ista", "cida", "iatra", "crata", "ema", "grama", "euta", "ícola"),
    stop_words=frozenset({"de", "da", "do", "das", "dos", "em", "na", "no", "nas", "nos", "para", "por", "pelo", "pela",
                          "com", "sem", "sobre", "entre", "a", "à", "ao", "aos", "às"}),
)

ES = LanguageRules(
    "es",
    suffixes=(("a", "o"), ("ora", "or"), ("triz", "tor"), ("esa", "és"), ("presidenta", "presidente")),
    lexicon={"jefa": "jefe", "presidenta": "presidente", "clienta": "cliente", "dependienta": "dependiente",
             "asistenta": "asistente", "sirvienta": "sirviente", "poetisa": "poeta", "sacerdotisa": "sacerdote",
             "alcaldesa": "alcalde", "bailarina": "bailarín", "duquesa": "duque", "princesa": "príncipe", "condesa": "conde",
             "baronesa": "barón", "reina": "rey", "mujer": "hombre", "heroína": "héroe", "emperatriz": "emperador"},
    # 'asocia' is a verb (Apertium's word-by-word 'Associate'), never the feminine of 'asociado' (asociada).
    keep_words=_GREEK_MA | _ENGLISH | _EPICENE_A | {"guarda", "policía", "guía", "multimedia", "ahora", "asocia",
                                                    "cerca", "practica", "apoya", "encima"},
    feminine_nouns=frozenset({"persona", "empresa", "mesa", "área", "tienda", "escuela", "fábrica", "cocina", "oficina",
                              "obra", "vida", "tierra", "lengua", "pintura", "estructura", "cultura", "agricultura",
                              "hora", "defensa", "despensa", "prensa", "dehesa", "sorpresa", "represa", "cámara",
                              "ventaja", "estrategia", "compañía", "red", "carta", "carpeta", "junta", "bodega",
                              "cómoda", "póliza", "belleza", "carga"}),
    feminine_noun_suffixes=("ción", "sión", "dad", "tud", "ía", "encia", "ancia", "acia", "icia", "emia", "oria", "stria",
                            "gia", "anza", "eria"),
    # Stressed -ía (ingeniería, panadería) and -encia, -ancia, -acia, -icia, -emia, -oria, -stria nouns; unstressed
    # -aria, -cia are feminine forms (secretaria, becaria, socia).
    keep_suffixes=("ista", "cida", "iatra", "crata", "ema", "grama", "euta", "ícola"),
    stop_words=frozenset({"de", "del", "en", "para", "por", "con", "sin", "sobre", "entre", "a", "al", "ante", "bajo",
                          "desde", "hacia", "hasta", "según", "tras"}),
)

IT = LanguageRules(
    "it",
    suffixes=(("a", "o"), ("trice", "tore"), ("iera", "iere"), ("gnera", "gnere")),
    lexicon={"dottoressa": "dottore", "professoressa": "professore", "studentessa": "studente",
             "presidentessa": "presidente", "poetessa": "poeta", "principessa": "principe", "contessa": "conte",
             "avvocatessa": "avvocato", "regina": "re", "donna": "uomo", "ostessa": "oste", "sacerdotessa": "sacerdote"},
    # -essa is a suffix only through the lexicon: commessa, professa, promessa are -a / -o words.
    # 'supporta' is a verb (a word-by-word 'supports'), never a feminine form.
    keep_words=_GREEK_MA | _ENGLISH | _EPICENE_A | {"collega", "pilota", "caposquadra", "multimedia", "media", "supporta"},
    feminine_nouns=frozenset({"guardia", "guida", "spia", "vittima", "persona", "azienda", "impresa", "area", "scuola",
                              "fabbrica", "cucina", "officina", "opera", "vita", "terra", "lingua", "pittura",
                              "struttura", "cultura", "agricoltura", "ora", "sala", "camera", "promessa", "rete",
                              "testa", "raccolta", "logistica", "stampa", "ricerca", "linea", "posta", "telecamera",
                              "spazzola", "testata", "vendita", "squadra", "post-laurea", "casa", "pratica",
                              "emittente"}),
    feminine_noun_suffixes=("zione", "sione", "tà", "tù", "eria", "zia", "gia", "fia", "nomia", "metria", "sofia",
                            "terapia", "scopia", "iatria", "acia", "mia", "anza", "enza"),
    # Stressed -ìa nouns (ingegneria, polizia, energia, economia); -aria, -aia, -cia are feminine forms
    # (segretaria, operaia, socia).
    keep_suffixes=("ista", "cida", "iatra", "crata", "ema", "gramma", "euta", "icola"),
    stop_words=frozenset({"di", "del", "della", "dello", "dei", "degli", "delle", "dell", "d", "da", "dal", "dalla", "dall",
                          "in", "nel", "nella", "nell", "a", "al", "alla", "all", "per", "con", "su", "sul", "sulla",
                          "sull", "tra", "fra", "senza"}),
)

FR = LanguageRules(
    "fr",
    suffixes=(("euse", "eur"), ("trice", "teur"), ("ière", "ier"), ("ère", "er"), ("enne", "en"), ("onne", "on"),
              ("ée", "é"), ("ante", "ant"), ("ente", "ent"), ("eure", "eur"), ("elle", "el"), ("ale", "al"),
              ("ive", "if"), ("aise", "ais"), ("oise", "ois"), ("ate", "at"), ("inte", "int"), ("nde", "nd"),
              ("rte", "rt")),
    lexicon={"cheffe": "chef", "maîtresse": "maître", "hôtesse": "hôte", "apprentie": "apprenti", "élue": "élu",
             "la": "le", "une": "un", "reine": "roi", "femme": "homme", "princesse": "prince", "duchesse": "duc",
             "comtesse": "comte", "doctoresse": "docteur", "poétesse": "poète",
             "ambassadrice": "ambassadeur", "pécheresse": "pécheur", "vengeresse": "vengeur"},
    keep_words=_ENGLISH | {"diplomate", "acrobate", "automate", "pirate", "détective", "multimédia"},
    feminine_noun_suffixes=("tion", "sion", "té"),
    feminine_nouns=frozenset({"heure", "demeure", "vente", "attente", "rente",
                          "plante", "tante", "pente", "entente", "fente", "date", "carte", "porte", "sorte", "perte",
                          "monde", "ronde", "sonde", "bande", "commande", "demande", "personne", "colonne", "antenne",
                          "scène", "chaîne", "salle", "école", "usine", "cuisine", "ferme", "terre", "banque", "agence",
                          "mère", "père", "frère", "matière", "carrière", "lumière", "bière", "misère", "manière",
                          "filière", "frontière", "première", "dernière", "rivière", "barrière", "lycée", "musée",
                          "trophée", "journée", "année", "entrée", "idée", "arrivée", "armée", "durée", "pensée",
                          "levée"}),
    keep_suffixes=("iste", "logue", "crate", "iatre", "aire"),
    stop_words=frozenset({"de", "du", "des", "d", "à", "au", "aux", "en", "pour", "chez", "avec", "sur", "sous", "dans",
                          "par", "entre", "sans", "l"}),
)

DE = LanguageRules(
    "de",
    # Umlaut stems as suffixes too, so compounds follow their head (notfallärztin -> notfallarzt).
    suffixes=(("in", ""), ("innen", ""), ("frau", "mann"), ("frauen", "männer"), ("ärztin", "arzt"), ("ärztinnen", "ärzte"),
              ("anwältin", "anwalt"), ("anwältinnen", "anwälte"), ("köchin", "koch"), ("bäuerin", "bauer")),
    lexicon={"ärztin": "arzt", "köchin": "koch", "anwältin": "anwalt", "bäuerin": "bauer", "rätin": "rat",
             "beamtin": "beamter", "ärztinnen": "ärzte", "anwältinnen": "anwälte", "köchinnen": "köche",
             "krankenschwester": "krankenpfleger", "hebamme": "entbindungspfleger", "frau": "mann",
             "chirurgin": "chirurg", "zahnärztin": "zahnarzt", "tierärztin": "tierarzt", "fachärztin": "facharzt",
             "oberärztin": "oberarzt", "rechtsanwältin": "rechtsanwalt", "patentanwältin": "patentanwalt"},
    keep_words=frozenset({"medizin", "termin", "benzin", "magazin", "vitamin", "disziplin", "admin", "kamin", "protein",
                          "insulin", "berlin", "latein", "rubin", "urin", "kabin", "zeppelin", "pinguin", "kaffein",
                          "margarin", "dentin", "in", "begin", "login", "plugin", "termine"}),
    keep_suffixes=("medizin", "disziplin", "magazin", "termin", "ein"),
    stop_words=frozenset({"für", "im", "in", "der", "des", "von", "vom", "mit", "zur", "zum", "bei", "beim", "am", "an",
                          "auf", "aus", "und", "/"}),
)

RULES: dict[str, LanguageRules] = {r.lang: r for r in (PT, ES, IT, FR, DE)}
SUPPORTED_LANGUAGES = tuple(sorted(RULES))

# German gender-inclusive spellings (lowercased): ingenieur*in, ingenieur:in, ingenieur/-in, ingenieur_in.
_DE_INCLUSIVE = re.compile(r"(?<=[^\W\d_])(?:(?:[*:_]|/-?)in(?:nen)?(?![^\W\d_])|\(in(?:nen)?\))")


def _apply(text: str, rules: LanguageRules) -> tuple[str, list[int]]:
    """The normalised text and the indices (in word order) of the words the rules changed."""
    words = list(_WORD.finditer(text))
    if words and rules.is_feminine_noun(words[0].group(0)):
        return text, []
    out, last, changed = [], 0, []
    for i, match in enumerate(words):
        w = match.group(0)
        if w in rules.stop_words:
            break
        if rules.is_feminine_noun(w):
            # Later words agree with this noun, not with the person: 'gerente planificación estratégica',
            # 'responsabile progettazione meccanica'. The noun itself is kept by ``word``.
            out.append(text[last:match.end()])
            last = match.end()
            break
        new = rules.word(w)
        if new != w:
            changed.append(i)
        out.append(text[last:match.start()] + new)
        last = match.end()
    out.append(text[last:])
    return "".join(out), changed


def normalise_pt(text: str) -> str:
    """Portuguese: -a -> -o, -ora -> -or, -ã -> -ão, -triz -> -tor, irregular lexicon; -ista, -ia, ... kept."""
    return _apply(text, PT)[0]


def normalise_es(text: str) -> str:
    """Spanish: -a -> -o, -ora -> -or, -triz -> -tor, -esa -> -és, irregular lexicon (jefa, presidenta, ...)."""
    return _apply(text, ES)[0]


def normalise_it(text: str) -> str:
    """Italian: -a -> -o, -trice -> -tore, -iera -> -iere, -essa only through the lexicon (dottoressa)."""
    return _apply(text, IT)[0]


def normalise_fr(text: str) -> str:
    """French: -euse -> -eur, -trice -> -teur, -ière -> -ier, -enne -> -en, -ée -> -é, -ante -> -ant, ..."""
    return _apply(text, FR)[0]


def normalise_de(text: str) -> str:
    """German: inclusive spellings (*in, :in, /-in, _in) and -in / -innen dropped, -frau -> -mann, umlaut
    lexicon (ärztin -> arzt); an adjective in -e before a changed noun takes the masculine -er
    (``leitende ärztin -> leitender arzt``)."""
    text = _DE_INCLUSIVE.sub("", text)
    normalised, changed = _apply(text, DE)
    if not changed:
        return normalised
    words = list(_WORD.finditer(normalised))
    first_changed = changed[0]
    pieces, last = [], 0
    for i, match in enumerate(words[:first_changed]):
        w = match.group(0)
        pieces.append(normalised[last:match.start()] + (w + "r" if w.endswith("e") and len(w) > 3 else w))
        last = match.end()
    pieces.append(normalised[last:])
    return "".join(pieces)


_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "pt": normalise_pt, "es": normalise_es, "it": normalise_it, "fr": normalise_fr, "de": normalise_de,
}


def normalise(text: str, lang: str) -> str:
    """The normalisation of ``lang`` applied to one lowercased title."""
    try:
        return _FUNCTIONS[lang](text)
    except KeyError:
        raise EvalError(f"no normalisation rules for language {lang!r}; rules exist for {', '.join(SUPPORTED_LANGUAGES)}") from None


def normalise_testset(ts: TestSet) -> tuple[TestSet, dict]:
    """The test set with every query and corpus text normalised (ids, genders, pairs and qrels kept).

    Also returns what changed, per file and gender, and the texts that now occur more than once in a
    corpus variant (they rank as ties, broken by id). The result is held in memory only: it is a
    measurement device, not a test set to publish.
    """
    report: dict = {"rules": ts.lang}
    parts = {}
    for name, frame in (("queries", ts.queries), ("corpus", ts.corpus)):
        new_text = [normalise(t, ts.lang) for t in frame["text"].to_list()]
        changed = [a != b for a, b in zip(frame["text"].to_list(), new_text)]
        genders = frame["gender"].to_list()
        report[name] = {
            g: {"items": sum(1 for x in genders if x == g), "changed": sum(1 for x, c in zip(genders, changed) if x == g and c)}
            for g in (MASCULINE, FEMININE, NEUTRAL)
        }
        parts[name] = frame.with_columns(pl.Series("text", new_text, dtype=pl.String))
    collisions = {}
    for g in (MASCULINE, FEMININE):
        side = parts["corpus"].filter(pl.col("gender").is_in([g, NEUTRAL]))
        collisions[g] = int(side.height - side["text"].n_unique())
    report["corpus_duplicate_texts"] = collisions
    return TestSet(ts.lang, parts["queries"], parts["corpus"], ts.qrels, ts.stats), report


def split_pairs(ts: TestSet) -> pl.DataFrame:
    """Every query pair (``TestSet.query_pairs``) with its texts before and after normalisation and
    ``identical_after``: the two normalised forms are the same string (symmetry 1.0 by construction)."""
    text = dict(zip(ts.queries["id"].to_list(), ts.queries["text"].to_list()))
    pairs = ts.query_pairs()
    m_text = [text[i] for i in pairs["m_id"].to_list()]
    f_text = [text[i] for i in pairs["f_id"].to_list()]
    m_norm = [normalise(t, ts.lang) for t in m_text]
    f_norm = [normalise(t, ts.lang) for t in f_text]
    return pairs.with_columns(
        pl.Series("masculine", m_text, dtype=pl.String),
        pl.Series("feminine", f_text, dtype=pl.String),
        pl.Series("masculine_normalised", m_norm, dtype=pl.String),
        pl.Series("feminine_normalised", f_norm, dtype=pl.String),
        pl.Series("identical_before", [a == b for a, b in zip(m_text, f_text)], dtype=pl.Boolean),
        pl.Series("identical_after", [a == b for a, b in zip(m_norm, f_norm)], dtype=pl.Boolean),
    )
