"""What an ESCO language build costs (issue 24: an ESCO language builds in seconds), beside plain CSV parsing.

In one run, per language, the median of ``--rounds``:

- ``polars csv``: ``polars.read_csv`` of ``occupations_<lang>.csv``, or of MELO's two TSV files (the baseline:
  parsing and nothing else);
- ``checked read``: builder.esco.load_esco (read_occupations: the stdlib csv reader, line numbers, the refusals;
  read_melo: the line checks, the join on the key, the checksums);
- ``build cold``: builder.esco.build_esco with an empty lexicon store (every word through lt-proc and hunspell),
  the test set written;
- ``build cached``: the same with the store the cold run filled (a rebuild);
- ``process cached``: ``python -m builder esco`` as a user runs it (imports included).

    python benchmarks/bench_esco.py --esco /path/to/esco-csv --esco-version v1.0.x --lang es --lang fr
    python benchmarks/bench_esco.py --lang de          # MELO's pinned files, found as `builder esco` finds them
"""

from __future__ import annotations

import argparse
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

from builder.esco import MELO_FILES, build_esco, is_melo_copy, load_esco, melo_dataset, occupations_file, resolve_melo  # noqa: E402


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--esco", default=None, help="ESCO's CSV download or a MELO copy (default: MELO, as builder esco finds it)")
    ap.add_argument("--esco-version", default=None)
    ap.add_argument("--lang", action="append", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    folder = Path(args.esco) if args.esco else None
    cols = ["polars csv", "checked read", "build cold", "build cached", "process cached"]
    print(f"{'lang':4}  {'occupations':>11}  " + "  ".join(f"{c + ' s':>15}" for c in cols)
          + "  build cached / polars csv")
    for lang in args.lang or ["es"]:
        melo = folder is None or is_melo_copy(folder)
        if melo:
            tsvs = [melo_dataset(folder or resolve_melo(lang), lang) / name for name in MELO_FILES]

            def baseline():
                for tsv in tsvs:
                    pl.read_csv(tsv, separator="\t", has_header=False, quote_char=None)
        else:
            path = occupations_file(folder, lang)

            def baseline():
                pl.read_csv(path)
        times: dict[str, list[float]] = {c: [] for c in cols}
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            for _ in range(args.rounds):
                times["polars csv"].append(timed(baseline))
                times["checked read"].append(timed(lambda: load_esco(folder, lang, args.esco_version)))
                store = tmp / "cold.sqlite"
                store.unlink(missing_ok=True)
                times["build cold"].append(timed(lambda: build_esco(folder, lang, tmp / "out", args.esco_version,
                                                                    cache=store)))
                shutil.copyfile(store, tmp / "lexicon.sqlite")
                times["build cached"].append(timed(lambda: build_esco(folder, lang, tmp / "out", args.esco_version,
                                                                      cache=tmp / "lexicon.sqlite")))
                cmd = [sys.executable, "-m", "builder", "esco", *(["--esco", str(folder)] if folder else []), "--lang",
                       lang, "--out", str(tmp / "out"), "--cache", str(tmp), "--quiet"]
                if args.esco_version:
                    cmd += ["--esco-version", args.esco_version]
                times["process cached"].append(timed(lambda: subprocess.run(cmd, cwd=REPO, check=True,
                                                                            capture_output=True)))
        med = {c: statistics.median(v) for c, v in times.items()}
        n = len(load_esco(folder, lang, args.esco_version).occupations)
        print(f"{lang:4}  {n:>11}  " + "  ".join(f"{med[c]:>15.3f}" for c in cols)
              + f"  {med['build cached'] / med['polars csv']:>8.1f}x")


if __name__ == "__main__":
    main()
