"""``python -m annotation``: push translations | push relevance | pull | rule | serve. Reads params.yaml's annotation:."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from annotation import AnnotationError, relevance, review, rules, translations, vectors
from annotation.corrections import (KIND_RELEVANCE, key_of, merge, read_corrections, validate_line, write_corrections,
                                    write_jsonl_atomic)
from annotation.params import AnnotationParams, load_params, with_overrides
from annotation.pull import (
    agreement, decide, fetch_submitted, relevance_answers, relevance_line, translation_answers, translation_line,
    translation_wrong_reports,
)
from annotation.push import PushReport
from annotation.serve import DEFAULT_PORT, serve
from annotation.server import connect, ensure_workspace, find_dataset
from builder import corrections as corrections_format
from builder.errors import CorrectionsError
from config.cli import params_option, program, run_command
from eval.errors import EvalError, ModelNotFoundError
from eval.testset import TestSetError, read_testset
from languages import LanguageError, check_code


def push_translations(data: str | Path, lang: str, params: AnnotationParams, *,
                      params_path: str | Path = "params.yaml") -> PushReport:
    specs = translations.record_specs(translations.read_translations(data, lang), lang)
    embedder = vectors.load_embedder(params.vectors.model if params.vectors else None, params_path)
    server = connect()
    return vectors.push_dataset(server, params, translations.dataset_name(lang, params.dataset_version),
                                translations.settings(params.min_submitted), specs, translations.VECTOR_TITLES, embedder)


def push_relevance(data: str | Path, lang: str, models: list[str], params: AnnotationParams,
                   corrections: str | Path | None = None, *, params_path: str | Path = "params.yaml") -> PushReport:
    """Pool the models' rankings (eval's, with the embedding cache and memory budget of ``params_path``'s eval:)
    and push the unlabelled pairs and an audit sample."""
    ts = read_testset(data, lang)
    known = {
        (c["query_source_id"], c["doc_source_id"])
        for c in read_corrections(corrections or corrections_path(params, lang), lang) if c["kind"] == KIND_RELEVANCE
    }
    embedder = vectors.load_embedder(params.vectors.model if params.vectors else None, params_path)
    # Check the server and the key before minutes of ranking, not after.
    server = connect()
    try:
        rankings = relevance.model_rankings(ts, models, params.relevance.pool_depth, params=params_path)
    except ModelNotFoundError as exc:
        raise AnnotationError(f"--models: {exc}") from None
    except EvalError as exc:  # eval's settings (params.yaml eval:), not the names given
        raise AnnotationError(str(exc)) from None
    pooled = relevance.pool_candidates(ts, rankings, params.relevance.pool_depth, known)
    audit = relevance.audit_candidates(ts, params.relevance.audit_sample, params.relevance.seed)
    specs = relevance.record_specs(ts, pooled + audit)
    report = vectors.push_dataset(server, params, relevance.dataset_name(lang, params.dataset_version),
                                  relevance.settings(params.relevance.min_submitted), specs, relevance.VECTOR_TITLES,
                                  embedder)
    print(f"pool: {len(pooled)} unlabelled pairs from the top {params.relevance.pool_depth} of {', '.join(models)}; "
          f"audit: {len(audit)} carried-over labels")
    return report


def corrections_path(params: AnnotationParams, lang: str) -> Path:
    return Path(params.corrections_dir) / f"{lang}.jsonl"


def pull(lang: str, params: AnnotationParams, out: str | Path | None = None, review: str | None = None,
         adjudicators: tuple[str, ...] = ()) -> dict:
    """Write decided responses to the corrections file (merged with what it held); return a summary. ``review``:
    the answers are the maintainers' review round of that name (docs/review.md), not a person's corrections."""
    out = Path(out or corrections_path(params, lang))
    old = read_corrections(out, lang)  # fail on a broken file (or another language's) before any work
    if review is not None:
        try:
            corrections_format.check_round(review, "--review")
        except CorrectionsError as exc:
            raise AnnotationError(str(exc)) from None
    server = connect()
    workspace = ensure_workspace(server, params.workspace)
    decided_lines, ties, agreements, wrong = [], [], {}, []
    skipped = {"drafts": 0, "discarded": 0}
    kinds = (
        ("translation", translations.dataset_name(lang, params.dataset_version), translation_answers, translation_line),
        ("relevance", relevance.dataset_name(lang, params.dataset_version), relevance_answers, relevance_line),
    )
    for kind, name, answers, to_line in kinds:
        dataset = find_dataset(server, name, workspace)
        if dataset is None:
            continue
        fetched = fetch_submitted(server, dataset)
        records = fetched.records
        skipped["drafts"] += fetched.drafts
        skipped["discarded"] += fetched.discarded
        agreements[kind] = agreement(records, answers)
        if kind == "relevance":
            wrong = translation_wrong_reports(records)
        for record in records:
            decided, tied = decide(record, answers, adjudicators)
            if decided is None:
                ties.append({"kind": kind, "record_id": record.record_id, "questions": tied,
                             "votes": {v.annotator: answers(v) for v in record.votes}})
            else:
                line = to_line(record, lang, decided, review) if kind == "translation" else to_line(record, lang, decided)
                try:  # the builder's reader, before anything is written: a malformed answer never reaches the file
                    validate_line(line, f"Argilla dataset {name}, record {record.record_id}", lang)
                except AnnotationError as exc:
                    raise AnnotationError(f"{exc}; fix or discard that answer in Argilla and pull again "
                                          f"(nothing was written to {out})") from None
                decided_lines.append(line)
    merged = merge(old, decided_lines)
    write_corrections(merged.lines, out, lang)
    # Only questions that two annotators answered on some record: the rest have no figure to keep.
    figures = [{"kind": kind, "question": a.question, "records": a.units, "alpha": _figure(a.alpha),
                "kappa": _figure(a.kappa)} for kind, rows in agreements.items() for a in rows if a.units]
    # Side files of this pull: a stale one would send reviewers to settled records, so a pull without
    # entries removes it.
    for suffix, entries in ((".ties.jsonl", ties), (".translation_wrong.jsonl", wrong), (".agreement.jsonl", figures)):
        side_path = out.with_suffix(suffix)
        if entries:
            write_jsonl_atomic(entries, side_path)
        else:
            side_path.unlink(missing_ok=True)
    return {"out": out, "decided": len(decided_lines), "ties": ties, "total": len(merged.lines), "agreement": agreements,
            "translation_wrong": wrong, "new": merged.new, "changed": merged.changed, "kept": merged.kept,
            "older": merged.older, **skipped}


def _figure(value: float | None) -> float | str | None:
    """An agreement figure for JSON: null where it does not apply (kappa needs exactly two annotators),
    "undefined" for NaN (one label only)."""
    if value is None:
        return None
    return "undefined" if math.isnan(value) else round(value, 4)


def _agreement_value(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "undefined (one label only)" if math.isnan(value) else f"{value:.3f}"


def _print_pull(summary: dict) -> None:
    print(f"{summary['out']}: {summary['decided']} decided record(s) pulled: {summary['new']} new, "
          f"{summary['changed']} changed, {summary['kept']} kept as pulled before (the same answers)"
          + (f", {summary['older']} older than the file's line (the file's kept)" if summary["older"] else "")
          + f"; {summary['total']} line(s) in the file")
    if summary["drafts"] or summary["discarded"]:
        print(f"skipped: {summary['drafts']} draft and {summary['discarded']} discarded response(s) (only submitted "
              "answers are pulled: submit a draft to have it pulled)")
    for kind, rows in summary["agreement"].items():
        for a in rows:
            alpha, kappa = (_agreement_value(v) for v in (a.alpha, a.kappa))
            print(f"agreement {kind}/{a.question}: records with ≥2 annotators {a.units}, "
                  f"Krippendorff alpha (nominal) {alpha}, Cohen kappa {kappa}")
    if summary.get("translation_wrong"):
        print(f"{len(summary['translation_wrong'])} relevance answer(s) mark a translation wrong, listed in "
              f"{Path(summary['out']).with_suffix('.translation_wrong.jsonl')}: correct those titles in the "
              f"translations dataset")
    if summary["ties"]:
        print(f"{len(summary['ties'])} tie(s) for review (not applied), listed in "
              f"{Path(summary['out']).with_suffix('.ties.jsonl')}:")
        for t in summary["ties"]:
            print(f"  {t['record_id']}: tied on {', '.join(t['questions'])}")


def _print_rule(outcome, args) -> None:
    result, written = outcome

    def show(t) -> str:
        return (f"  {t.source_id} ({t.english}): " + " · ".join(
            f"{t.before[g] or '(none)'} → {t.after[g] or '(none)'}" for g in rules.GENDERS if t.before[g] != t.after[g]))

    verb = "will change in the next build" if written else "would change"
    print(f"rule '{args.find}' → '{args.replace}'" + (f" (English word '{args.english}')" if args.english else "")
          + f": {len(result.changed)} record(s) of this build {verb}")
    review_items = {t.source_id for t in result.review_items}
    for t in result.changed:
        print(show(t) + ("  (still a review item: a person decides it in Argilla, shown the fixed title)"
                         if t.source_id in review_items else ""))
    for label, touches in (("already corrected by a person, not changed", result.corrected),):
        if touches:
            print(f"{len(touches)} record(s) {label}:")
            for t in touches:
                print(show(t))
    if not result.matched:
        print("no title of this build holds the term")
    if written:
        print(f"rule {result.rule.id} written to {written}: every build applies it, also to titles new since this "
              "build (stats.json corrections.rules lists what it changed)")
    else:
        print("dry run: nothing written; add --apply --annotator NAME to write the rule")


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return int(text)


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (a whole number from 1 to 65535)")
    return int(text)


def _params(args: argparse.Namespace) -> AnnotationParams:
    """The annotation: section of --params with the command line's overrides."""
    if getattr(args, "lang", None) is not None:
        check_code(args.lang)  # before it names a file or an Argilla dataset (languages.check_code: every CLI's check)
    return with_overrides(load_params(args.params), args.params, pool_depth=getattr(args, "depth", None),
                          workspace=args.workspace or None, dataset_version=args.dataset_version or None)


