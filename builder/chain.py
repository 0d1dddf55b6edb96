"""Translator chains: English -> a pivot language -> the target, each step a translator of its own.

A chain is named by its steps, ``bergamot>apertium``: the first step translates the English template
sentences into its language (bergamot: Portuguese), the next translates that output on with an Apertium
pair (``apertium-es-pt``'s ``pt-es``). A gendered pivot keeps the gender of the first step
(*Ela é uma engenheira* -> *Ella es una ingeniera*), and with it that step's errors, which the target's gender
layer then checks. Each step has its own name, version and cache key (``translate_sentences`` caches per
step), so a chain through Portuguese reuses the Portuguese build's translations.

Portuguese to French or Italian goes through Spanish: ``bergamot>apertium`` follows the shortest path of
Apertium pairs (pt->es->fr with ``apertium-es-pt`` and ``apertium-fr-es``; pt->es->it with ``apertium-spa-ita``).

A later Apertium step marks a pivot word it does not know with ``*`` (and a form it cannot generate with ``#``) (*Él es un \*padeiro*: a Portuguese word
left in a Spanish title). Such a sentence is translated again by the **fallback**, the direct offline English
route of the other English translator (``apertium`` eng-spa, then the pairs from Spanish on; its unknown words
marked too),
and the output with fewer unknown words wins (the chain's on a tie: the direct route keeps English word
order). The marks are never kept in a title.
"""

from __future__ import annotations

import re

from builder.errors import TranslationError
from builder.translators import ApertiumTranslator, package_version

# The language an English-source offline translator produces (its only pair here).
FIRST_STEP_TARGET = {"bergamot": "pt", "apertium": "es"}
# Apertium modes between two languages (Debian packages in DESIGN.md §6).
APERTIUM_PAIRS = {("pt", "es"): "pt-es", ("es", "pt"): "es-pt", ("es", "fr"): "es-fr", ("fr", "es"): "fr-es",
                  ("es", "it"): "spa-ita", ("es", "gl"): "es-gl", ("pt", "gl"): "pt-gl", ("es", "ca"): "es-ca"}
APERTIUM_PACKAGES = {"pt-es": "apertium-es-pt", "es-pt": "apertium-es-pt", "es-fr": "apertium-fr-es",
                     "fr-es": "apertium-fr-es", "spa-ita": "apertium-spa-ita", "es-gl": "apertium-es-gl",
                     "pt-gl": "apertium-pt-gl", "es-ca": "apertium-es-ca"}


# Apertium's marks: * a word it does not know, # a form its generator could not make, @ a transfer failure.
# A mark opens a word wherever the word starts (after a space, a quote, a slash: java/*j2ee); "C#" is no mark.
# Marks pile up through several steps: **padeiro.
UNKNOWN_MARK = re.compile(r"(?<!\w)[*#@]+(?=\w)")


def _may_have_marks(output: str) -> bool:
    # Most outputs hold no mark at all: three substring tests spare them the regular expression.
    return "*" in output or "#" in output or "@" in output


def has_unknown_word(output: str) -> bool:
    return _may_have_marks(output) and bool(UNKNOWN_MARK.search(output))


def strip_marks(output: str) -> str:
    return UNKNOWN_MARK.sub("", output) if _may_have_marks(output) else output


class ApertiumPairTranslator(ApertiumTranslator):
    """One Apertium pair between two non-English languages (a chain's later step). Runs without ``-u`` so
    words it does not know stay marked with ``*`` for the chain to see."""

    name = "apertium"
    unknown_marks = True

    def __init__(self, source: str, target: str):
        import shutil

        mode = APERTIUM_PAIRS.get((source, target))
        if mode is None:
            raise TranslationError(f"apertium: no {source}->{target} pair known (have: "
                                   f"{', '.join(f'{a}->{b}' for a, b in APERTIUM_PAIRS)})")
        package = APERTIUM_PACKAGES[mode]
        if shutil.which("apertium") is None:
            raise TranslationError(f"apertium: command not found; install the Debian packages apertium and {package}")
        self.source = source
        self.target = target
        self.mode = mode
        # "marked": outputs keep Apertium's * before unknown words (a different output from -u, a different cache key)
        self.version = f"apertium-{package_version('apertium')}/{package}-{package_version(package)}/marked"
        if package_version(package) == "unknown":
            raise TranslationError(f"apertium: the {source}->{target} pair needs the Debian package {package} "
                                   f"(apt-get install {package})")


