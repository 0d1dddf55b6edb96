"""What people compare: Markdown tables shaped like the paper's Tables 2-5, PNG plots, the worst-pairs
report (the paper's Table 6) and a flat metrics file for DVC. Inputs are results documents
(``eval.evaluate.evaluate``), one per model."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

from config.files import write_file_atomically

CORPUS_TITLES = {"masculine": "masculine corpora", "feminine": "feminine corpora",
                 "doublet": "doublet corpora (titles as ads write them)"}


def check_language_keys(doc: dict, path: str | Path) -> None:
    """A results or audit document's ``languages`` keys, each a language code (the check of every CLI's --lang):
    they name figure files, page anchors and table rows, of `eval compare` and `eval report` alike."""
    from eval.errors import EvalError
    from languages import is_code

    languages = doc.get("languages")
    if not isinstance(languages, dict):
        raise EvalError(f"{path}: 'languages' is not a mapping of language codes; give files written by python -m eval")
    for lang in languages:
        if not is_code(lang):
            raise EvalError(f"{path}: language {str(lang)[:60]!r} is not a language code (a lowercase ISO 639 code such "
                            "as pt); give files written by python -m eval run / audit")


def load_results(paths: list[str | Path]) -> list[dict]:
    from eval.errors import EvalError
    from eval.results import RunResult, read_json

    docs = []
    for p in paths:
        doc = read_json(p)
        RunResult.from_document(doc, p)  # the keys of a run and a schema this toolkit reads, else a clear error
        check_language_keys(doc, p)
        docs.append(doc)
    if not docs:
        raise EvalError("no results files given")
    # One table must not mix rankings made under different rules: say which files differ.
    for key in ("self_match", "rbo_p"):
        seen = {str(Path(p)): doc["settings"].get(key) for p, doc in zip(paths, docs)}
        if len(set(map(str, seen.values()))) > 1:
            raise EvalError(f"results were made with different {key} settings ({seen}); compare files made with the same eval settings")
    return docs


def _finite(value, digits: int) -> str:
    """A figure's value formatted; NaN or an infinity is refused (eval writes an undefined figure as null, shown
    "–"): a damaged file's ``NaN`` must not reach a table as "nan" (``eval compare`` names the files)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"a figure is {value} where a number or null belongs")
    return f"{value:.{digits}f}"


def _fmt(fig: dict | None, digits: int = 4) -> str:
    if not fig or fig.get("value") is None:
        return "–"
    return _finite(fig["value"], digits)


def _fmt_ci(fig: dict | None, digits: int = 3) -> str:
    if not fig or fig.get("value") is None:
        return "–"
    lo, hi = fig["ci95"]
    return f"{_finite(fig['value'], digits)} [{_finite(lo, digits)}, {_finite(hi, digits)}]"


JOB_TITLES = "job-title similarity dataset"


def source_of(doc: dict) -> str:
    """The source a results document scored (``testset_source`` as eval run recorded it per language): ESCO and
    its version, else the job-title dataset. The paper's values belong beside the job-title figures only."""
    names = set()
    for block in doc["languages"].values():
        src = block.get("source") if isinstance(block, dict) else None
        names.add(f"{src.get('name', '?').upper()} {src.get('version', '')} ({src.get('corpus_design', '')} corpus)".strip()
                  if isinstance(src, dict) else JOB_TITLES)
    return " + ".join(sorted(names))


def by_source(docs: list[dict]) -> dict[str, list[dict]]:
    """The documents per source, the job-title dataset first."""
    groups: dict[str, list[dict]] = {}
    for d in docs:
        groups.setdefault(source_of(d), []).append(d)
    return dict(sorted(groups.items(), key=lambda kv: (kv[0] != JOB_TITLES, kv[0])))


def _langs(docs: list[dict]) -> list[str]:
    return sorted({lang for d in docs for lang in d["languages"]})


def _rbo_name(doc: dict) -> str:
    """The measure the worst pairs are sorted by: RBO(p) when the results have it, else the first graded
    pair measure."""
    if doc["settings"].get("rbo_p") is not None:
        return f"RBO(p={doc['settings']['rbo_p']:g})"
    return pair_measure_names(doc)[0]


def pair_measure_names(doc: dict, graded: bool = True) -> list[str]:
    """The pair measures of a results document, in its order (the keys of a corpus's ``symmetry``);
    ``graded``: only those with a value per pair (not yes/no ones like identical_top1, shown with parity)."""
    for block in doc["languages"].values():
        for corpus in block["corpora"].values():
            names = list(corpus["symmetry"])
            if not graded:
                return names
            rows = {r["corpus"]: r for r in block.get("per_pair", [])}
            row = next(iter(rows.values()), None)
            return [n for n in names if not (row is not None and isinstance(row.get(n), bool)) and n != "identical_top1"]
    return []


# Where the query measures' figures sit in a corpus block: AP's mean is MAP (its own tables), acc@k under
# accuracy (the parity table shows acc@1); any other section holds measures that get a table of their own.
SHOWN_QUERY_SECTIONS = ("MAP", "accuracy")
CORPUS_KEYS = ("documents", "symmetry", "parity", "queries_without_relevant", "forms")


def extra_query_measures(doc: dict) -> list[tuple[str, str]]:
    """``(section, name)`` of the query measures beyond AP and acc@k, in the document's order."""
    for block in doc["languages"].values():
        for corpus in block["corpora"].values():
            return [(section, name) for section, figures in corpus.items()
                    if section not in SHOWN_QUERY_SECTIONS + CORPUS_KEYS and isinstance(figures, dict) for name in figures]
    return []


def _gaps(doc: dict) -> list:
    """The gaps (``eval.measures.Gap``) of a results document, in its order: those of its first corpus block."""
    from eval.measures import gaps_in

    for block in doc["languages"].values():
        for corpus in block["corpora"].values():
            return gaps_in(corpus["parity"])
    return []


def _cell(doc: dict, lang: str, *keys: str) -> dict | None:
    node = doc["languages"].get(lang)
    for k in keys:
        if node is None:
            return None
        node = node.get(k)
    return node


