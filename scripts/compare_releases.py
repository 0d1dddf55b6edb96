"""How much of the gender asymmetry measured on one release was translation error: the same models' results on two
releases side by side (docs/review.md "What the review changed in the measurements").

    .venv/bin/python scripts/compare_releases.py OLD_RUNS NEW_RUNS [--out FILE]

OLD_RUNS, NEW_RUNS: folders of `eval collect` documents (`<model>__v<version>.json`, e.g. results/pipeline/runs at
the commits that published the two releases). Per model and language, over the masculine corpus: AO and
RBO(p=0.98) of the feminine vs masculine rankings, MAP of the feminine and masculine queries, the paired AP gap
(M - F) with its p-value, n pairs; then the least symmetric pairs of the old release (its worst_pairs) and whether
each is still among the new release's worst, by English id.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load(folder: Path) -> dict[str, dict]:
    out = {}
    for path in sorted(folder.glob("*__v*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out[doc["model"] if isinstance(doc["model"], str) else doc["model"]["name"]] = doc
    if not out:
        raise SystemExit(f"error: {folder}: no `eval collect` documents (<model>__v<version>.json) there")
    return out


def figures(lang_doc: dict) -> dict:
    c = lang_doc["corpora"]["masculine"]
    gap = c["parity"]["paired_AP_M-AP_F"]
    return {"AO": c["symmetry"]["AO"]["value"], "RBO": c["symmetry"]["RBO(p=0.98)"]["value"],
            "n": c["symmetry"]["AO"]["n"], "MAP_F": c["MAP"]["feminine"]["value"], "MAP_M": c["MAP"]["masculine"]["value"],
            "gap": gap["value"], "p": gap["p_value"]}


def text_of(item_id: str) -> str:
    """An item id's text (``m:engenheiro_civil`` → engenheiro civil; docs/FORMAT.md item ids)."""
    return item_id.split(":", 1)[1].replace("_", " ")


def version(doc: dict) -> str:
    return next(iter(doc["languages"].values()))["testset_version"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    old, new = load(args.old), load(args.new)
    lines = []
    for model in sorted(set(old) & set(new)):
        o, n = old[model], new[model]
        lines += [f"### {model}: {version(o)} → {version(n)} (masculine corpus)", "",
                  "| lang | n pairs | AO | RBO(p=0.98) | MAP F | MAP M | paired AP gap M−F (p) |", "|---|---|---|---|---|---|---|"]
        for lang in sorted(set(o["languages"]) & set(n["languages"])):
            a, b = figures(o["languages"][lang]), figures(n["languages"][lang])
            lines.append(f"| {lang} | {a['n']} → {b['n']} | {a['AO']:.4f} → {b['AO']:.4f} | {a['RBO']:.4f} → {b['RBO']:.4f} | "
                         f"{a['MAP_F']:.4f} → {b['MAP_F']:.4f} | {a['MAP_M']:.4f} → {b['MAP_M']:.4f} | "
                         f"{a['gap']:+.4f} ({a['p']:.3f}) → {b['gap']:+.4f} ({b['p']:.3f}) |")
        lines.append("")
        lines += [f"Least symmetric pairs of {version(o)} (RBO(p=0.98), masculine corpus) and the same English id in "
                  f"{version(n)}:", "", "| lang | English id | old pair | RBO old | new pair | RBO new | still among the worst |",
                  "|---|---|---|---|---|---|---|"]
        for lang in sorted(set(o["languages"]) & set(n["languages"])):
            worst_new = {w["pair_id"]: w for w in n["languages"][lang]["worst_pairs"]["masculine"]}
            per_pair_new = {p["pair_id"]: p for p in n["languages"][lang].get("per_pair") or []
                            if p.get("corpus") == "masculine"}
            for w in o["languages"][lang]["worst_pairs"]["masculine"][:5]:
                now = per_pair_new.get(w["pair_id"])
                shown = (f"{text_of(now['m_id'])} / {text_of(now['f_id'])} | {now['RBO(p=0.98)']:.3f}" if now
                         else "(no pair) | –")
                lines.append(f"| {lang} | {w['pair_id'][2:]} | {w['masculine']} / {w['feminine']} | {w['RBO(p=0.98)']:.3f} | "
                             f"{shown} | {'yes' if w['pair_id'] in worst_new else 'no'} |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
