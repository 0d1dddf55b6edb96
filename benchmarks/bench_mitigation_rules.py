"""Over-normalisation of the mitigation rules (eval.mitigation) on the dataset's own reference translations.

    .venv/bin/python benchmarks/bench_mitigation_rules.py [--dataset ../shared/data/jobtitlesimilarity/dataset]
                                                          [--langs pt,es,it,fr,de] [--sample 8]

The reference titles (``<lang>/queries.tsv`` and ``<lang>/corpus_documents.tsv``, second column) are
human translations written without a gender marking of their own, mostly masculine or epicene forms. A rule
that changes one of them is either repairing a feminine reference title or over-normalising a masculine or
epicene one. Per language the table gives the distinct (lowercased) texts, the number the rules change,
and how many of those outputs occur nowhere among that language's reference texts; a sample of the latter
(the candidates for wrong rewrites, to read by eye) follows. Nothing is written; nothing is copied.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from eval.mitigation import normalise
from languages import available, load

DEFAULT_DATASET = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "jobtitlesimilarity" / "dataset"
FILES = ("queries.tsv", "corpus_documents.tsv")


def reference_texts(folder: Path) -> list[str]:
    """The distinct lowercased titles (second column) of a language's query and corpus files."""
    texts: set[str] = set()
    for name in FILES:
        path = folder / name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) < 2:
                raise SystemExit(f"error: {path}:{number}: expected 'id<TAB>title', got {line!r}")
            texts.add(cols[1].strip().lower())
    return sorted(texts)


def measure(lang: str, texts: list[str]) -> dict:
    known = set(texts)
    pack = load(lang)
    changed = [(t, normalise(t, pack)) for t in texts if normalise(t, pack) != t]
    unknown = [(t, n) for t, n in changed if n not in known]
    return {"lang": lang, "texts": len(texts), "changed": changed, "unknown": unknown}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET, help="folder holding <lang>/queries.tsv, corpus_documents.tsv")
    parser.add_argument("--langs", default="pt,es,it,fr,de")
    parser.add_argument("--sample", type=int, default=8, help="changed texts shown per language whose output is not a reference text")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    supported = [code for code in available() if load(code).mitigation is not None]
    if unsupported := [x for x in langs if x not in supported]:
        print(f"error: no normalisation rules for {', '.join(unsupported)}; rules exist for {', '.join(supported)}",
              file=sys.stderr)
        return 2
    dataset = args.dataset.resolve()
    missing = [str(dataset / lang / name) for lang in langs for name in FILES if not (dataset / lang / name).is_file()]
    if missing:
        print(f"error: the reference translations are not there ({', '.join(missing)}); pass --dataset with the folder "
              "of the jobtitlesimilarity dataset (<lang>/queries.tsv and corpus_documents.tsv)", file=sys.stderr)
        return 2

    results = [measure(lang, reference_texts(dataset / lang)) for lang in langs]
    print(f"Mitigation rules on the reference translations in {dataset}\n")
    print(f"| lang | distinct texts | changed by the rules | changed, output not a reference text |\n|---|---|---|---|")
    for r in results:
        n, c, u = r["texts"], len(r["changed"]), len(r["unknown"])
        print(f"| {r['lang']} | {n} | {c} ({100 * c / n:.1f}%) | {u} ({100 * u / n:.1f}%) |")
    rng = random.Random(args.seed)
    for r in results:
        sample = sorted(rng.sample(r["unknown"], min(args.sample, len(r["unknown"]))))
        print(f"\n{r['lang']}: {len(sample)} of {len(r['unknown'])} changed texts whose output is not a reference text "
              "(candidates for wrong rewrites)\n\n| reference text | rules' output |\n|---|---|")
        for before, after in sample:
            print(f"| {before} | {after} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