# The paper's published figures (DESIGN.md §2), to mark beside ours: Table 2, AO (the paper's "RBO"),
# feminine vs masculine queries over the masculine corpora; Table 4, MAP (F queries, M queries) over the
# masculine corpora. The values are in each language's pack (paper_table2_ao, paper_table4_map); these are
# the paper's models that have them.
PAPER_TABLE2_MODELS = ("m-use", "m-use-l", "m-e5", "m-e5-l", "minilm")
PAPER_TABLE4_MODELS = ("m-use", "minilm")


@functools.lru_cache(maxsize=None)
def _pack(lang: str):
    """The declaration of lang, None where no pack declares it (then the paper has no figure for it)."""
    from languages import LanguageError, available, load

    if lang not in available():
        return None
    try:
        return load(lang)
    except LanguageError as exc:
        from eval.errors import EvalError

        raise EvalError(str(exc)) from None


def paper_ao(model_name: str, lang: str) -> float | None:
    """The paper's Table-2 AO of our model (when it is the paper's model) on lang, else None."""
    pack, paper = _pack(lang), paper_model(model_name)
    return pack.paper_table2_ao.get(paper) if pack and paper else None


def paper_map(model_name: str, lang: str) -> tuple[float, float] | None:
    """The paper's Table-4 MAP (feminine, masculine queries) of our model on lang, else None."""
    pack, paper = _pack(lang), paper_model(model_name)
    return pack.paper_table4_map.get(paper) if pack and paper else None


def paper_model(name: str) -> str | None:
    """The paper's name for our model ``name`` when it is the same weights (its record's ``paper_name``: only these
    get the paper's values beside them; m-e5-small-q4 is the small e5 quantised, not the paper's
    multilingual-e5-base), else None."""
    from eval.models import record_of_result

    record = record_of_result(name)
    return record.paper_name if record else None


# One colour and one marker per model, the same in every eval and audit figure and on the site. The
# Okabe-Ito colours stay apart for colour-blind readers; the markers differ in shape, not only in size.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B", "#7F7F7F", "#BCBD22")
MARKERS = ("o", "^", "s", "X", "v", "P", "D", "*", "h", "<")  # neighbours differ in outline, not only in angle


def _builtin_models() -> tuple[str, ...]:
    """The project's models, which keep their slot whatever else is plotted with them: the built-in records, in
    their order."""
    from eval.models import MODEL_RECORDS

    return tuple(r.name for r in MODEL_RECORDS.values() if r.kind == "builtin")


def model_styles(names: list[str]) -> dict[str, dict[str, str]]:
    """``{name: {"color", "marker"}}``: known models in fixed slots; any other model in the first free slot
    from a stable hash of its name, so a model looks the same in every figure that shows it."""
    import hashlib

    slots: dict[str, int] = {}
    known = _builtin_models()
    for name in dict.fromkeys(names):
        if name in known:
            slots[name] = known.index(name)
    for name in sorted(set(names) - set(slots)):
        start = int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16) % len(PALETTE)
        free = [s for s in range(len(PALETTE)) if s not in slots.values()]
        # first free slot at or after the hash, wrapping; more models than colours share slots
        slots[name] = min(free, key=lambda s: (s - start) % len(PALETTE)) if free else start
    return {name: {"color": PALETTE[slot], "marker": MARKERS[slot]} for name, slot in slots.items()}


def text_colour_on(rgba) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba`` (WCAG relative luminance)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(float(c)) for c in rgba[:3])
    return "white" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.18 else "black"


GENDER_COLUMNS = (("feminine", "F"), ("masculine", "M"), ("neutral", "N"))


@dataclass
class Table:
    """One table of the report, rendered as Markdown (tables.md) and as HTML (the site) from the same cells.
    A cell is a figure ``{"value", "ci95", ...}`` (shown with its interval), a p value ``("p", figure)``,
    or text. ``kind`` of a row: "model", "paper" (the paper's published value) or "n"."""

    anchor: str
    title: str
    note: str
    columns: list[str]
    rows: list[tuple[str, str, list]] = field(default_factory=list)


def _md_cell(cell) -> str:
    if isinstance(cell, tuple) and cell[0] == "p":
        return _fmt_p(cell[1])
    if isinstance(cell, dict) or cell is None:
        return _fmt_ci(cell)
    return str(cell)


def _header(columns: list[str]) -> str:
    return "| " + " | ".join(columns) + " |\n|---|" + "---|" * (len(columns) - 1) + "\n"


