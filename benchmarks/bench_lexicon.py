"""What the lexicon gender layer costs a build (issue 9: <= 10 s on a cold Portuguese build, nothing cached).

Measured on the raw translations of an existing build (``data/<lang>/raw_translations.parquet``), in one run:

- ``rules``: the previous gender check (ending rules, builder/gender.py ``check_many``) over the same titles;
- ``lexicon cold``: the lexicon layer with an empty lookup store (every word through lt-proc and hunspell);
- ``lexicon cached``: the same with the store filled by the cold run (a rebuild from cached translations);
- whole processes: ``python -m builder postprocess`` with an empty and with a filled ``--cache``.

    python benchmarks/bench_lexicon.py --data data --lang pt --lang es --rounds 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from builder.gender import check_many  # noqa: E402
from builder.inflection import GenderLayer  # noqa: E402
from builder.params import load_params, strip_pattern_for  # noqa: E402
from builder.strip import compile_pattern, strip_template  # noqa: E402
from languages import load  # noqa: E402


def titles_of(raw: pl.DataFrame, lang: str) -> list[tuple[str, str | None, str | None]]:
    rx = compile_pattern(strip_pattern_for(load_params()["build"], lang), lang)
    out = []
    for r in raw.iter_rows(named=True):
        m = strip_template(r["output_masculine"], r["source_text"], rx).title
        f = strip_template(r["output_feminine"], r["source_text"], rx).title
        out.append((r["source_text"], m, f))
    return out


def time_lexicon(lang: str, rows, store: Path) -> float:
    t0 = time.perf_counter()
    layer = GenderLayer(lang, store)
    layer.prepare([t for _, m, f in rows for t in (m, f) if t])
    for english, m, f in rows:
        layer.decide(m, f, english)
    layer.store.close()
    return time.perf_counter() - t0


def time_rules(lang: str, rows) -> float:
    t0 = time.perf_counter()
    check_many(load(lang), [(t, None) for _, m, f in rows for t in (m, f)])
    return time.perf_counter() - t0


def time_process(lang: str, data: Path, cache: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "builder", "postprocess", "--lang", lang, "--out", str(data), "--cache", str(cache),
                    "--quiet"], cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data")
    ap.add_argument("--lang", action="append", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"$ {' '.join([Path(sys.executable).name, *sys.argv])}  ({os.cpu_count()} CPUs, load {load_average()})")
    print(f"{'lang':4}  {'titles':>6}  {'rules s':>8}  {'lexicon cold s':>14}  {'lexicon cached s':>16}  "
          f"{'process cold s':>14}  {'process cached s':>16}")
    for lang in args.lang or ["pt", "es"]:
        src = Path(args.data) / lang
        raw = pl.read_parquet(src / "raw_translations.parquet")
        rows = titles_of(raw, lang)
        rules, cold, warm, pcold, pwarm = [], [], [], [], []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                tmp = Path(tmp)
                store = tmp / "lexicon.sqlite"
                rules.append(time_rules(lang, rows))
                cold.append(time_lexicon(lang, rows, store))
                warm.append(time_lexicon(lang, rows, store))
                # whole processes on a copy of the language's folder (the build replaces it)
                data = tmp / "data"
                shutil.copytree(src, data / lang)
                pcold.append(time_process(lang, data, tmp / "cache-cold"))
                pwarm.append(time_process(lang, data, tmp / "cache-cold"))
        med = statistics.median
        print(f"{lang:4}  {2 * len(rows):>6}  {med(rules):>8.2f}  {med(cold):>14.2f}  {med(warm):>16.2f}  "
              f"{med(pcold):>14.2f}  {med(pwarm):>16.2f}")
    print(f"(medians of {args.rounds} rounds; 'process' is the whole `python -m builder postprocess` command, "
          f"imports included; load {load_average()} at the end)")


def load_average() -> str:
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


if __name__ == "__main__":
    main()