def apertium_path(source: str, target: str) -> list[str]:
    """The languages from source to target through Apertium pairs, shortest first (pt -> es -> fr)."""
    paths = [[source]]
    seen = {source}
    while paths:
        path = paths.pop(0)
        if path[-1] == target:
            return path
        for (a, b) in APERTIUM_PAIRS:
            if a == path[-1] and b not in seen:
                seen.add(b)
                paths.append(path + [b])
    raise TranslationError(f"apertium: no chain of pairs from {source} to {target} (pairs: "
                           f"{', '.join(f'{a}->{b}' for a, b in APERTIUM_PAIRS)})")


class ChainTranslator:
    """English -> pivot -> ... -> target, step by step (see the module docstring). ``bergamot>apertium``: bergamot
    into Portuguese, then Apertium pairs along the shortest path to the target (pt->es, or pt->es->fr)."""

    def __init__(self, name: str, target: str, make_step):
        parts = name.split(">")
        if len(parts) != 2 or not all(parts):
            raise TranslationError(f"translator chain {name!r}: write it as first>next (two steps), e.g. bergamot>apertium")
        first, second = parts
        if first not in FIRST_STEP_TARGET:
            raise TranslationError(f"translator chain {name!r}: the first step must be an offline English translator "
                                   f"({', '.join(FIRST_STEP_TARGET)})")
        if second != "apertium":
            raise TranslationError(f"translator chain {name!r}: the second step must be apertium (got {second!r})")
        pivot = FIRST_STEP_TARGET[first]
        path = apertium_path(pivot, target)
        steps = [make_step(first, pivot)] + [ApertiumPairTranslator(a, b) for a, b in zip(path, path[1:])]
        # The fallback: the other English translator's route to the target (es: apertium eng-spa, then the pairs).
        direct = next((n for n, lang in FIRST_STEP_TARGET.items() if n != first), None)
        self.fallback = None
        if direct is not None:
            start = make_step(direct, FIRST_STEP_TARGET[direct])
            start.unknown_marks = True  # count its unknown words too (its own cache key: "/marked")
            start.version += "/marked"
            route = apertium_path(FIRST_STEP_TARGET[direct], target)
            self.fallback = [start] + [ApertiumPairTranslator(a, b) for a, b in zip(route, route[1:])]
        self.steps = steps
        self.name = name
        self.target = target
        self.pivot = pivot
        self.version = " > ".join(f"{s.name}:{s.source if hasattr(s, 'source') else 'en'}-{s.target}:{s.version}"
                                  for s in steps)
        if self.fallback:
            self.version += " | fallback " + " > ".join(f"{s.name}:{s.target}:{s.version}" for s in self.fallback)

    def translate(self, sentences: list[str]) -> list[str]:
        outputs = sentences
        for step in self.steps:
            outputs = step.translate(outputs)

        def fallback(english: list[str]) -> list[str]:
            for step in self.fallback:
                english = step.translate(english)
            return english

        return self.finish(sentences, outputs, fallback if self.fallback else None)

    def finish(self, english: list[str], outputs: list[str], fallback) -> list[str]:
        """Outputs with a marked unknown word go to the fallback (when there is one); marks never stay."""
        redo = [i for i, o in enumerate(outputs) if has_unknown_word(o)]
        out = list(outputs)
        if redo and fallback is not None:
            for i, answer in zip(redo, fallback([english[i] for i in redo])):
                if len(UNKNOWN_MARK.findall(answer)) < len(UNKNOWN_MARK.findall(out[i])):
                    out[i] = answer
        return [strip_marks(o) for o in out]


def is_chain(name: str) -> bool:
    return ">" in name
