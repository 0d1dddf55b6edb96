"""The notebook's ESCO pair rule beside ours, on the same MELO files (docs/esco.md "The notebook's pairs beside ours").

    .venv/bin/python scripts/compare_esco_notebook.py [--lang de --lang es ...] [--cache cache] [--out FILE]

The notebook's code is not available here; its rule is as issue 24 states it, and where that sentence leaves a
choice the script takes the literal one and says so:

- **German** (``/…in`` split): every label of an occupation (preferred and alternative, as published) written
  with exactly one ``/`` whose second side ends in *-in* is a pair, the first side masculine, the second feminine.
  ESCO also writes the short form *AHS-Lehrer/in*: its second side is the bare suffix *in*, which ends in *-in*,
  so the rule pairs *AHS-Lehrer ↔ in*. Those are counted as **bogus** (the second side a suffix, not a label).
  The other reading, the preferred label alone split, is given beside it.
- **Romance** (es, fr, it, pt; the notebook had no pt): two labels of the same occupation URI (preferred and
  alternative, as published, a dual form as one label) are a pair when they have the same number of words and
  every word that differs turns the masculine into the feminine by one of the known endings below (ENDINGS, the
  usual masculine→feminine endings of each language; the notebook's list is not known). The other reading, the
  preferred label paired with an alternative of its occupation, is given beside it.

Ours: the pairs builder/esco.py confirms (``esco_units``, corpus design ``labels``): the query pairs (one per
occupation, the headline) and every confirmed pair (queries and corpus). For each notebook pair the script asks
whether ours confirms the same two texts (case-insensitive) and, if not, what our gender layer says of it (the
reason it would drop it), so the table says where and why the two differ.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from builder.esco import DEFAULT_MELO_DIR, MELO, _Judge, esco_units, read_melo, resolve_melo  # noqa: E402
from builder.strip import normalise  # noqa: E402
from languages import resolve  # noqa: E402

NOTEBOOK = {"de": 1238, "es": 285, "it": 426, "fr": 232}  # the notebook's pair counts (issue 36)
# (masculine ending, feminine ending), longest first within a language: the usual Romance endings.
ENDINGS = {
    "es": [("or", "ora"), ("ón", "ona"), ("és", "esa"), ("án", "ana"), ("o", "a"), ("e", "a")],
    "pt": [("ão", "ã"), ("ão", "ona"), ("or", "ora"), ("ês", "esa"), ("o", "a"), ("e", "a")],
    "it": [("tore", "trice"), ("iere", "iera"), ("ore", "ora"), ("ere", "era"), ("e", "essa"), ("o", "a"), ("e", "a")],
    "fr": [("teur", "trice"), ("eur", "euse"), ("ier", "ière"), ("er", "ère"), ("ien", "ienne"), ("en", "enne"),
           ("on", "onne"), ("eux", "euse"), ("if", "ive"), ("", "e")],
}
SUFFIXES = {"in", "-in"}  # a German second side that is the feminine suffix alone (AHS-Lehrer/in)


def german_pairs(labels: list[str]) -> list[tuple[str, str]]:
    """The notebook's German rule on one occupation's labels: (first side, second side) of each label with one
    ``/`` whose second side ends in -in."""
    out = []
    for label in labels:
        sides = [s.strip() for s in label.split("/")]
        if len(sides) == 2 and sides[1].endswith("in"):
            out.append((sides[0], sides[1]))
    return out


def _ending_pair(m: str, f: str, endings) -> bool:
    return any(m.endswith(em) and f.endswith(ef) and m[:len(m) - len(em)] == f[:len(f) - len(ef)] and m != f
               for em, ef in endings)


def romance_pairs(labels: list[str], lang: str) -> list[tuple[str, str]]:
    """The notebook's Romance rule on one occupation's labels: two labels differing only by known endings (either
    order; the one the ending makes masculine first)."""
    out = []
    endings = ENDINGS[lang]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            wa, wb = a.split(), b.split()
            if len(wa) != len(wb) or wa == wb:
                continue
            for m, f in ((wa, wb), (wb, wa)):
                if all(x == y or _ending_pair(x, y, endings) for x, y in zip(m, f)):
                    out.append((" ".join(m), " ".join(f)))
                    break
    return out


def compare(root: Path, lang: str, cache: Path | None) -> dict:
    esco = read_melo(root, lang)
    notebook: dict[tuple[str, str], tuple[str, str]] = {}  # normalised pair -> as published (first found)
    for occ in esco.occupations:
        labels = [occ.preferred, *occ.alternatives]
        for m, f in (german_pairs(labels) if lang == "de" else romance_pairs(labels, lang)):
            notebook.setdefault((normalise(m), normalise(f)), (m, f))
    bogus = [p for p in notebook if p[1] in SUFFIXES]
    # The other reading of "a preferred label" (issue 24's words): the preferred label split (de), or paired with an
    # alternative of its occupation (Romance).
    preferred_only = {(normalise(m), normalise(f)) for occ in esco.occupations
                      for m, f in (german_pairs([occ.preferred]) if lang == "de" else
                                   [p for p in romance_pairs([occ.preferred, *occ.alternatives], lang)
                                    if occ.preferred in p])}
    judge = _Judge(resolve(lang), cache)
    units, _, _ = esco_units(esco, judge, "labels")
    pairs = [u for u in units if u.verdict.value == "gendered"]
    ours = {(u.masculine, u.feminine) for u in pairs}
    query_pairs = sum(u.role == "queries" for u in pairs)
    missing = [p for p in notebook if p not in ours]
    judge.prepare([t for p in missing for t in notebook[p]])
    why = Counter()
    for p in missing:
        if p in bogus:
            why["bogus"] += 1
            continue
        found = judge.pair(*notebook[p])
        why["confirmed, not in our set" if found[0] is not None else found[1]] += 1
    return {"lang": lang, "version": esco.version, "folder": MELO["datasets"][lang]["folder"],
            "occupations": len(esco.occupations), "notebook_paper": NOTEBOOK.get(lang), "notebook_rule": len(notebook),
            "preferred_only": len(preferred_only),
            "bogus": len(bogus), "bogus_examples": [" ↔ ".join(notebook[p]) for p in bogus[:3]],
            "ours_queries": query_pairs, "ours_all": len(ours), "both": len(notebook) - len(missing),
            "ours_only": len(ours - set(notebook)), "why": why}


def table(rows: list[dict]) -> str:
    head = ("| lang | MELO dataset (ESCO) | notebook (its figure) | notebook's rule here, every label | of them bogus "
            "(*X ↔ in*) | the rule on preferred labels only | "
            "ours: query pairs | ours: all confirmed pairs | in both | notebook's rule only: why ours has not | "
            "ours only |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        why = ", ".join(f"{k} {v}" for k, v in r["why"].most_common()) or "none"
        lines.append(f"| {r['lang']} | {r['folder']} ({r['version']}) | {r['notebook_paper'] or '—'} | "
                     f"{r['notebook_rule']:,} | {r['bogus']:,} | {r['preferred_only']:,} | {r['ours_queries']:,} | {r['ours_all']:,} | "
                     f"{r['both']:,} | {why} | {r['ours_only']:,} |")
    examples = [e for r in rows for e in r["bogus_examples"]]
    if examples:
        lines.append("")
        lines.append("Bogus pairs, first found: " + "; ".join(f"*{e}*" for e in examples))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", action="append", default=None, help="default: de es fr it pt")
    ap.add_argument("--melo", default=None, help=f"a MELO copy (default: $GJT_MELO_DIR, else {DEFAULT_MELO_DIR})")
    ap.add_argument("--cache", default=str(REPO / "cache"), help="folder of lexicon.sqlite (default: cache)")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    args = ap.parse_args()
    langs = args.lang or ["de", "es", "fr", "it", "pt"]
    rows = []
    for lang in langs:
        root = Path(args.melo) if args.melo else resolve_melo(lang)
        rows.append(compare(root, lang, Path(args.cache) / "lexicon.sqlite"))
    text = table(rows)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
