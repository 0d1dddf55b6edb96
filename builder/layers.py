"""The gender layers: one registry entry per pack value of ``gender_layer`` that names a layer object.

A gender layer reads one title of its language, decides its gender and makes the other form from a lexicon and
word lists (``builder/inflection.py`` for the Romance languages, ``builder/german.py``, ``builder/dutch.py``,
``builder/polish.py``). Every place that needs one (the reference route, the MT route's stats, ESCO, the build
summary) asks this registry, so a new layer is one entry here and one pack value (``languages.GENDER_LAYERS``,
which the pack reader checks; ``tests/builder/test_layers.py`` keeps the two lists equal). The pack value
``rules`` names no layer: builder/gender.py's ending rules decide on the MT route.

A layer object has ``lang``, ``prepare(titles)`` (one batch of lookups for the decisions to come),
``prepare_labels(labels)`` (the same for ESCO's labels), ``decide(masculine, feminine, english) -> Decision``,
``lexicon_name`` and ``wordlist_name`` (for stats.json) and ``method_names`` (the names ``check_method`` gives
the parts of a decision's method: ``lexicon``, ``wordlist``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from builder.errors import BuildError


@dataclass(frozen=True)
class LayerKind:
    name: str  # the pack's gender_layer value
    module: str  # the module holding the layer class
    cls: str  # the layer class
    # The layer reads titles as written (German tells nouns from adjectives by their capital); else lowercased
    # and with single spaces (builder.strip.normalise) first.
    keeps_case: bool

    @property
    def path(self) -> str:
        """The module's file, as stats.json names it (``builder/german.py``)."""
        return self.module.replace(".", "/") + ".py"

    def make(self, lang, cache: Path | None = None):
        """The layer for one language (its resources loaded; a missing one is a LexiconError with the install
        command)."""
        # By its name inside this package (`builder` in a checkout, `gendered_job_titles.builder` installed).
        local = self.module.removeprefix("builder.")
        return getattr(importlib.import_module(f".{local}", __package__), self.cls)(lang, cache)

    def info(self, lang) -> dict:
        """What decides the gender of this language's titles, for stats.json and the build summary."""
        layer = self.make(lang)
        return {"method": "lexicon", "lexicon": layer.lexicon_name, "word_list": layer.wordlist_name,
                "module": self.path}


LAYERS: dict[str, LayerKind] = {k.name: k for k in (
    LayerKind("lexicon", "builder.inflection", "GenderLayer", keeps_case=False),
    LayerKind("german", "builder.german", "GermanGenderLayer", keeps_case=True),
    LayerKind("dutch", "builder.dutch", "DutchGenderLayer", keeps_case=False),
    LayerKind("polish", "builder.polish", "PolishGenderLayer", keeps_case=False),
)}
# The pack value whose language has no layer object: the ending rules of builder/gender.py decide.
RULES = "rules"


def layer_kind(lang) -> LayerKind | None:
    """The registry entry of the pack's ``gender_layer``; None for ``rules``."""
    if lang.gender_layer == RULES:
        return None
    try:
        return LAYERS[lang.gender_layer]
    except KeyError:
        raise BuildError(f"{lang.path}: gender_layer {lang.gender_layer!r} names no gender layer of the builder "
                         f"(known: {', '.join(sorted(LAYERS))}, {RULES})") from None


def make_layer(lang, cache: Path | None = None):
    """The layer the pack declares; the reference route needs one (the given title's other form is made, never
    guessed)."""
    kind = layer_kind(lang)
    if kind is None:
        raise BuildError(f"{lang.path}: the reference route needs a gender layer (gender_layer: one of "
                         f"{', '.join(sorted(LAYERS))}); this pack decides gender by ending rules only")
    return kind.make(lang, cache)


def keeps_case(lang) -> bool:
    kind = layer_kind(lang)
    return kind is not None and kind.keeps_case


def layer_info(lang) -> dict:
    """stats.json ``gender_layer``: the layer's resources, or the ending rules (with the spaCy pipeline)."""
    kind = layer_kind(lang)
    if kind is not None:
        return kind.info(lang)
    pipeline = lang.gender_rules.spacy_pipeline.name if lang.gender_rules.spacy_pipeline else None
    return {"method": f"spacy:{pipeline}+rules" if pipeline else "rules", "module": "builder/gender.py"}
