"""How much of the asymmetry measured on the MT-route sets came from translation errors: the same models scored
on the MT route and on the given-translation route of the same language, pair by pair through the English query
id (``pair_id`` is ``p:<smallest English id>`` on both routes).

    python -m eval run --data DATA_MT --model M --out RUNS_MT          # the MT route's sets (--route mt builds)
    python benchmarks/compare_routes.py --mt RUNS_MT --reference results/runs --langs pt es fr it

Prints a Markdown table per model (masculine corpora): pairs, mean AO and RBO(p=0.98) of each route, the same on
the English queries both routes pair, and the MT route's ten least symmetric pairs with where they stand on the
reference route (docs/given-translations.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import mean

RBO = "RBO(p=0.98)"


def load(folder: Path, model: str) -> dict:
    found = sorted(folder.glob(f"{model}__*.json"))
    if not found:
        raise SystemExit(f"error: {folder}: no results of {model} (run `python -m eval run --model {model}` first)")
    return json.loads(found[-1].read_text(encoding="utf-8"))["languages"]


def pairs(lang: dict) -> dict[str, dict]:
    return {p["pair_id"]: p for p in lang["per_pair"] if p["corpus"] == "masculine"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mt", type=Path, required=True)
    ap.add_argument("--reference", type=Path, required=True)
    ap.add_argument("--models", nargs="+", default=["m-use", "m-e5-small-q4", "tfidf-char"])
    ap.add_argument("--langs", nargs="+", default=["pt", "es", "fr", "it"])
    ap.add_argument("--worst", type=int, default=10)
    args = ap.parse_args()
    for model in args.models:
        mt, ref = load(args.mt, model), load(args.reference, model)
        print(f"\n### {model}, masculine corpora\n")
        print("| lang | MT pairs | reference pairs | AO MT | AO reference | RBO MT | RBO reference | common pairs | "
              "1−RBO MT (common) | 1−RBO reference (common) | share of MT asymmetry gone | MT worst 10 still in reference's worst 10% |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        worst_lines = []
        for lang in args.langs:
            a, b = pairs(mt[lang]), pairs(ref[lang])
            common = sorted(set(a) & set(b))
            asym_mt = mean(1 - a[p][RBO] for p in common)
            asym_ref = mean(1 - b[p][RBO] for p in common)
            worst = sorted(a.values(), key=lambda p: p[RBO])[: args.worst]
            cut = sorted(p[RBO] for p in b.values())[max(0, len(b) // 10 - 1)]
            still = [p for p in worst if p["pair_id"] in b and b[p["pair_id"]][RBO] <= cut]
            print(f"| {lang} | {len(a)} | {len(b)} | {mean(p['AO'] for p in a.values()):.4f} | "
                  f"{mean(p['AO'] for p in b.values()):.4f} | {mean(p[RBO] for p in a.values()):.4f} | "
                  f"{mean(p[RBO] for p in b.values()):.4f} | {len(common)} | {asym_mt:.4f} | {asym_ref:.4f} | "
                  f"{(asym_mt - asym_ref) / asym_mt:+.0%} | {len(still)}/{len(worst)} |")
            for p in worst:
                there = b.get(p["pair_id"])
                worst_lines.append(f"| {lang} | {p['pair_id'][2:]} | {p['m_id'][2:]} / {p['f_id'][2:]} | {p[RBO]:.3f} | "
                                   + (f"{there['m_id'][2:]} / {there['f_id'][2:]} | {there[RBO]:.3f} |" if there
                                      else "no pair on the reference route | |"))
        print(f"\nThe MT route's {args.worst} least symmetric pairs per language and the same English query on the "
              "reference route:\n")
        print("| lang | English id | MT pair | RBO | reference pair | RBO |")
        print("|---|---|---|---|---|---|")
        print("\n".join(worst_lines))


if __name__ == "__main__":
    main()
