"""Draw a hand-check sample of one built language, fixed before any checking (docs/given-check/*.md).

    python docs/given-check/sample.py --data data --lang de --seed 2028 --out /tmp/check

Writes <out>/<lang>.md: N pairs, M neutral items and every single-form item, each with its English title(s),
route and flags, in a random order drawn with --seed, leaving out every English title of an earlier sample
(the tables of docs/given-check/**/*.md). With --alignments K, also K confident alignments of the given-translation
route (alignment.parquet; --new-against DIR: only ids that DIR's build did not align confidently)."""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent


def earlier_titles(lang: str) -> set[str]:
    """English titles of every earlier sample of ``lang`` (the second column of the check tables in the files
    named for it: de.md, ca-gl.md, nl-seed-3101.md), and every title of the 0.5.0 check in any language: round
    0.6.0-r2's readers were shown some of them as examples (docs/review.md)."""
    seen = set()
    for md in HERE.rglob("*.md"):
        named = set(md.stem.split("-"))
        if lang not in named and md.parent.parent.name != "0.5.0":
            continue
        for line in md.read_text(encoding="utf-8").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) > 2 and re.fullmatch(r"[A-Za-z]*\d+", cells[0] or "x"):
                seen.update(t.strip() for t in cells[1].split(";"))
    return seen


def draw(data: Path, lang: str, seed: int, pairs: int, neutral: int) -> dict[str, list[dict]]:
    items = pl.concat([pl.read_parquet(data / lang / f"{part}.parquet") for part in ("queries", "corpus")])
    items = items.unique("id", keep="first").filter(pl.col("form").is_in(["masculine", "feminine", "neutral"]))
    skip = earlier_titles(lang)
    groups: dict[str, list[dict]] = {}
    for row in items.sort("id").iter_rows(named=True):
        groups.setdefault(row["pair_id"], []).append(row)
    kinds: dict[str, list[list[dict]]] = {"pairs": [], "neutral": [], "single": []}
    for rows in groups.values():
        if any(t in skip for r in rows for t in r["source_texts"]):
            continue
        genders = sorted(r["gender"] for r in rows)
        if genders == ["feminine", "masculine"]:
            kinds["pairs"].append(sorted(rows, key=lambda r: r["gender"] != "masculine"))
        elif genders == ["neutral"]:
            kinds["neutral"].append(rows)
        elif genders in (["masculine"], ["feminine"]):
            kinds["single"].append(rows)
    rng = random.Random(seed)
    out = {}
    for kind, n in (("pairs", pairs), ("neutral", neutral), ("single", None)):
        pool = kinds[kind]
        out[kind] = rng.sample(pool, min(n, len(pool))) if n is not None else pool
    return out


def draw_alignments(data: Path, lang: str, seed: int, n: int, new_against: Path | None) -> list[dict]:
    rows = pl.read_parquet(data / lang / "alignment.parquet").filter(pl.col("confident"))
    if new_against is not None:
        before = pl.read_parquet(new_against / lang / "alignment.parquet").filter(pl.col("confident"))
        rows = rows.join(before.select("source_id", "role"), on=["source_id", "role"], how="anti")
    skip = earlier_titles(lang)
    pool = [r for r in rows.unique(["source_id", "role"]).sort("source_id", "role").iter_rows(named=True)
            if r["source_text"] not in skip]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--lang", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--neutral", type=int, default=15)
    ap.add_argument("--alignments", type=int, default=0)
    ap.add_argument("--new-against", type=Path, default=None)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    missing = [f for f in ("queries.parquet", "corpus.parquet") if not (a.data / a.lang / f).is_file()]
    if missing:
        raise SystemExit(f"error: {a.data / a.lang}: no {' or '.join(missing)}; build the language first "
                         "(python -m builder defaults) or give --data")
    sample = draw(a.data, a.lang, a.seed, a.pairs, a.neutral)
    lines = [f"# {a.lang}: sample drawn with seed {a.seed} from {a.data / a.lang}", ""]
    for kind, groups in sample.items():
        lines += [f"## {kind} ({len(groups)})", "", "| # | English title(s) | title(s) | route | flags |", "|---|---|---|---|---|"]
        for i, rows in enumerate(groups, 1):
            english = "; ".join(dict.fromkeys(t for r in rows for t in r["source_texts"]))
            titles = " / ".join(r["text"] for r in rows)
            flags = ",".join(sorted({f for r in rows for f in r["flags"]}))
            # a translator chain holds "|" ("a > b | fallback c"): escaped, so the route stays one cell a
            # checker's copy can drop
            route = rows[0]["provenance"].replace("|", "\\|")
            lines.append(f"| {i} | {english} | {titles} | {route} | {flags} |")
        lines.append("")
    if a.alignments:
        aligned = draw_alignments(a.data, a.lang, a.seed, a.alignments, a.new_against)
        lines += [f"## alignments ({len(aligned)})", "", "| # | English title | given title | role |",
                  "|---|---|---|---|"]
        # (no reason column: the checker judges the two titles, not the evidence the alignment used)
        lines += [f"| {i} | {r['source_text']} | {r['reference_text']} | {r['role']} |"
                  for i, r in enumerate(aligned, 1)]
        lines.append("")
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"{a.lang}.md").write_text("\n".join(lines), encoding="utf-8")
    print({k: len(v) for k, v in sample.items()} | ({"alignments": len(aligned)} if a.alignments else {}))


if __name__ == "__main__":
    main()
