"""Command line of the evaluation package.

  python -m eval run       score models on a test set
  python -m eval collect   documents, tables and plots from stored model x language results (DVC's grid)
  python -m eval compare   put several results files in one set of tables
  python -m eval audit     audit several models at once (docs/audit.md)
  python -m eval report    a static site of results and audit to browse (docs/eval.md)
  python -m eval models    the declared models (name, how it loads, licence, languages)

Defaults come from the eval: section of params.yaml; flags override them.
"""

from __future__ import annotations

from config.cli import starting

# `python -m eval` or `gjt-eval`: before the imports below, so a Ctrl-C in them is one line, not a traceback
starting("eval", __name__)

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from config.cli import params_option, program, run_command
from config.files import foreign_entries, inside, write_file_atomically, write_folder_atomically
from config.secrets import scrub
from eval.errors import EvalError

def without_timing(doc: dict) -> dict:
    """The results document without what changes from run to run on the same input: each language's wall-clock
    timings and embedding-cache counts (``timing``)."""
    return {**doc, "languages": {lang: {k: v for k, v in block.items() if k != "timing"}
                                 for lang, block in doc["languages"].items()}}


def _write(path: Path, text: str) -> None:
    write_file_atomically(path, text)  # whole or not at all: a killed run leaves the previous report


