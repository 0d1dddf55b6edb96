"""``python -m eval report``: a static site of eval and audit results, to look at rather than read.

SITE/index.html with the figures beside it in SITE/figures/: no script, no font or style from the network,
nothing but relative links, so it opens from file:// and can be copied anywhere. The tables are the
paper-style tables of ``eval.report.paper_tables`` (the same cells as tables.md); the figures are those of
``eval run`` and ``eval audit``; the worst pairs show the two ranked lists of a pair side by side. The page
holds no time stamp and no absolute path, so the same inputs give the same bytes.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re
from pathlib import Path

from config.files import foreign_entries, write_folder_atomically
from eval.audit_report import audit_figures, write_audit_plots
from eval.errors import EvalError, NotANumber
from eval.results import read_json
from eval.report import (
    CORPUS_TITLES,
    Table,
    _rbo_name,
    check_language_keys,
    load_results,
    model_styles,
    pair_measure_names,
    JOB_TITLES,
    by_source,
    check_plotted,
    paper_tables,
    settings_line,
    with_notes,
    write_plots,
)

RESULTS_KEYS = ("toolkit", "model", "testset", "settings", "languages")
AUDIT_KEYS = ("models", "testset", "eval_settings", "audit_settings", "languages")

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 0 auto;
       max-width: 1180px; padding: 0 24px 48px; color: #1b1b1b; line-height: 1.45; overflow-wrap: anywhere; }
h1 { font-size: 1.6em; margin-top: 28px; } h2 { margin-top: 40px; border-bottom: 2px solid #ddd; padding-bottom: 4px; }
h3 { margin-top: 28px; font-size: 1.1em; } h4 { margin: 18px 0 6px; font-size: 0.98em; }
nav { background: #f5f5f5; padding: 8px 12px; border-radius: 6px; font-size: 0.92em; }
nav a { margin-right: 14px; }
/* A wide table (a column per language, 18 and more) scrolls inside its own box; the page never scrolls sideways. */
table { border-collapse: collapse; margin: 8px 0 18px; font-size: 0.86em; display: block; max-width: 100%;
        width: max-content; overflow-x: auto; overflow-wrap: normal; }
/* Its title wraps within the visible box and stays there while the table scrolls (on a phone a one-line title
   as wide as the table was cut off). 48px: the body's padding. */
caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0; position: sticky; left: 0;
          max-width: min(1180px, 100vw - 48px); }
th, td { border-top: 1px solid #ccc; border-bottom: 1px solid #ccc; padding: 3px 9px; text-align: right; vertical-align: top; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
/* The first column (the model) stays in view while a wide table scrolls under it. */
td:first-child, th:first-child { position: sticky; left: 0; z-index: 1; background: #fff; }
th:first-child { background: #f0f0f0; }
td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
.ci { color: #666; font-size: 0.85em; display: block; }
tr.paper td { font-style: italic; background: #fff8e6; } tr.n td { color: #666; }
.sig { font-weight: 700; color: #b00020; }
.swatch { display: inline-block; width: 0.8em; height: 0.8em; border-radius: 50%; margin-right: 5px; vertical-align: -1px; }
figure { margin: 12px 0 24px; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
/* On a phone a figure shrunk to the screen has 4 px text: it keeps its own size and scrolls in its box, as a
   wide table does. */
@media (max-width: 600px) { figure { overflow-x: auto; } figure img { max-width: none; } }
figcaption { font-size: 0.88em; color: #444; }
.note { font-size: 0.9em; color: #444; max-width: 70em; }
details { margin: 6px 0; border: 1px solid #ddd; border-radius: 6px; padding: 4px 10px; }
summary { cursor: pointer; font-weight: 600; }
table.lists td { text-align: left; }
.rel { font-weight: 700; color: #0b6b2f; }
.only { font-style: italic; background: #fde9d9; }
.legend span { margin-right: 18px; }
"""