def cmd_push_translations(args: argparse.Namespace) -> None:
    params = _params(args)
    print(push_translations(args.data, args.lang, params, params_path=args.params))


def cmd_push_relevance(args: argparse.Namespace) -> None:
    params = _params(args)
    print(push_relevance(args.data, args.lang, list(args.models or params.relevance.models), params,
                         params_path=args.params))


def cmd_pull(args: argparse.Namespace) -> None:
    _print_pull(pull(args.lang, _params(args), args.out, args.review, tuple(args.adjudicator or ())))


def cmd_rule(args: argparse.Namespace) -> None:
    params = _params(args)
    _print_rule(rules.run_rule(translations.read_translations(args.data, args.lang), args.lang,
                               Path(args.out or corrections_path(params, args.lang)), args.find,
                               args.replace, args.english, args.annotator, args.apply), args)


def review_import(lang: str, params: AnnotationParams, readings: str | Path, round_: str,
                  submitted_at: str, out: str | Path | None = None) -> dict:
    """The round's decided readings merged into the corrections file (newer lines, a person's Argilla answers
    among them, win), and the two independent readings' agreement in ``<lang>.review-agreement.jsonl`` beside it.
    Ties (readings that disagree, nobody settled) refuse the import, listed in ``<lang>.review-ties.jsonl``."""
    out = Path(out or corrections_path(params, lang))
    old = read_corrections(out, lang)
    rows = review.read_readings(readings, lang)
    decided, ties = review.decide_readings(rows)
    ties_path = out.with_name(f"{lang}.review-ties.jsonl")
    if ties:
        write_jsonl_atomic([{"id": sid, "readings": [{k: r[k] for k in review.READING_FIELDS}
                                                      for r in rows if r["id"] == sid]} for sid in ties], ties_path)
        raise AnnotationError(f"{readings}: {len(ties)} id(s) whose readings disagree and no third reading settles "
                              f"(e.g. {ties[0]!r}), listed in {ties_path}; add their adjudication readings and import "
                              f"again (nothing was written to {out})")
    ties_path.unlink(missing_ok=True)
    lines = review.review_lines(decided, rows, lang, round_, submitted_at)
    # A later round that reads a title again and keeps what the file's line already says leaves that line (its
    # round, readers and reason) as it is: only what the round changes becomes a line of its own.
    held = {key_of(line): line for line in old}
    changes = [line for line in lines if key_of(line) not in held or not review.same_outcome(held[key_of(line)], line)]
    confirmed = len(lines) - len(changes)
    merged = merge(old, changes)
    write_corrections(merged.lines, out, lang)
    figures = review.review_agreement(rows, round_)
    # one file for every round: this round's figures replace its own, an earlier round's stay
    agreement_path = out.with_name(f"{lang}.review-agreement.jsonl")
    earlier = [f for f in review.read_agreement(agreement_path) if f.get("round") != round_]
    write_jsonl_atomic(earlier + figures, agreement_path)
    counts = {a: sum(1 for r in decided.values() if review.label_of(r) == a) for a in review.ACTIONS}
    return {"out": out, "decided": len(decided), **counts, "confirmed": confirmed, "merged": merged,
            "agreement": figures}


