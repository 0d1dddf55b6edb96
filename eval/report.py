"""What people compare: Markdown tables shaped like the paper's Tables 2-5, PNG plots, the worst-pairs
report (the paper's Table 6) and a flat metrics file for DVC. Inputs are results documents
(``eval.evaluate.evaluate``), one per model."""

from __future__ import annotations

import json
from pathlib import Path

CORPUS_TITLES = {"masculine": "masculine corpora", "feminine": "feminine corpora"}


def load_results(paths: list[str | Path]) -> list[dict]:
    from eval.errors import EvalError

    docs = []
    for p in paths:
        try:
            doc = json.loads(Path(p).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise EvalError(f"{p}: not a readable results JSON ({exc})") from None
        missing = [k for k in ("toolkit", "model", "testset", "settings", "languages") if not isinstance(doc, dict) or k not in doc]
        if missing:
            raise EvalError(f"{p}: not an eval results file (no {missing}); pass files written by `python -m eval run`")
        docs.append(doc)
    if not docs:
        raise EvalError("no results files given")
    # One table must not mix rankings made under different rules: say which files differ.
    for key in ("self_match", "rbo_p"):
        seen = {str(Path(p)): doc["settings"].get(key) for p, doc in zip(paths, docs)}
        if len(set(map(str, seen.values()))) > 1:
            raise EvalError(f"results were made with different {key} settings ({seen}); compare files made with the same eval settings")
    return docs


def _fmt(fig: dict | None, digits: int = 4) -> str:
    if not fig or fig.get("value") is None:
        return "–"
    return f"{fig['value']:.{digits}f}"


def _fmt_ci(fig: dict | None, digits: int = 3) -> str:
    if not fig or fig.get("value") is None:
        return "–"
    lo, hi = fig["ci95"]
    return f"{fig['value']:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _langs(docs: list[dict]) -> list[str]:
    return sorted({lang for d in docs for lang in d["languages"]})


def _rbo_name(doc: dict) -> str:
    return f"RBO(p={doc['settings']['rbo_p']:g})"


def _cell(doc: dict, lang: str, *keys: str) -> dict | None:
    node = doc["languages"].get(lang)
    for k in keys:
        if node is None:
            return None
        node = node.get(k)
    return node


GENDER_COLUMNS = (("feminine", "F"), ("masculine", "M"), ("neutral", "N"))


def _header(columns: list[str], first: str = "model") -> str:
    return f"| {first} | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns) + "\n"


def tables_markdown(docs: list[dict]) -> str:
    """The paper's tables, models x languages: 2-3 symmetry (AO, the paper's "RBO", and RBO_ext) over the
    masculine / feminine corpora, 4-5 MAP per query gender over the masculine / feminine corpora, then
    parity (MAP and acc@1 gaps with the paired tests, identical top-1). Every cell has its 95% interval."""
    langs = _langs(docs)
    lang_head = _header([lang.upper() for lang in langs])
    settings = docs[0]["settings"]
    rbo = _rbo_name(docs[0])
    out = [
        "# Evaluation results\n\n",
        f"Self-match policy: **{settings['self_match']}**; tie-break: {settings['tie_break']}; "
        f"intervals: {settings['interval']}. Test sets: "
        + ", ".join(sorted({f"{d['testset']['version']}" for d in docs}))
        + f"; toolkit {docs[0]['toolkit']['version']}.\n",
    ]
    for number, corpus in ((2, "masculine"), (3, "feminine")):
        for suffix, metric, what in (("a", "AO", "the paper's \"RBO\" formula"), ("b", rbo, "RBO_ext, top-weighted")):
            out.append(f"\n## Table {number}{suffix}: {metric} ({what}), feminine vs masculine queries over {CORPUS_TITLES[corpus]}\n")
            out.append("\nValue with bootstrap 95% interval; n = query pairs.\n\n" + lang_head)
            for d in docs:
                cells = [_fmt_ci(_cell(d, lang, "corpora", corpus, "symmetry", metric)) for lang in langs]
                out.append(f"| {d['model']['name']} | " + " | ".join(cells) + " |\n")
            ns = [str((_cell(docs[0], lang, "corpora", corpus, "symmetry", metric) or {}).get("n", "–")) for lang in langs]
            out.append("| n | " + " | ".join(ns) + " |\n")
    map_head = _header([f"{lang.upper()} {g}" for lang in langs for _, g in GENDER_COLUMNS])
    for number, corpus in ((4, "masculine"), (5, "feminine")):
        out.append(f"\n## Table {number}: MAP over {CORPUS_TITLES[corpus]}, feminine (F) / masculine (M) / neutral (N) queries\n")
        out.append("\nValue with bootstrap 95% interval over queries; n = queries with a relevant title.\n\n" + map_head)
        for d in docs:
            cells = [_fmt_ci(_cell(d, lang, "corpora", corpus, "MAP", g)) for lang in langs for g, _ in GENDER_COLUMNS]
            out.append(f"| {d['model']['name']} | " + " | ".join(cells) + " |\n")
        ns = [str((_cell(docs[0], lang, "corpora", corpus, "MAP", g) or {}).get("n", "–")) for lang in langs for g, _ in GENDER_COLUMNS]
        out.append("| n | " + " | ".join(ns) + " |\n")
    parity_head = _header(
        ["lang", "MAP_M − MAP_F", "paired AP_M − AP_F", "p", "acc@1_M − acc@1_F", "paired acc@1_M − acc@1_F", "p",
         "identical top-1", "pairs"]
    )
    for corpus in ("masculine", "feminine"):
        out.append(f"\n## Parity over {CORPUS_TITLES[corpus]}\n\n"
                   "MAP_M − MAP_F is the difference of the MAP figures above (Table 4/5: all masculine vs all feminine "
                   "queries); the paired columns average the masculine minus the feminine query's value over query "
                   "pairs, with a two-sided paired randomisation test (p). Positive: masculine queries served better.\n\n"
                   + parity_head)
        for d in docs:
            for lang in langs:
                par = _cell(d, lang, "corpora", corpus, "parity") or {}
                if not par:
                    continue
                cells = [
                    lang.upper(), _fmt_ci(par.get("MAP_M-MAP_F")), _fmt_ci(par.get("paired_AP_M-AP_F")),
                    _fmt_p(par.get("paired_AP_M-AP_F")), _fmt_ci(par.get("acc@1_M-acc@1_F")),
                    _fmt_ci(par.get("paired_acc@1_M-acc@1_F")), _fmt_p(par.get("paired_acc@1_M-acc@1_F")),
                    _fmt_ci(_cell(d, lang, "corpora", corpus, "symmetry", "identical_top1")),
                    str((par.get("paired_AP_M-AP_F") or {}).get("n", "–")),
                ]
                out.append(f"| {d['model']['name']} | " + " | ".join(cells) + " |\n")
    return "".join(out)


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
                out.append(f"\n### {p['feminine']} / {p['masculine']} — AO {p['AO']:.4f}, {rbo} {p[rbo]:.4f}{ap}\n\n")
                out.append(f"| rank | {p['feminine']} (F) | {p['masculine']} (M) |\n|---|---|---|\n")
                for r in range(max(len(fem), len(masc))):
                    f = show(fem[r], in_m) if r < len(fem) else ""
                    m = show(masc[r], in_f) if r < len(masc) else ""
                    out.append(f"| {r + 1} | {f} | {m} |\n")
    return "".join(out)


def summary_metrics(docs: list[dict]) -> dict:
    """Flat key figures per model and language, for `dvc metrics show`."""
    out: dict = {}
    for d in docs:
        rbo = _rbo_name(d)
        model = out.setdefault(d["model"]["name"], {})
        for lang, block in d["languages"].items():
            entry = model.setdefault(lang, {})
            for corpus, c in block["corpora"].items():
                parity = c["parity"]
                entry[corpus] = {
                    "AO": c["symmetry"]["AO"]["value"],
                    rbo: c["symmetry"][rbo]["value"],
                    "identical_top1": c["symmetry"]["identical_top1"]["value"],
                    "MAP_F": c["MAP"]["feminine"]["value"],
                    "MAP_M": c["MAP"]["masculine"]["value"],
                    "MAP_N": c["MAP"]["neutral"]["value"],
                    "MAP_M-MAP_F": parity["MAP_M-MAP_F"]["value"],
                    "paired_AP_M-AP_F": parity["paired_AP_M-AP_F"]["value"],
                    "paired_AP_M-AP_F_p": parity["paired_AP_M-AP_F"]["p_value"],
                    "acc@1_M-acc@1_F": parity["acc@1_M-acc@1_F"]["value"],
                    "paired_acc@1_M-acc@1_F_p": parity["paired_acc@1_M-acc@1_F"]["p_value"],
                }
    return out


def write_plots(docs: list[dict], folder: str | Path) -> list[Path]:
    """symmetry.png (AO and RBO per language and model, both corpora) and map.png (MAP F vs M)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    langs = _langs(docs)
    models = [d["model"]["name"] for d in docs]
    written = []

    def bars(ax, values, errs, labels, title, ylim):
        width = 0.8 / max(len(labels), 1)
        x = np.arange(len(langs))
        for i, label in enumerate(labels):
            ax.bar(x + i * width - 0.4 + width / 2, values[i], width, yerr=errs[i], capsize=3, label=label)
        ax.set_xticks(x, [lang.upper() for lang in langs])
        ax.set_title(title, fontsize=10)
        ax.set_ylim(*ylim)
        ax.grid(axis="y", alpha=0.3)

    def series(doc, lang, *keys):
        fig = _cell(doc, lang, *keys)
        if not fig or fig.get("value") is None:
            return np.nan, (0.0, 0.0)
        return fig["value"], (fig["value"] - fig["ci95"][0], fig["ci95"][1] - fig["value"])

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharey="row")
    for row, metric in enumerate(("AO", _rbo_name(docs[0]))):
        for col, corpus in enumerate(("masculine", "feminine")):
            vals, errs = [], []
            for d in docs:
                pts = [series(d, lang, "corpora", corpus, "symmetry", metric) for lang in langs]
                vals.append([p[0] for p in pts])
                errs.append(np.array([p[1] for p in pts]).T)
            bars(axes[row, col], vals, errs, models, f"{metric}, F vs M queries, {CORPUS_TITLES[corpus]}", (0, 1.05))
    axes[0, 0].legend(fontsize=8, loc="lower left")
    fig.suptitle(f"Symmetry per language and model (95% bootstrap CI; self-match {docs[0]['settings']['self_match']})")
    fig.tight_layout()
    path = folder / "symmetry.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)

    # MAP F vs M: one colour per model, one marker per language; both axes zoomed to the same range so the
    # diagonal (F = M) stays at 45 degrees and small gaps are visible.
    markers = "osD^v<>pPX*h"
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    points = [
        (di, li, corpus, series(d, lang, "corpora", corpus, "MAP", "feminine"), series(d, lang, "corpora", corpus, "MAP", "masculine"))
        for di, d in enumerate(docs) for li, lang in enumerate(langs) for corpus in ("masculine", "feminine")
    ]
    ends = [end for *_, fem, masc in points for v, (below, above) in (fem, masc) if v == v for end in (v - below, v + above)]
    lo, hi = (min(ends), max(ends)) if ends else (0.0, 1.0)
    pad = max(0.02, 0.08 * (hi - lo))
    lim = (max(0.0, lo - pad), min(1.0, hi + pad))
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharey=True)
    for col, corpus in enumerate(("masculine", "feminine")):
        ax = axes[col]
        for di, li, c, (f, ferr), (m, merr) in points:
            if c != corpus:
                continue
            ax.errorbar(m, f, xerr=np.array([merr]).T, yerr=np.array([ferr]).T, fmt=markers[li % len(markers)],
                        color=colours[di % len(colours)], capsize=3, ms=7, label=f"{models[di]} {langs[li].upper()}")
        ax.plot(lim, lim, color="grey", lw=0.8, ls="--")
        ax.set_xlim(*lim)
        ax.set_ylim(*lim)
        ax.set_aspect("equal")
        ax.set_xlabel("MAP, masculine queries")
        ax.set_title(f"MAP over {CORPUS_TITLES[corpus]} (below the diagonal: F worse)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("MAP, feminine queries")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.suptitle("MAP, feminine vs masculine queries per language and model (95% bootstrap CI)")
    fig.tight_layout()
    path = folder / "map.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written