def read_inputs(paths: list[str | Path]) -> tuple[list[Path], list[Path]]:
    """Split the given files and folders (a folder: its *.json, not its subfolders) into eval results and
    audit documents, recognised by their keys."""
    results, audits = [], []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            files = sorted(p.glob("*.json"))
            if not files:
                raise EvalError(f"{p}: no *.json in this folder; give results written by python -m eval run or eval audit")
        elif p.is_file():
            files = [p]
        else:
            raise EvalError(f"{p}: no such file or folder; give results JSON files or the folders holding them")
        for f in files:
            doc = read_json(f, "JSON file")
            if all(k in doc for k in AUDIT_KEYS):
                audits.append(f)
            elif all(k in doc for k in RESULTS_KEYS):
                results.append(f)
            else:
                raise EvalError(f"{f}: neither an eval results file nor an audit file; give files written by "
                                "python -m eval run (results/runs) or python -m eval audit (results/audit)")
    if not results:
        raise EvalError("no eval results among the inputs; give the files written by python -m eval run "
                        "(e.g. results/runs, or results/audit/runs for the audit's models)")
    if len(audits) > 1:
        raise EvalError(f"more than one audit file ({', '.join(map(str, audits))}); give one")
    return results, audits


def build_site(paths: list[str | Path], out: str | Path) -> Path:
    """Write OUT/index.html and OUT/figures/*.png; returns the index path."""
    result_paths, audit_paths = read_inputs(paths)
    docs = load_results(result_paths)
    seen: dict[tuple[str, str], Path] = {}
    for path, doc in zip(result_paths, docs):
        key = (doc["model"]["name"], doc["testset"]["version"])
        if key in seen:
            raise EvalError(f"{path}: {key[0]} on test set {key[1]} is also in {seen[key]}; give one results file per model and test set")
        seen[key] = path
    audit = read_json(audit_paths[0], "JSON file") if audit_paths else None
    if audit:  # the results' keys are checked as they are read (load_results)
        check_language_keys(audit, audit_paths[0])
    out = Path(out)
    check_site_folder(out)

    def page(eval_figures: list[str], audit_figures: list[str]) -> str:
        try:
            return render_page(docs, [p.name for p in result_paths], audit, audit_paths[0].name if audit else None,
                               eval_figures, audit_figures)
        except NotANumber as exc:
            raise EvalError(f"{', '.join(map(str, result_paths + audit_paths))}: {exc}; give files written by python -m "
                            "eval run / audit") from None

    # Every refusal before any figure is drawn (seconds each): the page checks every number it prints, so it is
    # rendered once first (as if only the three figures every page has were), and what the figures draw is checked
    # (the page does not print it all, and reads some of it more leniently).
    page(["symmetry.png", "map.png", "gap.png"], [])
    check_plotted(docs, result_paths)
    try:
        audit_values = audit_figures(audit) if audit else None
    except NotANumber as exc:
        raise EvalError(f"{audit_paths[0]}: {exc}; give a file written by python -m eval audit") from None

    def fill(tmp: Path) -> None:
        eval_pngs = write_plots(docs, tmp / "figures")
        audit_pngs = write_audit_plots(audit_values, tmp / "figures") if audit else []
        (tmp / "index.html").write_text(page([p.name for p in eval_pngs], [p.name for p in audit_pngs]), encoding="utf-8")

    # The whole site is written into a hidden sibling and swapped in (the test sets' writer): a failed or killed
    # report leaves the previous site as it was, and pictures of an earlier report do not linger.
    write_folder_atomically(out, fill, ours=SITE_FILE)
    return out / "index.html"


# What eval report writes into --out (and index.html.tmp, which earlier versions left behind): nothing else
# may be there, since the site is replaced whole.
SITE_FILE = re.compile(r"index\.html(\.tmp)?|figures|figures/(symmetry|map|gap|forms|(correlation|exclusion|mitigation)_"
                       r"[a-z]{2,3}(-[a-z0-9]{2,8})*)\.png")


def check_site_folder(out: Path) -> None:
    """Refuse an --out holding anything eval report did not write: the site is replaced whole, and a user's own
    files in it (or in its figures/) must not be deleted."""
    if out.exists() and not out.is_dir():
        raise EvalError(f"{out}: --out is a file; give a folder for the site")
    if not out.is_dir():
        return
    foreign = foreign_entries(out, SITE_FILE)  # the rule write_folder_atomically applies, said in eval's words
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise EvalError(f"{out}: holds files eval report did not write ({shown}); the site is replaced whole, so give "
                        "a new or empty --out, or move those files out")


def _e(text) -> str:
    """Every value that reaches the page goes through here (or ``_n``): text escaped, quotes included, so a
    folder, model or title name like ``x<img src=x onerror=...>`` is shown as text and never runs."""
    return html.escape(str(text), quote=True)