def cmd_review_pack(args: argparse.Namespace) -> None:
    check_code(args.lang)
    pack = review.review_pack(args.data, args.lang, args.source)
    path = review.write_pack(pack, args.out)
    print(f"{path}: {len(pack)} English ids of {args.data}/{args.lang} to read (docs/review.md)")
    a = review.esco_agreement(pack)
    if a["with_esco"]:
        print(f"ESCO: {a['with_esco']} of the ids are ESCO English labels; the built masculine is one of their ESCO "
              f"labels for {a['masculine']}, the feminine for {a['feminine']}, both for {a['both']}")


def cmd_review_import(args: argparse.Namespace) -> None:
    from datetime import datetime, timezone

    params = _params(args)
    stamp = args.submitted_at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    result = review_import(args.lang, params, args.readings, args.round, stamp, args.out)
    m = result["merged"]
    print(f"{result['out']}: review {args.round}: {result['decided']} English ids decided ({result['keep']} kept as "
          f"built, {result['fix']} corrected, {result['drop']} dropped): {m.new} new line(s), {m.changed} replaced, "
          f"{m.kept} as imported before, {m.older} older than the file's line (the file's kept), "
          f"{result['confirmed']} confirming the file's line (left as it is)")
    _print_review_agreement(result["agreement"])