def paper_tables(docs: list[dict]) -> list[Table]:
    """The paper's tables, models x languages: 2-3 symmetry (AO, the paper's "RBO", and RBO_ext) over the
    masculine / feminine corpora, 4-5 MAP per query gender over the masculine / feminine corpora, then
    parity (MAP and acc@1 gaps with the paired tests, identical top-1). Every cell has its 95% interval;
    the paper's own values (Tables 2 and 4) are rows of their own, under the model they belong to."""
    langs = _langs(docs)
    tables = []
    glosses = {"AO": "the paper's \"RBO\" formula"}
    for number, corpus in ((2, "masculine"), (3, "feminine")):
        for suffix, metric in zip("abcdefghij", pair_measure_names(docs[0])):
            what = glosses.get(metric, "RBO_ext, top-weighted" if metric.startswith("RBO(") else "pair measure")
            t = Table(f"table-{number}{suffix}", f"Table {number}{suffix}: {metric} ({what}), feminine vs masculine queries over "
                      f"{CORPUS_TITLES[corpus]}", "Value with bootstrap 95% interval; n = query pairs.",
                      ["model"] + [lang.upper() for lang in langs])
            for d in docs:
                t.rows.append(("model", d["model"]["name"], [_cell(d, lang, "corpora", corpus, "symmetry", metric) for lang in langs]))
                if (number, metric) == (2, "AO") and paper_model(d["model"]["name"]) in PAPER_TABLE2_MODELS \
                        and source_of(d) == JOB_TITLES:
                    values = [paper_ao(d["model"]["name"], lang) for lang in langs]
                    t.rows.append(("paper", f"paper: {paper_model(d['model']['name'])} (Table 2)",
                                   [f"{v:.4f}" if v is not None else "–" for v in values]))
            t.rows += n_rows(docs, [lambda d, lang=lang: _cell(d, lang, "corpora", corpus, "symmetry", metric) for lang in langs])
            tables.append(t)
    for number, corpus in ((4, "masculine"), (5, "feminine")):
        t = Table(f"table-{number}", f"Table {number}: MAP over {CORPUS_TITLES[corpus]}, feminine (F) / masculine (M) / neutral (N) queries",
                  "Value with bootstrap 95% interval over queries; n = queries with a relevant title.",
                  ["model"] + [f"{lang.upper()} {g}" for lang in langs for _, g in GENDER_COLUMNS])
        for d in docs:
            t.rows.append(("model", d["model"]["name"], [_cell(d, lang, "corpora", corpus, "MAP", g) for lang in langs for g, _ in GENDER_COLUMNS]))
            if number == 4 and paper_model(d["model"]["name"]) in PAPER_TABLE4_MODELS and source_of(d) == JOB_TITLES:
                cells = []
                for lang in langs:
                    f, m = paper_map(d["model"]["name"], lang) or (None, None)
                    cells += ["–" if f is None else f"{f:.4f}", "–" if m is None else f"{m:.4f}", "–"]
                t.rows.append(("paper", f"paper: {paper_model(d['model']['name'])} (Table 4)", cells))
        t.rows += n_rows(docs, [lambda d, lang=lang, g=g: _cell(d, lang, "corpora", corpus, "MAP", g)
                                    for lang in langs for g, _ in GENDER_COLUMNS])
        tables.append(t)
    for section, name in extra_query_measures(docs[0]):
        for corpus in ("masculine", "feminine"):
            t = Table(f"measure-{_anchor(name)}-{corpus}", f"{name} over {CORPUS_TITLES[corpus]}, feminine (F) / masculine (M) / neutral (N) queries",
                      f"Mean {name} with bootstrap 95% interval over queries; n = queries with a relevant title.",
                      ["model"] + [f"{lang.upper()} {g}" for lang in langs for _, g in GENDER_COLUMNS])
            for d in docs:
                t.rows.append(("model", d["model"]["name"], [_cell(d, lang, "corpora", corpus, section, name, g)
                                                             for lang in langs for g, _ in GENDER_COLUMNS]))
            t.rows += n_rows(docs, [lambda d, lang=lang, g=g: _cell(d, lang, "corpora", corpus, section, name, g)
                                        for lang in langs for g, _ in GENDER_COLUMNS])
            tables.append(t)
    gaps = _gaps(docs[0])
    for corpus in ("masculine", "feminine"):
        t = Table(f"parity-{corpus}", f"Parity over {CORPUS_TITLES[corpus]}",
                  "MAP_M − MAP_F is the difference of the MAP figures above (Table 4/5: all masculine vs all feminine "
                  "queries); the paired columns average the masculine minus the feminine query's value over query "
                  "pairs, with a two-sided paired randomisation test (p). Positive: masculine queries served better.",
                  ["model", "lang",
                   *(c for g in gaps for c in (f"{g.measure.mean_name}_M − {g.measure.mean_name}_F",
                                               f"paired {g.measure}_M − {g.measure}_F", "p")),
                   "identical top-1", "pairs"])
        for d in docs:
            for lang in langs:
                par = _cell(d, lang, "corpora", corpus, "parity") or {}
                if not par:
                    continue
                t.rows.append(("model", d["model"]["name"], [
                    lang.upper(),
                    *(c for g in gaps for c in (par.get(g.difference_key), par.get(g.paired_key), ("p", par.get(g.paired_key)))),
                    _cell(d, lang, "corpora", corpus, "symmetry", "identical_top1"),
                    str(((par.get(gaps[0].paired_key) if gaps else None) or {}).get("n", "–")),
                ]))
        tables.append(t)
    tables += form_tables(docs)
    return tables


def n_rows(docs: list[dict], figure_of: list) -> list[tuple[str, str, list]]:
    """The n row(s) of a table whose columns are ``figure_of`` (``figure_of[i](doc)``: the figure of a model in
    column i): each model's own counts. One row "n" where every model with a figure in a column counts the same
    there (one test set: the common case); else a row per model, "n: <model>" (models run on other languages or
    other versions of a set count other queries: one model's counts under another's figures would be wrong)."""
    counts = [[(of(d) or {}).get("n") for of in figure_of] for d in docs]
    columns = list(zip(*counts))
    if all(len({n for n in column if n is not None}) <= 1 for column in columns):
        return [("n", "n", [str(next((n for n in column if n is not None), "–")) for column in columns])]
    return [("n", f"n: {d['model']['name']}", ["–" if n is None else str(n) for n in row]) for d, row in zip(docs, counts)]


# The extra query forms (doublet, neomorpheme) in the order the format lists them.
EXTRA_FORMS = ("doublet", "neomorpheme")