def _number(value, field: str = "a figure") -> int | float:
    """``value`` when it is a number; anything else (a string, a list, a boolean) is refused, never written."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (isinstance(value, float) and not math.isfinite(value)):
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise NotANumber(f"{field} is {shown} where a number belongs")  # NaN too: eval writes null, shown "–"
    return value


def _n(value, spec: str = "", field: str = "a figure") -> str:
    """A number formatted with ``spec`` (``_number``'s check first)."""
    return format(_number(value, field), spec)


def _figure_html(fig: dict | None, digits: int = 3) -> str:
    if not fig or not isinstance(fig, dict) or fig.get("value") is None:
        return "–"
    ci95 = fig.get("ci95")
    if not isinstance(ci95, (list, tuple)) or len(ci95) != 2:
        raise NotANumber(f"a figure's ci95 is {ci95!r:.60} where a pair of numbers belongs")
    lo, hi = ci95
    ci = "" if lo is None or hi is None else \
        f'<span class="ci">[{_n(lo, f".{digits}f", "ci95")}, {_n(hi, f".{digits}f", "ci95")}]</span>'
    return f"{_n(fig['value'], f'.{digits}f', 'value')}{ci}"


def _p_html(fig: dict | None) -> str:
    p = (fig or {}).get("p_value") if isinstance(fig, dict) or fig is None else None
    if p is None:
        return "–"
    shown = _n(p, ".3f", "p_value")
    if p != p:
        return "–"
    return f'<span class="sig">{shown}</span>' if p < 0.05 else shown


def _cell_html(cell) -> str:
    if isinstance(cell, tuple) and cell[0] == "p":
        return _p_html(cell[1])
    if isinstance(cell, dict) or cell is None:
        return _figure_html(cell)
    return _e(cell)


def table_html(table: Table, styles: dict, note: str | None = None) -> str:
    """The table and, when given, its note: the note of a kind of table stands once, before the first of them."""
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    rows = []
    for kind, label, cells in table.rows:
        swatch = f'<span class="swatch" style="background:{styles[label]["color"]}"></span>' if kind == "model" and label in styles else ""
        rows.append(f'<tr class="{kind}"><td>{swatch}{_e(label)}</td>' + "".join(f'<td class="num">{_cell_html(c)}</td>' for c in cells) + "</tr>")
    return ((f'<p class="note">{_e(note)}</p>' if note else "")
            + f'<table id="{_e(table.anchor)}"><caption>{_e(table.title)}</caption><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>\n')


def _img(name: str, alt: str, caption: str) -> str:
    return (f'<figure><img src="figures/{_e(name)}" alt="{_e(alt)}"><figcaption>{_e(caption)}</figcaption></figure>\n')


def worst_pairs_html(doc: dict, open_first: bool) -> str:
    """The least symmetric pairs of one model, each with its two top-k lists side by side."""
    rbo = _rbo_name(doc)
    out = []
    first = open_first
    for lang, block in sorted(doc["languages"].items()):
        for corpus, pairs in block["worst_pairs"].items():
            attr = " open" if first else ""
            first = False
            out.append(f"<details{attr}><summary>{_e(doc['model']['name'])} · {_e(lang.upper())} · {_e(_corpus(corpus))}: "
                       f"{len(pairs)} least symmetric pairs by {_e(rbo)}</summary>")
            for p in pairs:
                fem, masc = p["top_feminine"], p["top_masculine"]
                in_f, in_m = {x["text"] for x in fem}, {x["text"] for x in masc}
                aps = "".join(f", AP {g} {_n(p[k], '.3f', k)}" for g, k in (("F", "AP_F"), ("M", "AP_M")) if p.get(k) is not None)
                values = ", ".join(f"{name} {_n(p[name], '.3f', name)}" for name in pair_measure_names(doc) if name in p)
                out.append(f"<h4>{_e(p['feminine'])} / {_e(p['masculine'])} — {_e(values)}{_e(aps)}</h4>")
                out.append(f'<table class="lists"><thead><tr><th>rank</th><th>{_e(p["feminine"])} (F)</th>'
                           f'<th>{_e(p["masculine"])} (M)</th></tr></thead><tbody>')
                for r in range(max(len(fem), len(masc))):
                    f = _list_item(fem[r], in_m) if r < len(fem) else ""
                    m = _list_item(masc[r], in_f) if r < len(masc) else ""
                    out.append(f"<tr><td>{r + 1}</td><td>{f}</td><td>{m}</td></tr>")
                out.append("</tbody></table>")
            out.append("</details>\n")
    return "".join(out)


def _list_item(item: dict, other: set[str]) -> str:
    classes, marks = [], ""
    if item["relevant"]:
        classes.append("rel")
        marks += " ✓"
    if item["text"] not in other:
        classes.append("only")
        marks += " †"
    return f'<span class="{" ".join(classes)}">{_e(item["text"])}{marks}</span>' if classes else _e(item["text"])


def _pct_html(fig: dict) -> str:
    if not fig or not isinstance(fig, dict) or fig.get("value") is None:
        return "–"
    ci95 = fig.get("ci95")
    if not isinstance(ci95, (list, tuple)) or len(ci95) != 2:
        raise NotANumber(f"a share's ci95 is {ci95!r:.60} where a pair of numbers belongs")
    value, lo, hi = _number(fig["value"], "value"), _number(ci95[0], "ci95"), _number(ci95[1], "ci95")
    return (f'{100 * value:.1f}%<span class="ci">[{100 * lo:.1f}, {100 * hi:.1f}] '
            f'({_n(fig.get("count"), "", "count")}/{_n(fig.get("n"), "", "n")})</span>')


def _corpus(corpus) -> str:
    return CORPUS_TITLES.get(corpus, str(corpus))


def audit_html(doc: dict, source: str, figure_names: list[str]) -> str:
    s, es = doc["audit_settings"], doc["eval_settings"]
    models = [m["name"] for m in doc["models"]]
    rbo = f"RBO(p={_n(es['rbo_p'], 'g', 'eval_settings.rbo_p')})"
    k, rho, tau = (_n(s[key], spec, f"audit_settings.{key}") for key, spec in (("k", ""), ("rho", "g"), ("tau", "")))
    out = [f'<h2 id="audit">Audit across models</h2><p class="note">From {_e(source)}: models {_e(", ".join(models))}; test set '
           f"{_e(doc['testset']['version'])}; self-match {_e(es['self_match'])}; intervals: {_e(s['interval'])}. "
           f"<b>Served</b> (k = {k}, ρ = {rho}, τ = {tau}): {_e(s['served'])}</p>\n"]
    for lang, block in sorted(doc["languages"].items()):
        out.append(f'<h3 id="audit-{_e(lang)}">{_e(lang.upper())}: do the models fail on the same occupations?</h3>')
        if f"correlation_{lang}.png" in figure_names:
            out.append(_img(f"correlation_{lang}.png", f"{lang} correlation matrices",
                            "Correlation of the per-pair asymmetry vectors between models (upper triangle Pearson, lower Spearman)."))
        rows = []
        for corpus, c in block["corpora"].items():
            for measure, entries in c["correlation"].items():
                for e in entries:
                    cells = [_e(_corpus(corpus)), _e(measure), _e(f"{e['a']} × {e['b']}")]
                    for kind in ("pearson", "spearman"):
                        cells.append(f"NaN ({_e(e[kind]['reason'])})" if e[kind].get("reason") else _figure_html(e[kind]))
                    cells.append(_n(e["pearson"]["n"], "", "pearson.n"))
                    rows.append("<tr>" + "".join(f'<td class="num">{x}</td>' for x in cells) + "</tr>")
        out.append(f"<table><caption>{_e(lang.upper())}: correlation of per-pair vectors, with bootstrap 95% intervals</caption>"
                   "<thead><tr><th>corpus</th><th>measure</th><th>models</th><th>Pearson r</th><th>Spearman ρ</th><th>n pairs</th>"
                   f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
        out.append(f'<h3 id="exclusion-{_e(lang)}">{_e(lang.upper())}: systemic exclusion</h3>')
        if f"exclusion_{lang}.png" in figure_names:
            out.append(_img(f"exclusion_{lang}.png", f"{lang} exclusion heatmaps",
                            f"Share of pairs one form of which is failed while the other is served, by at least τ models, over ρ × τ "
                            f"(k = {k}); the reported setting outlined."))
        rows = []
        for corpus, c in block["corpora"].items():
            ex = c["exclusion"]
            rows.append(f'<tr><td>{_e(_corpus(corpus))}</td><td class="num">{_pct_html(ex["feminine_excluded"])}</td>'
                        f'<td class="num">{_pct_html(ex["masculine_excluded"])}</td><td class="num">{_figure_html(ex["difference_F-M"])}</td>'
                        f'<td class="num">{_pct_html(ex["both_failed"])}</td><td class="num">{_n(ex["pairs_scored"], "", "pairs_scored")} / '
                        f'{_n(ex["pairs_left_out"], "", "pairs_left_out")}</td></tr>')
        out.append(f"<table><caption>{_e(lang.upper())}: systemic exclusion at k = {k}, ρ = {rho}, τ = {tau}</caption>"
                   "<thead><tr><th>corpus</th><th>feminine excluded</th><th>masculine excluded</th><th>difference F − M</th>"
                   "<th>both failed</th><th>pairs scored / left out</th></tr></thead>"
                   f"<tbody>{''.join(rows)}</tbody></table>")
        rows = []
        for corpus, c in block["corpora"].items():
            for form, sides in (c.get("forms") or {}).items():
                for side, f in sides.items():
                    rows.append(f'<tr><td>{_e(_corpus(corpus))}</td><td>{_e(form)}</td><td>{_e(side[3:])}</td>'
                                f'<td class="num">{_pct_html(f["form_excluded"])}</td><td class="num">{_pct_html(f["reference_excluded"])}</td>'
                                f'<td class="num">{_pct_html(f["both_failed"])}</td><td class="num">{_n(f["pairs_scored"], "", "pairs_scored")} / '
                                f'{_n(f["pairs_left_out"], "", "pairs_left_out")}</td></tr>')
        if rows:
            out.append(f"<table><caption>{_e(lang.upper())}: pairs the extra query forms exclude (the form failed, its masculine / "
                       f"feminine query served, by ≥ τ models; reference excluded: the reverse), k = {k}, ρ = {rho}, "
                       f"τ = {tau}</caption><thead><tr><th>corpus</th><th>form</th><th>vs</th><th>form excluded</th>"
                       "<th>reference excluded</th><th>both failed</th><th>pairs scored / left out</th></tr></thead>"
                       f"<tbody>{''.join(rows)}</tbody></table>")
        mit = block.get("mitigation")
        if not mit:
            continue
        out.append(f'<h3 id="mitigation-{_e(lang)}">{_e(lang.upper())}: mitigation by normalisation (rules {_e(mit["rules"])})</h3>')
        identical, pairs = _n(mit["pairs_identical_after"], "", "pairs_identical_after"), _n(mit["pairs"], "", "pairs")
        out.append(f'<p class="note"><b>{identical} of {pairs} query pairs became identical strings</b>: '
                   "their symmetry after normalisation is 1.0 by construction (a tautology, not an effect), so they are left "
                   f"out; only the {_n(mit['pairs'] - mit['pairs_identical_after'])} pairs that still differ measure the mitigation.</p>")
        if f"mitigation_{lang}.png" in figure_names:
            out.append(_img(f"mitigation_{lang}.png", f"{lang} mitigation before and after",
                            "Before (plain) and after (hatched) normalisation, on the pairs that still differ."))
        rows = []
        for name, per_corpus in mit["models"].items():
            for corpus in ("masculine", "feminine"):
                diff = per_corpus[corpus]["still_different"]
                cells = [_e(name), _e(_corpus(corpus)), _n(diff["n"], "", "still_different.n")]
                for key in ("AO", rbo, "AP_M-AP_F"):  # the gap has no change figure: before and after say it
                    cells += [_figure_html(diff[key][phase]) for phase in ("before", "after", "change") if phase in diff[key]]
                rows.append("<tr>" + "".join(f'<td class="num">{x}</td>' for x in cells) + "</tr>")
        head = "".join(f"<th>{_e(k)} {phase}</th>" for k in ("AO", rbo) for phase in ("before", "after", "change"))
        head += "<th>AP_M − AP_F before</th><th>AP_M − AP_F after</th>"
        out.append(f"<table><caption>{_e(lang.upper())}: pairs that still differ, before → after</caption><thead><tr><th>model</th>"
                   f"<th>corpus</th><th>n pairs</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(out)


def render_page(docs: list[dict], sources: list[str], audit: dict | None, audit_source: str | None,
                eval_figures: list[str], audit_figures: list[str]) -> str:
    models = [d["model"]["name"] for d in docs]
    styles = model_styles(models + ([m["name"] for m in audit["models"]] if audit else []))
    groups = by_source(docs)
    # One block of tables per source (ESCO beside the job-title sets, docs/esco.md); a page of job-title results
    # alone is the page it always was.
    per_source = [(name if len(groups) > 1 or name != JOB_TITLES else None,
                   {t.anchor: dataclasses.replace(t, anchor=f"{t.anchor}-{i}") if i else t for t in paper_tables(group)})
                  for i, (name, group) in enumerate(groups.items())]

    def blocks(anchors) -> list[str]:
        out = []
        for i, (name, ts) in enumerate(per_source):
            found = [a for a in anchors if a in ts]
            if name is not None and found:
                out.append(f'<h3 id="{found[0]}-source-{i}">Source: {_e(name)}</h3>')
            out += [table_html(t, styles, note) for t, note in with_notes([ts[a] for a in found])]
        return out

    settings = docs[0]["settings"]
    form_anchors = list(dict.fromkeys(a for _, ts in per_source for a in ts if a.startswith("forms-")))
    nav = [("symmetry", "Symmetry"), ("map", "MAP"), ("parity", "Parity")] + (
        [("forms", "Query forms")] if form_anchors else []) + [("worst-pairs", "Worst pairs")] + (
        [("audit", "Audit")] if audit else [])
    legend = "".join(f'<span><span class="swatch" style="background:{styles[m]["color"]}"></span>{_e(m)}</span>' for m in models)
    body = [
        "<h1>Gender bias in job-title matching: evaluation report</h1>",
        f'<p class="note">{_e(settings_line(docs))} Resamples: bootstrap {_e(settings.get("bootstrap_resamples", "–"))}, '
        f'permutation {_e(settings.get("permutation_resamples", "–"))}, seed {_e(settings.get("seed", "–"))}. '
        f"Inputs: {_e(', '.join(sources + ([audit_source] if audit_source else [])))}.</p>",
        f'<p class="legend">Models: {legend}</p>',
        "<nav>" + "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in nav) + "</nav>",
        '<h2 id="symmetry">Symmetry: do the feminine and masculine query get the same ranking?</h2>',
        _img("symmetry.png", "symmetry per language and model",
             "AO (the paper's \"RBO\") and RBO_ext per language and model with 95% bootstrap intervals; hollow markers: the "
             "paper's Table 2 for the same model. Axes zoomed to the data."),
        *blocks(["table-2a", "table-2b", "table-3a", "table-3b"]),
        '<h2 id="map">MAP per query gender</h2>',
        _img("map.png", "MAP feminine vs masculine queries",
             "MAP of the feminine vs the masculine queries; below the diagonal the feminine queries are served worse. "
             "Hollow markers: the paper's Table 4 for the same model."),
        # the query measures beyond AP and acc@k (nDCG@10, a newcomer's), each in its own tables
        *blocks(["table-4", "table-5",
                 *dict.fromkeys(a for _, ts in per_source for a in ts if a.startswith("measure-"))]),
        '<h2 id="parity">Parity: the paired gap and its test</h2>',
        _img("gap.png", "paired AP gap per language and model",
             "Mean over query pairs of AP_M − AP_F with its 95% interval and the paired randomisation test's p (bold below 0.05)."),
        *blocks(["parity-masculine", "parity-feminine"]),
        *(['<h2 id="forms">Query forms: is <i>abogado/a</i> ranked like <i>abogado</i>?</h2>',
           '<p class="note">The extra query forms of the test set (doublet, neomorpheme; docs/forms.md) beside the masculine '
           "and feminine queries of the same occupations.</p>"] if form_anchors else []),
        *([_img("forms.png", "paired AP gap of each extra query form",
                "Mean over (form, masculine / feminine query) pairs of AP_form − AP_M and AP_form − AP_F with 95% intervals.")]
          if form_anchors and "forms.png" in eval_figures else []),
        *blocks(form_anchors),
        '<h2 id="worst-pairs">Least symmetric pairs, lists side by side</h2>',
        '<p class="legend"><span><span class="rel">bold ✓</span> relevant in the qrels</span>'
        '<span><span class="only">italic †</span> not in the other form\'s list</span></p>',
        *(worst_pairs_html(d, open_first=(i == 0)) for i, d in enumerate(docs)),
    ]
    missing = [n for n in ("symmetry.png", "map.png", "gap.png") if n not in eval_figures]
    if missing:
        raise EvalError(f"figures not written: {missing}")
    if audit:
        body.append(audit_html(audit, audit_source or "", audit_figures))
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>Evaluation report: gendered job titles</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