def cmd_review_reading(args: argparse.Namespace) -> None:
    check_code(args.lang)
    try:
        pack = [json.loads(line) for line in Path(args.pack).read_text(encoding="utf-8").splitlines() if line.strip()]
    except OSError as exc:
        raise AnnotationError(f"{args.pack}: cannot read the pack ({exc.strerror or exc}); write it with "
                              "`python -m annotation review pack`") from None
    except ValueError as exc:
        raise AnnotationError(f"{args.pack}: not a pack of JSON lines ({exc}); write it with "
                              "`python -m annotation review pack`") from None
    files = sorted(Path(args.verdicts).glob("verdicts-*.jsonl")) if Path(args.verdicts).is_dir() else [Path(args.verdicts)]
    if not files:
        raise AnnotationError(f"{args.verdicts}: no verdicts-*.jsonl there")
    new = review.readings_from_verdicts(pack, files, args.reader, args.pass_)
    out = Path(args.readings)
    old = [{k: v for k, v in r.items() if k != "line"} for r in review.read_readings(out, args.lang)] if out.is_file() else []
    replaced = {(r["id"], r["pass"]) for r in new}
    kept = [r for r in old if (r["id"], r["pass"]) not in replaced]
    review.write_readings(kept + new, out)
    print(f"{out}: {len(new)} reading(s) of {args.reader} ({args.pass_}) from {len(files)} file(s); "
          f"{len(kept) + len(new)} in the file")


def cmd_review_agreement(args: argparse.Namespace) -> None:
    figures = review.review_agreement(review.read_readings(args.readings, args.lang), Path(args.readings).parent.name)
    if not figures:
        raise AnnotationError(f"{args.readings}: no id was read by both the first and the second reading")
    _print_review_agreement(figures)


def _print_review_agreement(figures: list[dict]) -> None:
    for f in figures:
        print(f"agreement review {f['round']}/{f['question']}: {f['records']} ids read twice, Krippendorff alpha {f['alpha']}, "
              f"Cohen kappa {f['kappa']}")


def cmd_serve(args: argparse.Namespace) -> None:
    serve(args.port)  # needs no params file and no server settings