def form_tables(docs: list[dict]) -> list[Table]:
    """Per language and corpus variant with extra query forms: the masculine, feminine, doublet and neomorpheme
    queries side by side per model: MAP, acc@1, each graded pair measure against the masculine and the feminine
    query of the same pair, and each graded gap's paired form (AP's, and nDCG@10's when measured) with its p
    value (docs/eval.md "Extra query forms")."""
    tables = []
    measures = pair_measure_names(docs[0])
    gaps = [g for g in _gaps(docs[0]) if not g.measure.boolean]
    for lang in _langs(docs):
        corpora = list(dict.fromkeys(c for d in docs for c, block in (_cell(d, lang, "corpora") or {}).items() if block.get("forms")))
        for corpus in corpora:
            t = Table(f"forms-{lang}-{corpus}", f"{lang.upper()}, {CORPUS_TITLES.get(corpus, corpus)}: query forms side by side",
                      "Value with bootstrap 95% interval. vs M / vs F: the form's ranking against the masculine / feminine "
                      "query of the same occupation (the M row's vs F is the M × F symmetry of Tables 2–3). Gap: paired "
                      "mean of AP_form − AP_M (AP_form − AP_F) over those pairs, p from the paired randomisation test; "
                      "the M row's gap vs F is paired AP_M − AP_F. n: queries with a relevant title.",
                      ["model", "form", "MAP", "acc@1",
                       *(f"{m} vs {side}" for side in ("M", "F") for m in measures),
                       *(c for g in gaps for c in (f"{g.measure} gap vs M", "p", f"{g.measure} gap vs F", "p")), "n"])
            for d in docs:
                block = _cell(d, lang, "corpora", corpus)
                if not block:
                    continue
                sym, par = block["symmetry"], block["parity"]
                for gender, short in (("masculine", "M"), ("feminine", "F")):
                    m_gaps = [par.get(g.paired_key) if short == "M" else None for g in gaps]
                    t.rows.append(("model", d["model"]["name"], [
                        gender, block["MAP"].get(gender), (block.get("accuracy") or {}).get("acc@1", {}).get(gender),
                        *(("–" if side == short else sym.get(m)) for side in ("M", "F") for m in measures),
                        *(c for gap in m_gaps for c in ("–", "–", gap or "–", ("p", gap) if gap else "–")),
                        str((block["MAP"].get(gender) or {}).get("n", "–"))]))
                for form in EXTRA_FORMS:
                    f = (block.get("forms") or {}).get(form)
                    if not f:
                        continue
                    pairs = [[f["parity"].get(g.form_key(form, ref)) for ref in ("masculine", "feminine")] for g in gaps]
                    t.rows.append(("model", d["model"]["name"], [
                        form, f.get("MAP"), (f.get("accuracy") or {}).get("acc@1"),
                        *(f["symmetry"].get(f"vs_{side}", {}).get(m) for side in ("M", "F") for m in measures),
                        *(c for vs_m, vs_f in pairs for c in (vs_m, ("p", vs_m), vs_f, ("p", vs_f))),
                        str((f.get("MAP") or {}).get("n", "–"))]))
            tables.append(t)
    return tables


def _p(fig: dict | None) -> str:
    return "" if not fig or fig.get("p_value") is None else f" (p {fig['p_value']:.3f})"


def forms_findings_markdown(docs: list[dict], corpora: tuple[str, ...] | None = None) -> str:
    """The extra query forms' findings, one table per corpus variant (default: every variant of the results, in
    their order), languages x models in rows: MAP of the masculine, feminine, doublet and neomorpheme queries with
    95% intervals, the M x F symmetry and paired gap, each form's AO against the masculine and the feminine query of
    its pair, and the paired AP gaps with their p values (docs/forms.md)."""
    if corpora is None:
        corpora = tuple(dict.fromkeys(c for d in docs for block in d["languages"].values() for c in block["corpora"]))
    out = []
    for corpus in corpora:
        out.append(f"\n#### {CORPUS_TITLES.get(corpus, corpus).capitalize()}: MAP per query form [95% CI]\n\n"
                   "| lang | model | M | F | doublet | neomorpheme |\n|---|---|---|---|---|---|\n")
        gaps = [f"\n#### {CORPUS_TITLES.get(corpus, corpus).capitalize()}: each form against the masculine and feminine query "
                "of its pair (AO; paired AP gap [95% CI] (p))\n\n"
                "| lang | model | AO M vs F | AP M − F | doublet AO vs M | doublet AO vs F | AP doublet − M | AP doublet − F | "
                "neomorpheme AO vs M | neomorpheme AO vs F | AP neomorpheme − M | AP neomorpheme − F |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n"]
        for lang in _langs(docs):
            for d in docs:
                block = _cell(d, lang, "corpora", corpus)
                if not block or not block.get("forms"):
                    continue
                forms = block["forms"]
                maps = [block["MAP"].get("masculine"), block["MAP"].get("feminine"),
                        *((forms.get(f) or {}).get("MAP") for f in EXTRA_FORMS)]
                out.append(f"| {lang.upper()} | {d['model']['name']} | " + " | ".join(_fmt_ci(m) for m in maps) + " |\n")
                mf = block["parity"].get("paired_AP_M-AP_F")
                cells = [_fmt_ci(block["symmetry"].get("AO")), _fmt_ci(mf) + _p(mf)]
                for f in EXTRA_FORMS:
                    fb = forms.get(f)
                    if not fb:
                        cells += ["–"] * 4
                        continue
                    cells += [_fmt_ci(fb["symmetry"].get(f"vs_{s}", {}).get("AO")) for s in ("M", "F")]
                    cells += [_fmt_ci(g) + _p(g) for g in (fb["parity"].get(f"paired_AP_{f}-AP_{s}") for s in ("M", "F"))]
                gaps.append(f"| {lang.upper()} | {d['model']['name']} | " + " | ".join(cells) + " |\n")
        out += gaps
    return "".join(out)


