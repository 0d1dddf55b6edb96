"""The maintainers' review: every English id of a language read against its English title, and the result written
through the corrections path (docs/review.md).

``review_pack`` lists what a reviewer reads for each English id of a build: the English title, where it occurs,
the titles of the queries it is relevant to (its sense), the dataset's given translation (the alignment's
candidate and how sure it was), the machine translation where there is one, the build's proposed forms with
their verdict and flags, and ESCO's labels of the same occupation where the English title is an ESCO English
label (a hint written by people, not a score). One JSON object per English id.

A round's readings are one file, ``corrections/review/<round>/<lang>.jsonl`` (``read_readings``): per English id
and reader, what the reader decided (keep the build's forms, fix them, or drop the source), with the texts
written out and a reason. ``decide_readings`` takes the decision per id: the first reading (its strict re-read
of the kept titles where there is one), unless the independent second reading differs, in which case the third
reading settles it; an id whose readings disagree and that nobody settled is a tie. ``review_lines`` writes the
decisions as correction lines of the round (docs/FORMAT.md ``review``): every line carries the texts the review
certified, so a later change of the builder never changes them. ``review_agreement`` measures the two
independent readings: Krippendorff's alpha on keep / fix / drop and on the exact text.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import polars as pl

from annotation import AnnotationError
from builder import corrections as corrections_format

def melo_root() -> Path | None:
    """A MELO copy (ESCO's labels; the folder holding processed/melo/): $GJT_MELO_DIR, else ../shared/data/melo, as
    builder/esco.py finds it, but never downloaded: a hint is no reason to go online (None when neither is here)."""
    from builder.esco import DEFAULT_MELO_DIR, ENV_MELO_DIR, is_melo_copy

    given = os.environ.get(ENV_MELO_DIR)
    root = Path(given) if given else DEFAULT_MELO_DIR
    return root if is_melo_copy(root) else None


def _labels(root: Path, lang: str) -> dict[str, list[str]]:
    """URI → labels (preferred first) of ``lang``'s pinned MELO dataset, read and checked by builder/esco.py's one
    MELO reader (ISCO groups left out); a damaged file is one AnnotationError naming file and line."""
    from builder.errors import SourceError
    from builder.esco import read_melo

    try:
        return {o.uri: [o.preferred, *o.alternatives] for o in read_melo(root, lang).occupations}
    except SourceError as exc:
        raise AnnotationError(f"{exc} (ESCO hints of the review pack)") from None


def esco_hints(lang: str, english_titles: list[str]) -> dict[str, list[str]]:
    """English title → ESCO's labels in ``lang`` of every occupation holding it as an English label
    (case-insensitive exact match); {} where MELO has no pinned dataset of that language or no copy is here."""
    from builder.esco import MELO, MELO_ENGLISH

    root = melo_root()
    if root is None or lang not in MELO["datasets"]:
        return {}
    english = _labels(root, MELO_ENGLISH)
    by_label: dict[str, set[str]] = defaultdict(set)
    for uri, labels in english.items():
        for label in labels:
            by_label[label.lower()].add(uri)
    target = _labels(root, lang)
    out = {}
    for title in english_titles:
        labels = [x for uri in sorted(by_label.get(title.lower(), ())) for x in target.get(uri, [])]
        if labels:
            out[title] = list(dict.fromkeys(labels))[:12]
    return out


def esco_agreement(pack: list[dict]) -> dict[str, int]:
    """How often the build's forms are ESCO's own labels (issue 36 item 5): over the pack's ids with ESCO hints,
    how many have the built masculine, the built feminine, both, among their ESCO labels (a dual form counted as its
    two sides; compared case- and space-insensitively, as the builder normalises titles)."""
    from builder.esco import dual_sides
    from builder.strip import normalise

    out = {"ids": len(pack), "with_esco": 0, "masculine": 0, "feminine": 0, "both": 0}
    for x in pack:
        if not x.get("esco"):
            continue
        labels = {normalise(side) for label in x["esco"] for side in dual_sides(label)[0]}
        m, f = (normalise(t) if t else None for t in x["built"])
        out["with_esco"] += 1
        out["masculine"] += m in labels
        out["feminine"] += f in labels
        out["both"] += m in labels and f in labels
    return out


def review_pack(data: str | Path, lang: str, source: str | Path | None = None) -> list[dict]:
    """One object per English id of the build ``data/<lang>`` (translations.parquet, raw_translations.parquet,
    alignment.parquet when the route uses the given translation), sorted by id."""
    from annotation.translations import read_parquet, read_translations  # the checked reader push translations uses

    folder = Path(data) / lang
    t = read_translations(data, lang)
    raw = read_parquet(folder / "raw_translations.parquet")
    route = dict(zip(raw["source_id"], raw["route"])) if "route" in raw.columns else {}
    candidate: dict[str, dict] = {}
    if (folder / "alignment.parquet").is_file():
        for a in read_parquet(folder / "alignment.parquet").iter_rows(named=True):
            candidate.setdefault(a["source_id"], a)
    queries_of = _relevant_queries(source, t)
    hints = esco_hints(lang, t["source_text"].to_list())
    pack = []
    for row in t.sort("source_id").iter_rows(named=True):
        sid = row["source_id"]
        r = route.get(sid, "mt")
        item = {"id": sid, "english": row["source_text"],
                "occurs": "query+corpus" if row["in_queries"] and row["in_corpus"] else
                ("query" if row["in_queries"] else "corpus"),
                "route": r}
        if queries_of.get(sid):
            item["relevant_to"] = queries_of[sid][:3]
        a = candidate.get(sid)
        if a is not None:
            item["given"] = a["reference_text"]
            item["given_confident"] = bool(a["confident"])
        if r == "mt":
            item["mt"] = [row["mt_masculine"], row["mt_feminine"]]
        item["built"] = [row["title_masculine"], row["title_feminine"]]
        item["verdict"] = row["verdict"]
        flags = [f for f in (row["flags"] or []) if f not in ("masculine_base",)]
        if flags:
            item["flags"] = flags
        if hints.get(row["source_text"]):
            item["esco"] = hints[row["source_text"]]
        pack.append(item)
    return pack


def _relevant_queries(source: str | Path | None, t: pl.DataFrame) -> dict[str, list[str]]:
    """English corpus id → the English query titles it is relevant to (its sense), from the English source."""
    if source is None:
        return {}
    source = Path(source)
    titles = dict(zip(t["source_id"], t["source_text"]))
    out: dict[str, list[str]] = defaultdict(list)
    for line in (source / "annotations.tsv").read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] in titles:
            out[parts[2]].append(titles[parts[0]])
    return out


def write_pack(pack: list[dict], out: str | Path) -> Path:
    """The pack, one JSON object a line, replaced whole (config.files)."""
    from config.files import write_file_atomically

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    return write_file_atomically(out, "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in pack))


# --- the reader's side: a compact text of the pack, and the verdicts' check --------------------------------------

ACTIONS = ("keep", "fix", "drop")
MARKINGS = corrections_format.MARKINGS


def _forms(pair: list) -> str:
    m, f = pair
    if m is None and f is None:
        return "(none)"
    if m == f:
        return f"{m} (one form)"
    return f"{m or '(none)'} / {f or '(none)'}"


def render_line(x: dict) -> str:
    """One English id as a reader reads it, on one line (``|``-separated)."""
    parts = [x["id"], f"EN: {x['english']}", x["occurs"]]
    if x.get("relevant_to"):
        parts.append("rel: " + "; ".join(x["relevant_to"]))
    if "given" in x:
        parts.append(f"given{'' if x['given_confident'] else ' (UNSURE candidate)'}: {x['given']}")
    if "mt" in x:
        parts.append(f"mt: {_forms(x['mt'])}")
    parts.append(f"BUILT: {_forms(x['built'])} [{x['verdict']}{'; ' + ','.join(x['flags']) if x.get('flags') else ''}]")
    if x.get("esco"):
        parts.append("esco: " + "; ".join(x["esco"][:6]))
    return " | ".join(parts)


def check_verdicts(path: str | Path, pack: list[dict]) -> list[str]:
    """The problems of a verdict file against its pack (empty: every line valid); a verdict is one JSON object a
    line: ``id``, ``a`` (keep | fix | drop), ``m``, ``f``, ``g`` (a fix), ``why`` (a fix or a drop), ``rule``."""
    by_id = {x["id"]: x for x in pack}
    problems, seen = [], set()
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            v = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON ({exc.msg})")
            continue
        sid = v.get("id")
        if sid not in by_id:
            problems.append(f"{where}: unknown id {sid!r}")
            continue
        if sid in seen:
            problems.append(f"{where}: id {sid!r} given twice")
        seen.add(sid)
        a = v.get("a")
        if a not in ACTIONS:
            problems.append(f"{where}: a={a!r}; expected one of {ACTIONS}")
            continue
        built = by_id[sid]["built"]
        if a == "keep" and built == [None, None]:
            problems.append(f"{where}: keep, but the build has no title for {sid!r}: fix (write the forms) or drop")
        if a == "keep" and by_id[sid]["verdict"] in ("unverified", "unaligned", "not_a_person", "failed"):
            problems.append(f"{where}: keep of a {by_id[sid]['verdict']} record (no item): fix it (write the forms) or drop")
        if a == "fix":
            g = v.get("g")
            if g not in MARKINGS:
                problems.append(f"{where}: g={g!r}; expected one of {MARKINGS}")
            m, f = v.get("m"), v.get("f")
            for key, text in (("m", m), ("f", f)):
                if text is not None and (not isinstance(text, str) or text != text.lower() or text != text.strip()
                                         or not text):
                    problems.append(f"{where}: {key}={text!r}; lowercase text without outer spaces expected")
            if g == "gendered" and (not m or not f or m == f):
                problems.append(f"{where}: gendered needs two different forms m and f")
            if g == "neutral" and (not m or m != f):
                problems.append(f"{where}: neutral needs m == f")
            if g == "masculine_only" and not m:
                problems.append(f"{where}: masculine_only needs m")
            if g == "feminine_only" and not f:
                problems.append(f"{where}: feminine_only needs f")
        if a in ("fix", "drop") and not (isinstance(v.get("why"), str) and v["why"].strip()):
            problems.append(f"{where}: a {a} needs a one-line reason 'why'")
    missing = [sid for sid in by_id if sid not in seen]
    if missing:
        problems.append(f"{path}: {len(missing)} id(s) without a verdict, e.g. {missing[:5]}")
    return problems


# --- a round's readings: decisions, correction lines, agreement ----------------------------------------------

PASSES = ("first", "recheck", "second", "adjudication")
READING_FIELDS = ("id", "reader", "pass", "action", "masculine", "feminine", "gender_marking", "flag", "reason",
                  "built")
OPTIONAL_READING_FIELDS = ("rule", "pick")


def reading_from_verdict(v: dict, built: list, reader: str, pass_: str) -> dict:
    """A verdict of a reader's file (``check_verdicts``' format) as a reading, its texts written out."""
    m, f = built
    if v["a"] == "keep":
        marking = ("neutral" if m == f else "masculine_only" if f is None else "feminine_only" if m is None
                   else "gendered")
        out = {"action": "keep", "masculine": m, "feminine": f if marking != "neutral" else m,
               "gender_marking": marking, "flag": None, "reason": v.get("why")}
    elif v["a"] == "drop":
        out = {"action": "drop", "masculine": None, "feminine": None, "gender_marking": None,
               "flag": v.get("flag") or "not_a_job_title", "reason": v["why"]}
    else:
        g, vm, vf = v["g"], v.get("m"), v.get("f")
        if g == "neutral":
            vf = vm
        elif g == "masculine_only":
            vf = None
        elif g == "feminine_only":
            vm = None
        out = {"action": "fix", "masculine": vm, "feminine": vf, "gender_marking": g, "flag": None,
               "reason": v["why"]}
        if (vm, vf) == (m, f):
            out["action"] = "keep"  # a "fix" that writes the build's own forms keeps them
    reading = {"id": v["id"], "reader": reader, "pass": pass_, **out, "built": [m, f]}
    for key in OPTIONAL_READING_FIELDS:
        if v.get(key) is not None:
            reading[key] = v[key]
    return reading


def read_readings(path: str | Path, lang: str | None = None) -> list[dict]:
    """The readings of a round (``corrections/review/<round>/<lang>.jsonl``), each checked: one AnnotationError
    naming file:line for the first that breaks the format."""
    from builder.errors import CorrectionsError

    path = Path(path)
    if not path.is_file():
        raise AnnotationError(f"{path}: no such readings file; give the round's readings "
                              "(corrections/review/<round>/<lang>.jsonl, docs/review.md)")
    out, seen = [], set()
    try:
        rows = list(corrections_format._json_lines(path, "readings file"))
    except CorrectionsError as exc:
        raise AnnotationError(str(exc)) from None
    for lineno, obj, where in rows:
        if not isinstance(obj, dict):
            raise AnnotationError(f"{where}: expected a JSON object (a reading, docs/review.md)")
        missing = [k for k in READING_FIELDS if k not in obj]
        unknown = [k for k in obj if k not in READING_FIELDS and k not in OPTIONAL_READING_FIELDS]
        if missing or unknown:
            raise AnnotationError(f"{where}: " + (f"missing field(s) {missing}" if missing else f"unknown field(s) {unknown}")
                                  + f"; a reading has {list(READING_FIELDS)} (docs/review.md)")
        if obj["pass"] not in PASSES:
            raise AnnotationError(f"{where}: pass {obj['pass']!r}; expected one of {PASSES}")
        if obj["action"] not in ACTIONS:
            raise AnnotationError(f"{where}: action {obj['action']!r}; expected one of {ACTIONS}")
        if obj["action"] in ("fix", "drop") and not (isinstance(obj["reason"], str) and obj["reason"].strip()):
            raise AnnotationError(f"{where}: a {obj['action']} needs its reason")
        key = (obj["id"], obj["reader"], obj["pass"])
        if key in seen:
            raise AnnotationError(f"{where}: id {obj['id']!r} read twice by {obj['reader']!r} in pass {obj['pass']!r}")
        seen.add(key)
        # the line it would become is checked by the corrections format's one check
        try:
            corrections_format.check_line(_line(obj, lang or "xx", "r", "x"), where, None)
        except CorrectionsError as exc:
            raise AnnotationError(str(exc)) from None
        out.append({**obj, "line": lineno})
    return out


def outcome(r: dict) -> tuple:
    """What a reading decides, to compare readings: the forms (or the drop) and the marking."""
    if r["action"] == "drop":
        return ("drop",)
    return (r["masculine"], r["feminine"], r["gender_marking"])


def decide_readings(readings: list[dict]) -> tuple[dict[str, dict], list[str]]:
    """Per id, the reading that decides (the first reading, its re-read where there is one; where the second
    reading differs, the adjudication), and the ids whose readings disagree with no adjudication (ties)."""
    by_id: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in readings:
        by_id[r["id"]][r["pass"]] = r
    decided, ties = {}, []
    for sid, passes in sorted(by_id.items()):
        first = passes.get("recheck") or passes.get("first")
        second = passes.get("second")
        if first is None:
            first, second = second, None
        if first is None:
            ties.append(sid)  # only an adjudication: nothing to settle
            continue
        if second is not None and outcome(second) != outcome(first):
            if "adjudication" not in passes:
                ties.append(sid)
                continue
            decided[sid] = passes["adjudication"]
        else:
            decided[sid] = first
    return decided, ties


def _line(r: dict, lang: str, round_: str, submitted_at: str, annotators: list[str] | None = None) -> dict:
    line = {"kind": "translation", "lang": lang, "source_id": r["id"], "record_id": f"{lang}-review-{round_}-{r['id']}",
            "masculine": r["masculine"], "feminine": r["feminine"], "gender_marking": r["gender_marking"],
            "flag": r["flag"], "annotators": annotators or [r["reader"]], "submitted_at": submitted_at,
            "review": round_}
    if r.get("reason"):
        line["reason"] = " ".join(str(r["reason"]).split())
    return line


def review_lines(decided: dict[str, dict], readings: list[dict], lang: str, round_: str,
                 submitted_at: str) -> list[dict]:
    """The correction lines of the round: one per decided id, naming every reader whose reading gave the decided
    outcome."""
    agreeing: dict[str, list[str]] = defaultdict(list)
    for r in readings:
        if r["id"] in decided and outcome(r) == outcome(decided[r["id"]]) and r["reader"] not in agreeing[r["id"]]:
            agreeing[r["id"]].append(r["reader"])
    return [_line(r, lang, round_, submitted_at, sorted(agreeing[sid])) for sid, r in sorted(decided.items())]


def same_outcome(a: dict, b: dict) -> bool:
    """Two correction lines of one source that say the same: the same forms, marking and flag."""
    return all(a.get(k) == b.get(k) for k in ("masculine", "feminine", "gender_marking", "flag"))


def label_of(r: dict) -> str:
    """keep (the build's forms), fix or drop: what a reading did."""
    if r["action"] == "drop":
        return "drop"
    return "keep" if [r["masculine"], r["feminine"]] == list(r["built"]) else "fix"


def read_agreement(path: str | Path) -> list[dict]:
    """The figures of a ``<lang>.review-agreement.jsonl`` ([] when there is none)."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise AnnotationError(f"{path}:{lineno}: not valid JSON ({exc.msg}); delete the file and import "
                                      "every round again") from None
    return out


def review_agreement(readings: list[dict], round_: str) -> list[dict]:
    """The independent readings' agreement (the first reading as first read, and the second), on the ids both
    read: Krippendorff's alpha (nominal) and Cohen's kappa on keep / fix / drop (``keep_fix_drop``) and on the
    exact outcome (``text``), in the agreement files' format (kind ``review``)."""
    from annotation.agreement import cohen_kappa, krippendorff_alpha_nominal

    first = {r["id"]: r for r in readings if r["pass"] == "first"}
    second = {r["id"]: r for r in readings if r["pass"] == "second"}
    both = sorted(set(first) & set(second))
    if not both:
        return []
    out = []
    for question, label in (("keep_fix_drop", label_of), ("text", lambda r: repr(outcome(r)))):
        a, b = [label(first[i]) for i in both], [label(second[i]) for i in both]
        units = {i: {"first": x, "second": y} for i, x, y in zip(both, a, b)}
        alpha, kappa = krippendorff_alpha_nominal(units), cohen_kappa(a, b)
        out.append({"kind": "review", "round": round_, "question": question, "records": len(both),
                    "alpha": "undefined" if alpha != alpha else round(alpha, 4),
                    "kappa": "undefined" if kappa != kappa else round(kappa, 4)})
    return out


def readings_from_verdicts(pack: list[dict], verdict_files: list[Path], reader: str, pass_: str) -> list[dict]:
    """A reader's verdict files (``check_verdicts``' format, every line checked against the pack) as readings."""
    if pass_ not in PASSES:
        raise AnnotationError(f"--pass {pass_!r}; expected one of {PASSES}")
    by_id = {x["id"]: x for x in pack}
    out = []
    for path in verdict_files:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AnnotationError(f"{path}: cannot read the verdicts ({exc})") from None
        problems = [p for p in check_verdicts(path, pack) if "without a verdict" not in p]
        if problems:
            raise AnnotationError(f"{problems[0]} (and {len(problems) - 1} more); fix the verdicts first"
                                  if len(problems) > 1 else problems[0])
        # check_verdicts has refused what is not JSON, an unknown id and an id given twice
        out += [reading_from_verdict(v, by_id[v["id"]]["built"], reader, pass_)
                for v in map(json.loads, filter(str.strip, text.splitlines()))]
    return out


def write_readings(readings: list[dict], path: str | Path) -> Path:
    """The round's readings file, replaced whole (config.files), one reading a line, sorted by id and pass."""
    from config.files import write_file_atomically

    order = {p: i for i, p in enumerate(PASSES)}
    rows = sorted(readings, key=lambda r: (r["id"], order[r["pass"]], r["reader"]))
    text = "".join(json.dumps({k: r[k] for k in (*READING_FIELDS, *OPTIONAL_READING_FIELDS) if k in r},
                              ensure_ascii=False) + "\n" for r in rows)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return write_file_atomically(path, text)