PARAMS_HELP = "params file (annotation: section)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program("annotation"),
        description="Push translations and relevance pairs to Argilla, pull people's answers into corrections/<lang>.jsonl, "
                    "or serve a local Argilla to try it. Settings: the annotation: section of params.yaml.")
    # --params before the subcommand (as always) or on every subcommand that reads params (config/cli.py)
    params_option(parser, help=PARAMS_HELP)
    parser.add_argument("--workspace", help="Argilla workspace (default: params annotation.workspace)")
    parser.add_argument("--version", dest="dataset_version", help="test-set version in the dataset names")
    sub = parser.add_subparsers(dest="command", required=True)
    push = sub.add_parser("push", help="create or update an Argilla dataset")
    push_sub = push.add_subparsers(dest="what", required=True)
    pt = push_sub.add_parser("translations", help="one record per English source title, to correct")
    params_option(pt, before_subcommand=True, help=PARAMS_HELP)
    pt.add_argument("--data", required=True, help="root of the built test sets (holds <lang>/translations.parquet)")
    pt.add_argument("--lang", required=True)
    pt.set_defaults(func=cmd_push_translations)
    pr = push_sub.add_parser("relevance", help="pooled query/document pairs without a label, plus an audit sample")
    params_option(pr, before_subcommand=True, help=PARAMS_HELP)
    pr.add_argument("--data", required=True, help="root of the built test sets")
    pr.add_argument("--lang", required=True)
    pr.add_argument("--models", nargs="+", help="ranking models to pool (default: params)")
    pr.add_argument("--depth", type=_positive_int, help="pool depth k (default: params)")
    pr.set_defaults(func=cmd_push_relevance)
    pl = sub.add_parser("pull", help="write submitted responses to corrections/<lang>.jsonl")
    params_option(pl, before_subcommand=True, help=PARAMS_HELP)
    pl.add_argument("--lang", required=True)
    pl.add_argument("--out", help="corrections file (default: <corrections_dir>/<lang>.jsonl)")
    pl.add_argument("--review", metavar="ROUND", help="the answers are the maintainers' review round ROUND "
                    "(docs/review.md): its lines carry review: ROUND, its items status reviewed")
    pl.add_argument("--adjudicator", metavar="NAME", action="append", help="on a tie, this annotator's answers "
                    "decide a record they answered (the review's third reading); repeat it for an order of precedence")
    pl.set_defaults(func=cmd_pull)
    ru = sub.add_parser("rule", help="fix a term in every title holding it (dry run; --apply writes the rule to "
                                     "corrections/<lang>.rules.jsonl, which every build applies)")
    params_option(ru, before_subcommand=True, help=PARAMS_HELP)
    ru.add_argument("--data", required=True, help="root of the built test sets (holds <lang>/translations.parquet)")
    ru.add_argument("--lang", required=True)
    ru.add_argument("--find", required=True, help="the words to replace, as they appear in the titles ('de conta')")
    ru.add_argument("--replace", required=True, help="what to write instead ('de contas')")
    ru.add_argument("--english", help="only titles whose English title holds this word ('account')")
    ru.add_argument("--annotator", help="who reviewed the rule (required with --apply)")
    ru.add_argument("--apply", action="store_true", help="write the rule (default: list the records only)")
    ru.add_argument("--out", help="corrections file; the rule goes beside it, <lang>.rules.jsonl (default: "
                                  "<corrections_dir>/<lang>.jsonl)")
    ru.set_defaults(func=cmd_rule)
    rv = sub.add_parser("review", help="the maintainers' review (docs/review.md): a language's reading pack, and "
                                       "a round's readings imported into corrections/<lang>.jsonl")
    rv_sub = rv.add_subparsers(dest="what", required=True)
    rp = rv_sub.add_parser("pack", help="one line per English id of a build, for the readers")
    rp.add_argument("--data", required=True, help="root of the built test sets")
    rp.add_argument("--lang", required=True)
    rp.add_argument("--source", help="the English source folder (its qrels show each title's sense)")
    rp.add_argument("--out", required=True, help="the pack to write (JSON lines)")
    rp.set_defaults(func=cmd_review_pack)
    rr = rv_sub.add_parser("reading", help="add a reader's verdict files to the round's readings file")
    rr.add_argument("--lang", required=True)
    rr.add_argument("--pack", required=True, help="the pack the reader read (review pack)")
    rr.add_argument("--verdicts", required=True, help="a verdict file, or a folder of verdicts-*.jsonl")
    rr.add_argument("--reader", required=True, help="the reader's name")
    rr.add_argument("--pass", dest="pass_", required=True, choices=review.PASSES)
    rr.add_argument("--readings", required=True, help="corrections/review/<round>/<lang>.jsonl (created or extended)")
    rr.set_defaults(func=cmd_review_reading)
    ra = rv_sub.add_parser("agreement", help="the two independent readings' agreement (alpha, kappa)")
    ra.add_argument("--lang", required=True)
    ra.add_argument("--readings", required=True)
    ra.set_defaults(func=cmd_review_agreement)
    ri = rv_sub.add_parser("import", help="decide a round's readings and write them as correction lines")
    params_option(ri, before_subcommand=True, help=PARAMS_HELP)
    ri.add_argument("--lang", required=True)
    ri.add_argument("--round", required=True, help="the round's name, e.g. 0.5.0-r1 (items' provenance review:<round>)")
    ri.add_argument("--readings", required=True, help="corrections/review/<round>/<lang>.jsonl")
    ri.add_argument("--submitted-at", help="the lines' time (default: now, UTC)")
    ri.add_argument("--out", help="corrections file (default: <corrections_dir>/<lang>.jsonl)")
    ri.set_defaults(func=cmd_review_import)
    sv = sub.add_parser("serve", help="run a local Argilla (redis, in-memory search, argilla-server) until Ctrl-C, "
                                      "to try annotation; prints the URL, user, password and API key")
    sv.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"argilla-server port (default {DEFAULT_PORT})")
    sv.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command(lambda: args.func(args), errors=(AnnotationError, TestSetError, LanguageError),
                       interrupted="interrupted: records already sent or pulled are kept; run the command again")