def _num(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


# Figures in the metrics file (a git-tracked DVC metric) are rounded so that a rerun on the same data gives
# the same bytes: float summation order in the embedding models moves them by ~1e-7, which would otherwise
# rewrite results/metrics and dvc.lock on every `dvc repro`. Four decimals, as the summary line prints;
# a figure within ~1e-7 of a rounding boundary can still flip (rare), a cold embedding cache being the cause.
METRICS_DECIMALS = 4


def _rounded(value):
    if isinstance(value, float):
        return round(value, METRICS_DECIMALS) + 0.0  # + 0.0: -0.0 becomes 0.0
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


METRICS_FILE = re.compile(r"[^/]+\.json")  # what a --summary folder holds: one flat file per model and language


def _write_summary(path: Path, summary: dict, row_keys: set[str]) -> None:
    """A .json path: every figure of summary_metrics in one nested file. Any other path: a folder of one small,
    flat file per model and language (the masculine corpus, the paper's main tables), which `dvc metrics show`
    prints as one readable row each, of the figures ``row_keys`` names (``eval.report.metrics_row_keys``); the folder
    is replaced whole, so a model dropped from a run leaves no row."""
    if path.suffix == ".json":
        _write(path, json.dumps(_rounded(summary), indent=1, sort_keys=True) + "\n")
        return
    if path.exists() and (not path.is_dir() or foreign_entries(path, METRICS_FILE)):
        held = f" (it holds {', '.join(foreign_entries(path, METRICS_FILE)[:5])})" if path.is_dir() else ""
        raise EvalError(f"--summary {path}: exists and is not a folder of metrics files{held}; choose another path "
                        "(a folder for one file per model and language, or a .json file)")

    def fill(staging: Path) -> None:
        for model, languages in summary.items():
            for lang, corpora in languages.items():
                row = corpora.get("masculine") or next(iter(corpora.values()))  # eval.corpora may leave masculine out
                flat = {key: value for key, value in row.items() if key in row_keys}
                # A Hugging Face id (org/name) must not become a sub-folder.
                (staging / f"{model.replace('/', '--')}.{lang}.json").write_text(
                    json.dumps(_rounded(flat), indent=1, sort_keys=True) + "\n", encoding="utf-8")

    write_folder_atomically(path, fill, ours=METRICS_FILE)


def run_settings(args: argparse.Namespace):
    """params.yaml's eval: section with the command line's overrides (--model, --lang, --self-match, --rbo-p,
    --memory-budget-mb, --cache)."""
    from dataclasses import replace

    from eval.params import read_eval_settings

    settings = read_eval_settings(args.params)
    overrides: dict = {}
    if args.model:
        overrides["models"] = tuple(args.model)
    if args.lang:
        overrides["languages"] = tuple(args.lang)
    for lang in overrides.get("languages") or settings.languages or ():
        checked_code(lang, "--lang" if args.lang else f"{args.params}: eval.languages entry")
    if args.self_match:
        overrides["self_match"] = args.self_match
    if args.cache:
        overrides["cache"] = args.cache
    if args.memory_budget_mb is not None:
        if not args.memory_budget_mb > 0:
            raise EvalError(f"--memory-budget-mb must be a number of MiB > 0 (e.g. 256), got {args.memory_budget_mb:g}")
        overrides["memory_budget_mb"] = args.memory_budget_mb
    if args.rbo_p is not None:
        if not 0 < args.rbo_p < 1:
            raise EvalError(f"--rbo-p must be in (0, 1), got {args.rbo_p:g}")
        overrides["measures"] = tuple(f"RBO(p={args.rbo_p:g})" if m.startswith("RBO(") else m for m in settings.measures)
        if not any(m.startswith("RBO(") for m in settings.measures):
            overrides["measures"] += (f"RBO(p={args.rbo_p:g})",)
    return replace(settings, **overrides)


def checked_code(lang, what: str) -> str:
    """``lang`` when it is a language code (``languages.check_code``, the check of every CLI), else an EvalError."""
    from languages import LanguageError, check_code

    try:
        return check_code(lang, what)
    except LanguageError as exc:
        raise EvalError(str(exc)) from None


def languages_under(data: Path) -> list[str]:
    """The languages under ``data`` (``eval.testset.list_languages``), each folder name a language code."""
    from languages import LanguageError, languages_under as checked

    from eval.testset import list_languages

    try:
        return checked(data, list_languages)
    except LanguageError as exc:
        raise EvalError(f"{exc}; rename the folder to its code or move it out of {data}") from None


def without_timing_result(result):
    """A stored language result without its run-to-run timing (see ``without_timing``)."""
    from dataclasses import replace

    return replace(result, figures={k: v for k, v in result.figures.items() if k != "timing"})


def cmd_run(args: argparse.Namespace) -> int:
    from eval.evaluate import evaluate_one, testset_version
    from eval.memory import fix_mmap_threshold, mmap_threshold
    from eval.models import EmbeddingCache, load_model, model_record
    from eval.results import RunResult, find_stored
    import polars as pl

    from eval.testset import INCLUSIVE, read_testset, testset_digest


    settings = run_settings(args)
    data = Path(args.data)
    if not data.is_dir():
        problem = "not a folder" if data.exists() else "no such folder"
        raise EvalError(f"{data}: {problem}; give the test-set root (build one with python -m builder, or dvc pull a release)")
    available = languages_under(data)
    langs = list(settings.languages or available)
    missing = [lang for lang in langs if lang not in available]
    if missing:
        raise EvalError(f"{data}: no test set for {missing} (found: {available or 'nothing'})")
    if not args.out and not args.store_only:
        raise EvalError("give --out FOLDER for the results (or --store-only with --store)")
    if args.store_only and not args.store:
        raise EvalError("--store-only needs --store FOLDER")
    out = Path(args.out) if args.out else None
    if out is not None and out.exists() and not out.is_dir():
        raise EvalError(f"{out}: --out is a file; give a folder for the results")
    store = Path(args.store) if args.store else out / "store"
    if args.name is not None and len(settings.models) != 1:
        raise EvalError(f"--name names one model; give it with exactly one --model (got {len(settings.models)} models)")
    cache = EmbeddingCache(settings.cache)
    described = settings.describe()
    docs = []
    for name in settings.models:
        model = load_model(name, device=args.device, workers=args.encode_workers, display_name=args.name)
        fix_mmap_threshold(mmap_threshold(model.sparse))  # peak memory bounded by a block, not by how many (eval/memory.py)
        revision = model.meta.revision
        trained_for = model_record(name).languages
        results = []
        for lang in langs:
            if trained_for is not None and lang not in trained_for:  # the paper scores mUSE on ca and gl too
                print(f"note: {name} was not trained on {lang} (its record, eval/models.py: {', '.join(trained_for)}); "
                      "scored anyway", file=sys.stderr)
            ts = read_testset(data, lang, qrels="stream")
            stored = None if args.force else find_stored(store, model.meta.name, revision, lang)
            # A result stored before the extra forms were measured lacks their figures: rerun it.
            forms_measured = "forms" in stored.figures.get("counts", {}) if stored is not None else False
            if stored is not None and stored.matches(testset_version(ts, data), testset_digest(data, lang), described,
                                                     revision) \
                    and forms_measured == bool(ts.queries.filter(pl.col("gender") == INCLUSIVE).height):
                print(f"{model.meta.name} {lang}: stored result matches the test set, settings and model revision "
                      f"({store / stored.relative_path()}); not rerun (--force reruns)")
                results.append(stored)
                continue
            result = evaluate_one(data, ts, model, cache, settings, model_revision=revision, progress=not args.quiet)
            (result if args.timing else without_timing_result(result)).to_disk(store)
            results.append(result)
            _print_summary_line(result.model["name"], lang, result.figures, settings)
        docs.append(RunResult.from_languages(results, data).to_document(streamed_rows=True))
    if out is not None:
        write_outputs(docs, out, args.plots, args.summary, settings, timing=args.timing)
        print(f"wrote {out}")
    else:
        print(f"wrote {store}")
    return 0


def _print_summary_line(model: str, lang: str, block: dict, settings) -> None:
    corpus, m = next(iter(block["corpora"].items()))  # the masculine corpus unless eval.corpora leaves it out
    rbo = f" {settings.rbo_name} {_num(m['symmetry'][settings.rbo_name]['value'], '.4f')}" if settings.rbo_name else ""
    timing = block.get("timing")
    encoded = f"; encoded {timing['encoded']} of {timing['texts']} texts" if timing else ""
    first = next(iter(m["symmetry"]))
    print(
        f"{model} {lang}: {corpus} corpus {first} {_num(m['symmetry'][first]['value'], '.4f')}{rbo} "
        f"MAP F/M {_num(m['MAP']['feminine']['value'], '.4f')}/{_num(m['MAP']['masculine']['value'], '.4f')} "
        f"(MAP_M-MAP_F {_num(m['parity']['MAP_M-MAP_F']['value'], '+.4f')}; paired AP_M-AP_F "
        f"{_num(m['parity']['paired_AP_M-AP_F']['value'], '+.4f')}, p={_num(m['parity']['paired_AP_M-AP_F']['p_value'], '.3f')}) "
        f"(self-match {settings.self_match}{encoded})"
    )


def write_outputs(docs: list[dict], out: Path, plots, summary, settings=None, *, timing: bool = False) -> None:
    """Per model ``<model>__<version>.json`` (the ``RunResult`` document), its tables and worst pairs; then
    ``tables.md``, the plots and, with ``summary``, the metrics for DVC."""
    from eval.models import model_slug
    from eval.params import EvalSettings
    from eval.report import metrics_row_keys, summary_metrics, tables_markdown, worst_pairs_markdown, write_plots
    from eval.results import write_json

    for doc in docs:
        stem = f"{model_slug(doc['model']['name'])}__{doc['testset']['version']}"
        rbo_p = doc["settings"].get("rbo_p")
        if (doc["settings"]["self_match"], rbo_p) != (EvalSettings.self_match, EvalSettings().rbo_p):
            stem += f"__self-match-{doc['settings']['self_match']}_rbo-p{rbo_p:g}" if rbo_p is not None else \
                f"__self-match-{doc['settings']['self_match']}_no-rbo"  # never overwrite the default run's file
        stored = doc if timing else without_timing(doc)
        # The version comes from the test set's stats.json or manifest.json (or a stored result): checked as a
        # file name before anything is written, so that no crafted version writes outside --out.
        inside(out, f"{stem}.worst_pairs.md", f"the results of {doc['model']['name']} on test set version "
                                              f"{doc['testset']['version']!r}")
        write_json(out / f"{stem}.json", stored)
        _write(out / f"{stem}.md", tables_markdown([doc]))
        _write(out / f"{stem}.worst_pairs.md", worst_pairs_markdown(doc))
    _write(out / "tables.md", tables_markdown(docs))
    write_plots(docs, plots or out / "plots")
    if summary:
        _write_summary(Path(summary), summary_metrics(docs), metrics_row_keys(docs))


def cmd_collect(args: argparse.Namespace) -> int:
    """The run documents, tables, plots and metrics of every model in a store (or several), without scoring."""
    from eval.params import read_eval_settings
    from eval.results import RunResult, read_store

    # models in params.yaml's order (as eval run writes them), any other after them by name; read first, as every
    # command reads its params before any work
    order = {name: i for i, name in enumerate(read_eval_settings(args.params).models)}
    results = [r for store in args.store for r in read_store(store)]
    if not results:
        raise EvalError(f"{', '.join(args.store)}: no stored language results; run `python -m eval run --store ...` first")
    by_model: dict[str, list] = {}
    for r in results:
        by_model.setdefault(r.model["name"], []).append(r)
    docs = []
    for name, model_results in sorted(by_model.items(), key=lambda item: (order.get(item[0], len(order)), item[0])):
        langs = [r.lang for r in model_results]
        repeated = sorted({lang for lang in langs if langs.count(lang) > 1})
        if repeated:
            raise EvalError(f"the stores hold {name} on {repeated} more than once (other revisions or test sets); "
                            "remove the stale files or collect one store per revision")
        roots = {r.testset_root for r in model_results}
        docs.append(RunResult.from_languages(sorted(model_results, key=lambda r: r.lang), roots.pop() if len(roots) == 1 else "+".join(sorted(roots))).to_document())
    write_outputs(docs, Path(args.out), args.plots, args.summary)
    print(f"wrote {args.out} ({len(docs)} models, {len(results)} model x language results)")
    return 0


@contextlib.contextmanager
def _results_as_written(paths) -> Iterator[None]:
    """A results or audit file of the right kind and schema whose content is not what `eval run` writes (a
    string where a mapping belongs, a key missing deep inside, a list for a dict) fails while it is read or
    rendered, wherever that is: one error naming the files given, never a traceback. The checks of the
    readers (eval.results, eval.site) name the file and the key where they know them."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        detail = f"{type(exc).__name__}: {exc}"
        detail = detail if len(detail) <= 160 else detail[:160] + "…"
        raise EvalError(f"{', '.join(str(p) for p in paths)}: not results as `python -m eval run` (or "
                        f"`eval audit`) writes them ({detail}); regenerate them, or leave the broken file out") from None


def cmd_compare(args: argparse.Namespace) -> int:
    from eval.report import check_plotted, forms_findings_markdown, load_results, tables_markdown, write_plots

    with _results_as_written(args.results):
        docs = load_results(args.results)
        text = forms_findings_markdown(docs) if args.forms else tables_markdown(docs)
        if args.out:  # written before printing: a reader that closes the pipe early must not cost the files
            check_plotted(docs, args.results)  # every refusal before the first file is written
            out = Path(args.out)
            _write(out / "tables.md", text)
            write_plots(docs, out / "plots")
    _print_to_pipe(text)
    if args.out:
        print(f"wrote {out}", file=sys.stderr)
    return 0


def _print_to_pipe(text: str) -> None:
    """Print, and stop quietly when the reader has gone (``| head -1``), as cat and grep do."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's documented recipe: point stdout at devnull so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def cmd_report(args: argparse.Namespace) -> int:
    from eval.site import build_site

    with _results_as_written(args.results):
        index = build_site(args.results, args.out)
    print(f"wrote {index} (open it in a browser: file://{index.resolve()})")
    return 0


def language_packs(path: Path) -> list[str]:
    """params.yaml's top-level ``language_packs`` folders (searched before the built-in packs)."""
    from config import ConfigError, read_params

    try:
        folders = read_params(path, required=False).get("language_packs") or []
    except ConfigError as exc:
        raise EvalError(str(exc)) from None
    if not isinstance(folders, list) or any(not isinstance(f, str) for f in folders):
        raise EvalError(f"{path}: language_packs is {folders!r}; expected a list of folders")
    return folders


def cmd_audit(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from eval.audit import run_audit
    from eval.audit_report import audit_markdown, write_audit_plots
    from eval.models import EmbeddingCache, check_model_names, model_slug
    from eval.params import read_audit_settings, read_eval_settings

    eval_settings = read_eval_settings(args.params)
    settings = read_audit_settings(args.params, eval_settings)
    data = Path(args.data)
    if not data.is_dir():
        raise EvalError(f"{data}: no such folder; build a test set first (python -m builder ...) or dvc pull a release")
    for lang in args.lang or settings.languages or ():
        checked_code(lang, "--lang" if args.lang else f"{args.params}: audit.languages entry")
    available = languages_under(data)
    langs = args.lang or settings.languages or available
    missing = [lang for lang in langs if lang not in available]
    if not data.is_dir() or missing or not langs:
        raise EvalError(f"{data}: no test set for {missing or langs or 'any language'} (found: {available or 'nothing'})")
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else list(settings.models)
    check_model_names(models, "--models" if args.models else f"{args.params}: audit.models")
    overrides = {key: getattr(args, key) for key in ("k", "rho", "tau") if getattr(args, key) is not None}
    try:
        settings = replace(settings, **overrides)
    except (TypeError, ValueError) as exc:
        raise EvalError(f"--k/--rho/--tau: {exc}") from None
    # the audit's "served" needs acc@k at its k (and parity acc@1): measured beside eval.measures
    eval_settings = eval_settings.with_measures(f"acc@{settings.k}")
    cache_dir = args.cache or eval_settings.cache
    doc, runs = run_audit(data, langs, models, EmbeddingCache(cache_dir), eval_settings, settings,
                          mitigation=settings.mitigation and not args.no_mitigation, progress=not args.quiet,
                          language_packs=language_packs(Path(args.params)))
    out = Path(args.out)
    version = doc["testset"]["version"]
    _write(inside(out, f"audit__{version}.json", f"the audit of test set version {version!r}"),
           json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    _write(out / "audit.md", audit_markdown(doc))
    if not args.document_only:
        for run in runs:  # without run-to-run timings, as eval run writes: the same inputs give the same bytes
            _write(inside(out / "runs", f"{model_slug(run['model']['name'])}__{version}.json",
                          f"the run of test set version {version!r}"),
                   json.dumps(without_timing(run), indent=1, ensure_ascii=False) + "\n")
        write_audit_plots(doc, out / "plots")
    print(f"served: {doc['audit_settings']['served']}")
    for lang, block in sorted(doc["languages"].items()):
        for corpus, c in block["corpora"].items():
            ex = c["exclusion"]
            f, m = ex["feminine_excluded"], ex["masculine_excluded"]
            print(f"{lang} {corpus} corpus (k={ex['k']}, rho={ex['rho']:g}, tau={ex['tau']}): feminine excluded "
                  f"{f['count']}/{f['n']}, masculine excluded {m['count']}/{m['n']}")
        if "mitigation" in block:
            print(f"{lang} mitigation: {block['mitigation']['pairs_identical_after']} of {block['mitigation']['pairs']} pairs became "
                  "identical strings (symmetry 1.0 by construction, left out of the effect estimate)")
    print(f"wrote {out}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    """The declared models, one line each (eval/models.py MODEL_RECORDS)."""
    from eval.models import MODEL_RECORDS

    for record in MODEL_RECORDS.values():
        print(record.describe())
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=program("eval"), description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="score models on a test set (DIR/<lang>/queries.parquet, corpus.parquet, qrels.tsv)")
    run.add_argument("--data", required=True, help="test-set root holding <lang>/ folders")
    run.add_argument("--model", action="append", help="model (repeatable): a name of python -m eval models, a local "
                     "sentence-transformers folder, a Hugging Face id, or module:callable (your own encoder: an object "
                     "with encode(texts, role)); default: params eval.models")
    run.add_argument("--name", help="the name the results carry for the one --model given (a folder, Hugging Face id or "
                     "module:callable; default: the folder's last two parts, the id, module:callable)")
    run.add_argument("--lang", action="append", help="language (repeatable); default: params eval.languages or all found")
    run.add_argument("--out", help="folder for results JSON, tables and worst-pairs reports")
    run.add_argument("--store", help="folder of the per model, revision and language results "
                     "(<store>/<model>/<revision>/<lang>.json; default OUT/store): a combination stored with the same "
                     "test set (version and content digest), settings and model revision is not rerun")
    run.add_argument("--force", action="store_true", help="rerun every combination even when a matching one is stored")
    run.add_argument("--store-only", action="store_true", help="only write the store (no --out documents, tables or "
                     "plots; python -m eval collect puts stores together), as the DVC grid stages do")
    run.add_argument("--summary", help="also write key figures for dvc metrics: a .json file (every model, "
                     "language and corpus) or a folder (one flat file per model and language, masculine corpus)")
    run.add_argument("--plots", help="folder for PNG plots (default OUT/plots)")
    params_option(run)  # on every subcommand that reads params: run, collect, audit (config/cli.py)
    run.add_argument("--cache", help="embedding cache folder (default params eval.cache)")
    run.add_argument("--self-match", choices=["drop", "keep"], help="self-match policy (default params eval.self_match)")
    run.add_argument("--rbo-p", type=float, help="RBO persistence (default params eval.rbo_p)")
    run.add_argument("--memory-budget-mb", type=float, help="working memory per block of queries in MiB; "
                     "bounds peak memory, never changes a result (default params eval.memory_budget_mb)")
    run.add_argument("--device", default="cpu", help="torch device for sentence-transformers models: cpu, cuda, cuda:N, mps "
                     "(default cpu; the numpy-port models run on the CPU only)")
    run.add_argument("--encode-workers", type=int, default=1, help="encoding processes for sentence-transformers models "
                     "(a multi-process pool on --device; default 1)")
    run.add_argument("--timing", action="store_true",
                     help="keep wall-clock timings and cache counts in the results JSON (off by default: the same test "
                          "set and settings then give the same bytes, so dvc repro leaves the tree clean)")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.set_defaults(func=cmd_run)
    collect = sub.add_parser("collect", help="documents, tables, plots and metrics from stored language results",
                             description="Put the stored model x language results (eval run --store) together: per model "
                                         "<model>__<version>.json, tables.md, plots and, with --summary, the DVC metrics.")
    collect.add_argument("store", nargs="+", help="store folders (searched at any depth for <lang>.json results)")
    collect.add_argument("--out", required=True, help="folder for the results documents and tables")
    collect.add_argument("--plots", help="folder for PNG plots (default OUT/plots)")
    collect.add_argument("--summary", help="metrics file or folder, as for eval run")
    params_option(collect, help="its eval.models give the models' order in tables and plots")
    collect.set_defaults(func=cmd_collect)
    compare = sub.add_parser("compare", help="put several results files in one set of tables",
                             description="Print the tables of several results files (Markdown) and, with --out, write "
                                         "OUT/tables.md and OUT/plots/.")
    compare.add_argument("results", nargs="+", help="results JSON files written by python -m eval run")
    compare.add_argument("--out", help="also write tables.md and plots/ here")
    compare.add_argument("--forms", action="store_true",
                         help="print the extra query forms' findings tables instead (per language and model: MAP of M/F/doublet/"
                              "neomorpheme, AO vs M and vs F, paired gaps; docs/forms.md)")
    compare.set_defaults(func=cmd_compare)
    report = sub.add_parser("report", help="write a static site of results (and an audit) to browse",
                            description="Write SITE/index.html with its figures in SITE/figures/: the paper-style tables, "
                                        "symmetry, MAP and paired-gap plots, the least symmetric pairs side by side, and the "
                                        "audit when an audit file is given. No network needed; open it from file://.")
    report.add_argument("results", nargs="+", metavar="RESULTS",
                        help="results JSON files of python -m eval run and at most one audit JSON of python -m eval audit, "
                             "or folders holding them (their *.json, e.g. results/runs results/audit)")
    report.add_argument("--out", required=True, metavar="SITE", help="folder for index.html and figures/")
    report.set_defaults(func=cmd_report)
    audit = sub.add_parser("audit", help="several models at once: correlated asymmetries, systemic exclusion, mitigation")
    audit.add_argument("--data", required=True, help="test-set root holding <lang>/ folders")
    audit.add_argument("--models", help="comma-separated model names, at least two (default params audit.models)")
    audit.add_argument("--lang", action="append", help="language (repeatable); default: params audit.languages or all found")
    audit.add_argument("--out", required=True, help="folder for the audit JSON, audit.md, per-model runs and plots")
    audit.add_argument("--k", type=int, help="top k for 'served' (default params audit.k)")
    audit.add_argument("--rho", type=float, help="AP threshold for 'served' (default params audit.rho)")
    audit.add_argument("--tau", type=int, help="models that must exclude a pair (default params audit.tau)")
    audit.add_argument("--no-mitigation", action="store_true", help="skip the normalisation before/after")
    params_option(audit)
    audit.add_argument("--cache", help="embedding cache folder (default params eval.cache)")
    audit.add_argument("--quiet", action="store_true", help="no progress bars")
    audit.add_argument("--document-only", action="store_true",
                       help="write the audit JSON and audit.md only, no runs/ and no plots/ (the pipeline's: its runs are "
                            "results/runs, its figures the report's; the two files are committed to git)")
    audit.set_defaults(func=cmd_audit)
    models = sub.add_parser("models", help="list the declared models: name, how it loads, licence, languages",
                            description="The models eval/models.py declares (MODEL_RECORDS), one line each; any other "
                                        "local sentence-transformers folder or Hugging Face id loads too.")
    models.set_defaults(func=cmd_models)
    return parser


def _settings_cache(args: argparse.Namespace) -> str:
    """The embedding cache folder the command used when --cache was not given (params eval.cache)."""
    from eval.params import EvalSettings, read_eval_settings

    try:
        return read_eval_settings(getattr(args, "params", "params.yaml")).cache
    except EvalError:
        return EvalSettings.cache


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import sqlite3  # after parsing too: 2-6 ms of `--help`

    from eval.testset import TestSetError  # after parsing: --help and a usage error load no polars

    def corrupt_cache(exc: BaseException) -> str:  # only the embedding cache is SQLite
        from config.files import storage_problem

        cache = getattr(args, "cache", None) or "the embedding cache (params eval.cache)"
        folder = Path(getattr(args, "cache", None) or _settings_cache(args))
        problem = storage_problem(folder / "cache.sqlite", exc)
        if problem is not None:  # the disk or the folder, not the cache: deleting it would not help
            return (f"{cache}: the embedding cache cannot be written: {problem} ({scrub(exc)}); free space or "
                    "pass another --cache (the embeddings stored so far are intact)")
        return (f"{cache}: the embedding cache is corrupt or locked ({scrub(exc)}); delete it (embeddings are "
                "recomputed) or pass another --cache")

    # `eval run ... | head -1` still writes all of --out: run_command keeps a closed stdout harmless
    return run_command(lambda: args.func(args), errors=(EvalError, TestSetError),
                       more={sqlite3.DatabaseError: corrupt_cache}, paths=" (--out, --cache, --data, --plots)",
                       interrupted="interrupted: embeddings computed so far are cached")


if __name__ == "__main__":
    sys.exit(main())