def _anchor(name: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def settings_line(docs: list[dict]) -> str:
    settings = docs[0]["settings"]
    # results made before the scores were exact do not name them
    scores = f"scores: {settings['scores']}; " if "scores" in settings else ""
    return (f"Self-match policy: {settings['self_match']}; {scores}tie-break: {settings['tie_break']}; intervals: {settings['interval']}. "
            "Test sets: " + ", ".join(sorted({d["testset"]["version"] for d in docs})) + f"; toolkit {docs[0]['toolkit']['version']}.")


def tables_markdown(docs: list[dict]) -> str:
    """The tables of ``paper_tables`` as Markdown."""
    settings = docs[0]["settings"]
    out = ["# Evaluation results\n\n", settings_line(docs).replace(f"policy: {settings['self_match']}", f"policy: **{settings['self_match']}**") + "\n"]
    for t, note in with_notes(paper_tables(docs)):
        out.append(f"\n## {t.title}\n\n" + (f"{note}\n\n" if note else "") + _header(t.columns))
        for _, label, cells in t.rows:
            out.append(f"| {label} | " + " | ".join(_md_cell(c) for c in cells) + " |\n")
    return "".join(out)


def with_notes(tables: list[Table]) -> list[tuple[Table, str | None]]:
    """Each table with its note, None where the table before it has the same note: one caption per kind of table
    (the forms tables, one per language and corpus, share a long one), said once where the first of them stands."""
    return [(t, None if i and tables[i - 1].note == t.note else t.note) for i, t in enumerate(tables)]


def _fmt_p(fig: dict | None) -> str:
    if not fig or fig.get("p_value") is None or fig["p_value"] != fig["p_value"]:
        return "–"
    return f"{fig['p_value']:.3f}"


def worst_pairs_markdown(doc: dict) -> str:
    """The pairs with the lowest RBO, their two top-k lists side by side (the paper's Table 6): relevant
    titles in bold, titles missing from the other form's list in italics."""
    rbo = _rbo_name(doc)
    out = [f"# Least symmetric pairs: {doc['model']['name']}\n\nSelf-match policy: {doc['settings']['self_match']}; "
           f"sorted by {rbo}, lowest first; **bold** = relevant in the qrels; *italics* = not in the other form's list.\n"]

    def show(item: dict, other: set[str]) -> str:
        text = item["text"].replace("|", "\\|")
        text = f"**{text}**" if item["relevant"] else text
        return text if item["text"] in other else f"*{text}*"

    for lang, block in sorted(doc["languages"].items()):
        for corpus, pairs in block["worst_pairs"].items():
            out.append(f"\n## {lang.upper()}, {CORPUS_TITLES[corpus]}\n")
            for p in pairs:
                fem, masc = p["top_feminine"], p["top_masculine"]
                in_f, in_m = {x["text"] for x in fem}, {x["text"] for x in masc}
                ap = "".join(f", AP {g} {p[k]:.4f}" for g, k in (("F", "AP_F"), ("M", "AP_M")) if p.get(k) is not None)
                values = ", ".join(f"{name} {p[name]:.4f}" for name in pair_measure_names(doc) if name in p)
                out.append(f"\n### {p['feminine']} / {p['masculine']} — {values}{ap}\n\n")
                out.append(f"| rank | {p['feminine']} (F) | {p['masculine']} (M) |\n|---|---|---|\n")
                for r in range(max(len(fem), len(masc))):
                    f = show(fem[r], in_m) if r < len(fem) else ""
                    m = show(masc[r], in_f) if r < len(masc) else ""
                    out.append(f"| {r + 1} | {f} | {m} |\n")
    return "".join(out)


def _gap_summary(gap, corpus_block: dict) -> dict:
    """A gap's entries of a metrics row. A graded measure's: its mean per query gender (``MAP_F``, ``MAP_M``,
    ``MAP_N``), the difference, the paired gap and its p; a yes/no measure's (acc@k): the difference and the
    paired p only, the shape acc@1's entries have had in every published metrics file."""
    parity, measure = corpus_block["parity"], gap.measure
    out: dict = {}
    if not measure.boolean:
        figures = measure.figures(corpus_block)
        out.update({f"{measure.mean_name}_{short}": figures[gender]["value"] for gender, short in GENDER_COLUMNS})
    out[gap.difference_key] = parity[gap.difference_key]["value"]
    if not measure.boolean:
        out[gap.paired_key] = parity[gap.paired_key]["value"]
    out[f"{gap.paired_key}_p"] = parity[gap.paired_key]["p_value"]
    return out


def summary_metrics(docs: list[dict]) -> dict:
    """Flat key figures per model and language, for `dvc metrics show`: every pair measure's mean, and each gap's
    entries (``_gap_summary``) with, for a set with extra query forms, each graded gap's form entries."""
    from eval.measures import gaps_in

    out: dict = {}
    for d in docs:
        model = out.setdefault(d["model"]["name"], {})
        for lang, block in d["languages"].items():
            entry = model.setdefault(lang, {})
            for corpus, c in block["corpora"].items():
                gaps = gaps_in(c["parity"])
                entry[corpus] = {name: fig["value"] for name, fig in c["symmetry"].items()}
                for gap in gaps:
                    entry[corpus].update(_gap_summary(gap, c))
                for form, f in (c.get("forms") or {}).items():  # only for a set with extra query forms
                    for gap in (g for g in gaps if not g.measure.boolean):
                        entry[corpus][f"{gap.measure.mean_name}_{form}"] = gap.measure.figures(f)["value"]
                        for reference in ("masculine", "feminine"):
                            key = gap.form_key(form, reference)
                            entry[corpus][key] = f["parity"][key]["value"]
                            entry[corpus][f"{key}_p"] = f["parity"][key]["p_value"]
    return out


def metrics_row_keys(docs: list[dict]) -> set[str]:
    """The figures of a row of the DVC metrics folder (one flat file per model and language): the graded pair
    measures (AO, RBO(p)), and for each graded gap (``Gap(AP)``: not a yes/no one like acc@1's) the means of
    the masculine and the feminine queries, the difference, the paired gap and its p."""
    from eval.measures import gaps_in

    keys: set[str] = set()
    for d in docs:
        keys.update(pair_measure_names(d))
        for block in d["languages"].values():
            for c in block["corpora"].values():
                for gap in gaps_in(c["parity"]):
                    if not gap.measure.boolean:
                        mean = gap.measure.mean_name
                        keys.update((f"{mean}_M", f"{mean}_F", gap.difference_key, gap.paired_key, f"{gap.paired_key}_p"))
    return keys


def zoomed_limits(values, floor: float | None = None, ceiling: float | None = None, pad: float = 0.08, min_span: float = 0.02):
    """Axis limits that hold ``values`` (NaN ignored) with a margin, clipped to [floor, ceiling]: the axis
    shows the data, not the metric's whole range."""
    finite = [float(v) for v in values if v is not None and v == v]
    if not finite:
        return (0.0 if floor is None else floor, 1.0 if ceiling is None else ceiling)
    lo, hi = min(finite), max(finite)
    margin = max(min_span, hi - lo) * pad + (max(0.0, min_span - (hi - lo)) / 2)
    lo, hi = lo - margin, hi + margin
    if floor is not None:
        lo = max(floor, lo)
    if ceiling is not None:
        hi = min(ceiling, hi)
    return lo, hi


def _figure_point(fig: dict | None) -> tuple[float, float, float]:
    """(value, low error, high error) of a figure; NaNs when it has no value."""
    nan = float("nan")
    if not fig or fig.get("value") is None:
        return nan, nan, nan
    lo, hi = fig["ci95"]
    return fig["value"], fig["value"] - (fig["value"] if lo is None else lo), (fig["value"] if hi is None else hi) - fig["value"]


def _dot_panel(ax, docs: list[dict], langs: list[str], styles: dict, figure_of, paper_of=None) -> list[float]:
    """One point with its 95% interval per model and language (languages on x, models side by side);
    ``paper_of(doc, lang)`` gives the paper's value, drawn as a hollow marker of the model's shape and
    colour with a horizontal tick. Returns every plotted end, for zooming."""
    import numpy as np

    ends = []
    offsets = np.linspace(-0.25, 0.25, len(docs)) if len(docs) > 1 else [0.0]
    for di, d in enumerate(docs):
        name = d["model"]["name"]
        style = styles[name]
        pts = [_figure_point(figure_of(d, lang)) for lang in langs]
        xs = np.arange(len(langs)) + offsets[di]
        vals = np.array([p[0] for p in pts])
        errs = np.array([[p[1] for p in pts], [p[2] for p in pts]])
        ax.errorbar(xs, vals, yerr=np.nan_to_num(errs), fmt=style["marker"], color=style["color"], ms=7, capsize=3,
                    label=name, linestyle="none")
        ends += list(vals - errs[0]) + list(vals + errs[1])
        if paper_of:
            paper = [paper_of(d, lang) for lang in langs]
            if any(p is not None for p in paper):
                pv = np.array([np.nan if p is None else p for p in paper])
                ax.plot(xs, pv, linestyle="none", marker=style["marker"], ms=11, markerfacecolor="none",
                        markeredgecolor=style["color"], markeredgewidth=1.6, label=f"{name}: paper")
                ends += [p for p in paper if p is not None]
    ax.set_xticks(np.arange(len(langs)), [lang.upper() for lang in langs])
    ax.set_xlim(-0.6, len(langs) - 0.4)
    ax.grid(axis="y", alpha=0.3)
    return ends


def check_plotted(docs: list[dict], sources: list) -> None:
    """Refuse, before any figure is drawn, what ``write_plots`` could not draw: each figure it reads (symmetry, MAP,
    the paired gaps, the extra forms' gaps) must be missing (null) or a mapping whose value, interval and p are
    numbers or null. The tables read some of these more leniently, so a file they accept can still stop the plots;
    checked here, it stops before the first (seconds each). ``sources``: the file of each doc, for the message."""
    from eval.errors import NotANumber

    def real(value, where: str) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
            raise NotANumber(f"{where} is {value!r:.60} where a number belongs")

    langs = _langs(docs)
    metrics = pair_measure_names(docs[0])
    figures = [(corpus, keys) for corpus in ("masculine", "feminine") for keys in (
        *(("symmetry", m) for m in metrics), ("MAP", "feminine"), ("MAP", "masculine"), ("parity", "paired_AP_M-AP_F"),
        *(("forms", form, "parity", f"paired_AP_{form}-AP_{short}") for form in EXTRA_FORMS for short in ("M", "F")))]
    for doc, source in zip(docs, sources):
        for lang in langs:
            for corpus, keys in figures:
                node, where = doc["languages"].get(lang), f"{source}: languages.{lang}"
                for key in ("corpora", corpus, *keys):
                    if node is None:
                        break
                    if not isinstance(node, dict):
                        raise NotANumber(f"{where} is {node!r:.60} where a mapping belongs")
                    node, where = node.get(key), f"{where}.{key}"
                if node is None:
                    continue  # not measured: the plots leave a gap
                if not isinstance(node, dict):
                    raise NotANumber(f"{where} is {node!r:.60} where a figure (value, ci95) belongs")
                real(node.get("value"), f"{where}.value")
                real(node.get("p_value"), f"{where}.p_value")
                if node.get("value") is not None:
                    ci95 = node.get("ci95")
                    if not isinstance(ci95, (list, tuple)) or len(ci95) != 2:
                        raise NotANumber(f"{where}.ci95 is {ci95!r:.60} where a pair of numbers belongs")
                    real(ci95[0], f"{where}.ci95[0]")
                    real(ci95[1], f"{where}.ci95[1]")


def write_plots(docs: list[dict], folder: str | Path) -> list[Path]:
    """symmetry.png (AO and RBO per language and model, both corpora), map.png (MAP of feminine vs
    masculine queries) and gap.png (the paired AP_M − AP_F with its p, the tested statistic). One colour and
    marker per model (``model_styles``); y-axes zoomed to the data; the paper's values as hollow markers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    langs = _langs(docs)
    models = [d["model"]["name"] for d in docs]
    styles = model_styles(models)
    self_match = docs[0]["settings"]["self_match"]
    written = []

    def paper_ao_of(doc, lang):
        return paper_ao(doc["model"]["name"], lang) if source_of(doc) == JOB_TITLES else None

    symmetry_measures = pair_measure_names(docs[0])
    fig, axes = plt.subplots(len(symmetry_measures), 2, figsize=(11, 1.5 + 3 * len(symmetry_measures)), sharey="row", squeeze=False)
    for row, metric in enumerate(symmetry_measures):
        ends = []
        for col, corpus in enumerate(("masculine", "feminine")):
            ax = axes[row, col]
            ends += _dot_panel(ax, docs, langs, styles, lambda d, lang: _cell(d, lang, "corpora", corpus, "symmetry", metric),
                               paper_ao_of if (metric, corpus) == ("AO", "masculine") else None)
            ax.set_title(f"{metric}, F vs M queries, {CORPUS_TITLES[corpus]}", fontsize=10)
        axes[row, 0].set_ylim(*zoomed_limits(ends, 0.0, 1.02))  # room for an interval that ends at 1
        axes[row, 0].set_ylabel(f"{metric} (axis zoomed to the data)", fontsize=9)
    written.append(_save_with_legend(fig, axes[0, 0], f"Symmetry per language and model (95% bootstrap CI; self-match "
                                     f"{self_match}; hollow: the paper's Table 2 value)", 11, 0.05, folder / "symmetry.png"))

    # MAP F vs M: both axes on the same zoomed range so the diagonal (F = M) stays at 45 degrees and small
    # gaps show; each point is labelled with its language, the paper's values hollow beside ours.
    points = []
    for d in docs:
        for lang in langs:
            for corpus in ("masculine", "feminine"):
                f = _figure_point(_cell(d, lang, "corpora", corpus, "MAP", "feminine"))
                m = _figure_point(_cell(d, lang, "corpora", corpus, "MAP", "masculine"))
                points.append((d["model"]["name"], lang, corpus, f, m))
    paper_points = [(d["model"]["name"], lang, paper_map(d["model"]["name"], lang)) for d in docs for lang in langs
                    if paper_map(d["model"]["name"], lang) is not None and source_of(d) == JOB_TITLES]
    ends = [v - lo for *_, f, m in points for v, lo, _ in (f, m)] + [v + hi for *_, f, m in points for v, _, hi in (f, m)]
    ends += [v for *_, fm in paper_points for v in fm]
    lim = zoomed_limits(ends, 0.0, 1.0)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.8), sharey=True, layout="constrained")
    point_labels: list[list[tuple]] = [[], []]
    bars: list[list] = [[], []]  # each panel's error bars: no label may hide one
    for col, corpus in enumerate(("masculine", "feminine")):
        ax = axes[col]
        for name, lang, c, (f, flo, fhi), (m, mlo, mhi) in points:
            if c != corpus or f != f or m != m:
                continue
            style = styles[name]
            bars[col].append(ax.errorbar(m, f, xerr=[[mlo], [mhi]], yerr=[[flo], [fhi]], fmt=style["marker"], color=style["color"],
                                         capsize=3, ms=7, label=name))
            point_labels[col].append((m, f, lang.upper(), style["color"], 8))
        if corpus == "masculine":  # the paper's Table 4 is over the masculine corpora only
            for name, lang, (pf, pm) in paper_points:
                style = styles[name]
                ax.plot(pm, pf, linestyle="none", marker=style["marker"], ms=11, markerfacecolor="none", markeredgecolor=style["color"],
                        markeredgewidth=1.6, label=f"{name}: paper")
                point_labels[col].append((pm, pf, f"{lang.upper()} paper", style["color"], 7))
        ax.plot(lim, lim, color="grey", lw=0.8, ls="--")
        ax.set_xlim(*lim)
        ax.set_ylim(*lim)
        ax.set_aspect("equal")
        ax.set_xlabel("MAP, masculine queries")
        ax.set_title(f"MAP over {CORPUS_TITLES[corpus]} (below the diagonal: F worse)", fontsize=10)
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles))
        ax.legend(unique.values(), unique.keys(), fontsize=7, loc="upper left")
    axes[0].set_ylabel("MAP, feminine queries")
    fig.suptitle("MAP, feminine vs masculine queries per language and model (95% bootstrap CI; hollow: the paper's Table 4)")
    settle_layout(fig)  # once for both panels
    for ax, placed, panel_bars in zip(axes, point_labels, bars):
        place_labels(fig, ax, placed, drawn=True, bars=panel_bars)
    written.append(_save(fig, folder / "map.png"))

    # The paired gap, what the randomisation test is about: mean over pairs of AP_M − AP_F with its interval
    # and p; zero is no gap, above zero the masculine form is served better.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
    ends = [0.0]
    for col, corpus in enumerate(("masculine", "feminine")):
        ax = axes[col]
        ends += _dot_panel(ax, docs, langs, styles, lambda d, lang: _cell(d, lang, "corpora", corpus, "parity", "paired_AP_M-AP_F"))
        offsets = np.linspace(-0.25, 0.25, len(docs)) if len(docs) > 1 else [0.0]
        for di, d in enumerate(docs):
            for li, lang in enumerate(langs):
                fig_ = _cell(d, lang, "corpora", corpus, "parity", "paired_AP_M-AP_F")
                if fig_ and fig_.get("value") is not None and fig_.get("p_value") is not None:
                    ax.annotate(f"p={fig_['p_value']:.2f}", (li + offsets[di], fig_["ci95"][1]), textcoords="offset points",
                                xytext=(0, 4), ha="center", fontsize=7, color=styles[d["model"]["name"]]["color"],
                                fontweight="bold" if fig_["p_value"] < 0.05 else "normal")
        ax.axhline(0.0, color="grey", lw=0.9, ls="--")
        ax.set_title(f"paired AP_M − AP_F, {CORPUS_TITLES[corpus]}", fontsize=10)
    lo, hi = zoomed_limits(ends, -1.0, 1.0)
    span = max(abs(lo), abs(hi))
    axes[0].set_ylim(-span, span * 1.12)  # symmetric around 0, room for the p labels
    axes[0].set_ylabel("AP_M − AP_F (above 0: masculine served better)", fontsize=9)
    written.append(_save_with_legend(fig, axes[0], "Paired gap per language and model: mean over query pairs of AP_M − AP_F "
                                     "(95% bootstrap CI; p: paired randomisation test, bold below 0.05)", 10, 0.06,
                                     folder / "gap.png"))
    forms_plot = write_forms_plot(docs, folder, styles, langs)
    return written + ([forms_plot] if forms_plot else [])


def write_forms_plot(docs: list[dict], folder: Path, styles: dict, langs: list[str]) -> Path | None:
    """forms.png, for results with extra query forms only: per form (rows) the paired AP gap of the form against
    the masculine and the feminine query of its pair (columns, per corpus), per language and model, with intervals."""
    import matplotlib.pyplot as plt

    forms = [f for f in EXTRA_FORMS if any(_cell(d, lang, "corpora", c, "forms", f) for d in docs for lang in langs
                                           for c in ("masculine", "feminine"))]
    if not forms:
        return None
    panels = [(corpus, short) for corpus in ("masculine", "feminine") for short in ("M", "F")]
    fig, axes = plt.subplots(len(forms), len(panels), figsize=(4.2 * len(panels), 3.6 * len(forms)), sharey=True, squeeze=False)
    ends: list[float] = []
    for r, form in enumerate(forms):
        for c, (corpus, short) in enumerate(panels):
            ax = axes[r][c]
            ends += _dot_panel(ax, docs, langs, styles,
                               lambda d, lang: _cell(d, lang, "corpora", corpus, "forms", form, "parity", f"paired_AP_{form}-AP_{short}"))
            ax.axhline(0.0, color="grey", lw=0.9, ls="--")
            ax.set_title(f"AP {form} − AP {short}, {CORPUS_TITLES[corpus]}", fontsize=9)
    lo, hi = zoomed_limits(ends, -1.0, 1.0)
    span = max(abs(lo), abs(hi))
    axes[0][0].set_ylim(-span, span)
    for r, form in enumerate(forms):
        axes[r][0].set_ylabel(f"{form} gap (> 0: {form} better)", fontsize=8)
    return _save_with_legend(fig, axes[0][0], "Extra query forms: paired gap against the masculine (M) and feminine (F) "
                             "query of the same occupation (95% bootstrap CI)", 10, 0.06, folder / "forms.png")


# Where a point's label may go, in points from the point (x, y): next to it first (right-above, then around it),
# then on rings farther out in 16 directions, joined to the point by a thin leader line (the real MAP plot has a
# dozen points within 0.03 of each other: the near places run out).
NEAR_OFFSETS = [(6, 4), (6, -11), (-6, 4), (-6, -11), (0, 10), (0, -17), (9, -4), (-9, -4)]
LABEL_OFFSETS = NEAR_OFFSETS + [(round(r * math.cos(math.radians(a))), round(r * math.sin(math.radians(a))) - 4)
                                for r in (14, 20, 27, 35, 44, 54) for a in range(0, 360, 360 // 16)]


def settle_layout(fig) -> None:
    """Draw ``fig`` until its axes stop moving, then keep that layout (labels placed in display coordinates are
    those of the saved picture; they sit inside the axes and need no room of their own). Constrained layout
    settles over more than one pass with equal-aspect axes: after the first, the MAP plot's x labels lay past the
    figure's bottom edge."""
    for _ in range(5):
        before = [a.get_position().bounds for a in fig.axes]
        fig.canvas.draw()
        if [a.get_position().bounds for a in fig.axes] == before:
            break
    fig.set_layout_engine("none")


def bar_boxes(bars: list, fig) -> list[tuple]:
    """The display boxes ``(x0, y0, x1, y1)`` of the error bars ``bars`` (``ax.errorbar``'s containers): each bar's
    line, as wide as it is drawn, and each cap (its marker's extent)."""
    renderer = fig.canvas.get_renderer()
    out = []
    for container in bars:
        _, caps, lines = container.lines
        for collection in lines:
            half = max(collection.get_linewidths(), default=1.0) * fig.dpi / 72 / 2
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = collection.get_transform().transform(segment)[[0, -1]]
                out.append((min(x0, x1) - half, min(y0, y1) - half, max(x0, x1) + half, max(y0, y1) + half))
        out += [(b.x0, b.y0, b.x1, b.y1) for b in (cap.get_window_extent(renderer) for cap in caps)]
    return out


def place_labels(fig, ax, labels: list[tuple], *, drawn: bool = False, bars: list = ()) -> list:
    """Label each point ``(x, y, text, colour, fontsize)`` of ``ax`` where its text overlaps no label placed
    before it, no error bar of ``bars`` (``ax.errorbar``'s containers: a label over an interval hides it) and no
    marker, and stays inside the axes (never clipped); where no place is free, the one that overlaps no label, then
    the least bar and marker area; a thin leader line joins a label that is not next to its point. Returns the
    annotations. ``drawn``: the caller has drawn ``fig`` and fixed its layout (one draw for several panels: a draw
    costs a tenth of a second and more, and labels move no axes)."""
    from matplotlib.text import Text

    if not drawn:
        settle_layout(fig)
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    r = 5 * fig.dpi / 72  # a marker's half size in pixels
    markers = [(px - r, py - r, px + r, py + r) for px, py in (ax.transData.transform((x, y)) for x, y, *_ in labels)]
    intervals = bar_boxes(list(bars), fig)
    placed: list[tuple] = []

    def area(rect, others) -> float:
        return sum(max(0.0, min(rect[2], t[2]) - max(rect[0], t[0])) * max(0.0, min(rect[3], t[3]) - max(rect[1], t[1]))
                   for t in others)

    out = []
    for i, (x, y, text, colour, size) in enumerate(labels):
        best = None
        other_markers = markers[:i] + markers[i + 1:]
        for n, (dx, dy) in enumerate(LABEL_OFFSETS):
            ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=size, color=colour,
                              ha="left" if dx > 0 else "right" if dx < 0 else "center", annotation_clip=False,
                              arrowprops=None if n < len(NEAR_OFFSETS) else
                              {"arrowstyle": "-", "color": colour, "lw": 0.5, "alpha": 0.6})
            ann.update_positions(renderer)
            # the text's own box: an annotation's extent also spans its leader line, a box over the labels it passes
            bb = Text.get_window_extent(ann, renderer)
            rect = (bb.x0, bb.y0, bb.x1, bb.y1)
            outside = rect[0] < box.x0 or rect[2] > box.x1 or rect[1] < box.y0 or rect[3] > box.y1
            score = (outside, area(rect, placed), area(rect, intervals) + area(rect, other_markers))
            if best is None or score < best[0]:
                if best is not None:
                    best[1].remove()
                best = (score, ann, rect)
            else:
                ann.remove()
            if score == (False, 0.0, 0.0):
                break
        placed.append(best[2])
        out.append(best[1])
    return out


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    try:
        save_png(fig, path)
    finally:
        plt.close(fig)
    return path


def save_png(fig, path: Path) -> None:
    """``fig`` as the PNG ``path``, whole or not at all (``config.files.write_file_atomically``): a kill or a full
    disk during plotting leaves the previous picture, never 0 bytes."""

    def fill(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            fig.savefig(fh, format="png", dpi=110)

    write_file_atomically(path, fill)


def _save_with_legend(fig, legend_of, title: str, title_size: int, legend_room: float, path: Path) -> Path:
    """The plots with one legend for every panel (the models of ``legend_of``), below them; then saved."""
    handles, labels = legend_of.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=min(len(labels), 6), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=title_size)
    fig.tight_layout(rect=(0, legend_room, 1, 1))
    return _save(fig, path)
