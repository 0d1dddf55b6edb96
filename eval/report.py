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
        if not isinstance(doc, dict) or "languages" not in doc or "model" not in doc:
            raise EvalError(f"{p}: not an eval results file (no 'model'/'languages'); pass files written by `python -m eval run`")
        docs.append(doc)
    if not docs:
        raise EvalError("no results files given")
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


def tables_markdown(docs: list[dict]) -> str:
    """Tables 2-3 (symmetry over masculine / feminine corpora), 4-5 (MAP F / M), parity, with settings."""
    langs = _langs(docs)
    head = "| model | " + " | ".join(lang.upper() for lang in langs) + " |\n|---|" + "---|" * len(langs) + "\n"
    settings = docs[0]["settings"]
    out = [
        "# Evaluation results\n",
        f"Self-match policy: **{settings['self_match']}**; tie-break: {settings['tie_break']}; "
        f"intervals: {settings['interval']}. Test sets: "
        + ", ".join(sorted({f"{d['testset']['version']}" for d in docs}))
        + f"; toolkit {docs[0]['toolkit']['version']}.\n",
    ]
    n_table = 2
    for corpus in ("masculine", "feminine"):
        for metric in ("AO", _rbo_name(docs[0])):
            out.append(f"\n## Table {n_table}{'a' if metric == 'AO' else 'b'}: {metric}, feminine vs masculine queries over {CORPUS_TITLES[corpus]}\n")
            out.append("\nValue with bootstrap 95% interval; n = pairs.\n\n" + head)
            for d in docs:
                cells = [_fmt_ci(_cell(d, lang, "corpora", corpus, "symmetry", metric)) for lang in langs]
                out.append(f"| {d['model']['name']} | " + " | ".join(cells) + " |\n")
            ns = [str((_cell(docs[0], lang, "corpora", corpus, "symmetry", metric) or {}).get("n", "–")) for lang in langs]
            out.append("| n | " + " | ".join(ns) + " |\n")
        n_table += 1
    for corpus in ("masculine", "feminine"):
        out.append(f"\n## Table {n_table}: MAP over {CORPUS_TITLES[corpus]} (feminine / masculine / neutral queries)\n\n" + head)
        for d in docs:
            cells = [
                " / ".join(_fmt(_cell(d, lang, "corpora", corpus, "MAP", g)) for g in ("feminine", "masculine", "neutral"))
                for lang in langs
            ]
            out.append(f"| {d['model']['name']} | " + " | ".join(cells) + " |\n")
        ns = [
            " / ".join(str((_cell(docs[0], lang, "corpora", corpus, "MAP", g) or {}).get("n", "–")) for g in ("feminine", "masculine", "neutral"))
            for lang in langs
        ]
        out.append("| n | " + " | ".join(ns) + " |\n")
        n_table += 1
    for corpus in ("masculine", "feminine"):
        out.append(f"\n## Parity over {CORPUS_TITLES[corpus]}: MAP_M − MAP_F, acc@1_M − acc@1_F (paired randomisation p), identical top-1\n\n" + head)
        for d in docs:
            cells = []
            for lang in langs:
                par = _cell(d, lang, "corpora", corpus, "parity") or {}
                same = _cell(d, lang, "corpora", corpus, "symmetry", "identical_top1")
                mg, ag = par.get("MAP_M-MAP_F"), par.get("acc@1_M-acc@1_F")
                if not mg:
                    cells.append("–")
                    continue
                cells.append(
                    f"{_fmt_ci(mg)} (p={mg['p_value']:.3f}); {_fmt_ci(ag)} (p={ag['p_value']:.3f}); top-1 same {_fmt(same, 3)}"
                )
            out.append(f"| {d['model']['name']} | " + " | ".join(cells) + " |\n")
    return "".join(out)


def worst_pairs_markdown(doc: dict) -> str:
    """The pairs with the lowest RBO, their two top-k lists side by side (relevant items in bold)."""
    rbo = _rbo_name(doc)
    out = [f"# Least symmetric pairs: {doc['model']['name']}\n\nSelf-match policy: {doc['settings']['self_match']}; "
           f"sorted by {rbo}; **bold** = relevant in the qrels.\n"]

    def show(item: dict) -> str:
        text = item["text"].replace("|", "\\|")
        return f"**{text}**" if item["relevant"] else text

    for lang, block in sorted(doc["languages"].items()):
        for corpus, pairs in block["worst_pairs"].items():
            out.append(f"\n## {lang.upper()}, {CORPUS_TITLES[corpus]}\n")
            for p in pairs:
                out.append(f"\n### {p['feminine']} / {p['masculine']} — AO {p['AO']:.4f}, {rbo} {p[rbo]:.4f}\n\n")
                out.append(f"| rank | {p['feminine']} (F) | {p['masculine']} (M) |\n|---|---|---|\n")
                depth = max(len(p["top_feminine"]), len(p["top_masculine"]))
                for r in range(depth):
                    f = show(p["top_feminine"][r]) if r < len(p["top_feminine"]) else ""
                    m = show(p["top_masculine"][r]) if r < len(p["top_masculine"]) else ""
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
                entry[corpus] = {
                    "AO": c["symmetry"]["AO"]["value"],
                    rbo: c["symmetry"][rbo]["value"],
                    "identical_top1": c["symmetry"]["identical_top1"]["value"],
                    "MAP_F": c["MAP"]["feminine"]["value"],
                    "MAP_M": c["MAP"]["masculine"]["value"],
                    "MAP_N": c["MAP"]["neutral"]["value"],
                    "MAP_M-MAP_F": c["parity"]["MAP_M-MAP_F"]["value"],
                    "MAP_gap_p": c["parity"]["MAP_M-MAP_F"]["p_value"],
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

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for col, corpus in enumerate(("masculine", "feminine")):
        ax = axes[col]
        for d in docs:
            for lang in langs:
                f, ferr = series(d, lang, "corpora", corpus, "MAP", "feminine")
                m, merr = series(d, lang, "corpora", corpus, "MAP", "masculine")
                ax.errorbar(m, f, xerr=np.array([merr]).T, yerr=np.array([ferr]).T, fmt="o", capsize=3,
                            label=f"{d['model']['name']} {lang.upper()}")
        lim = (0, 1.02)
        ax.plot(lim, lim, color="grey", lw=0.8, ls="--")
        ax.set_xlim(*lim)
        ax.set_ylim(*lim)
        ax.set_xlabel("MAP, masculine queries")
        ax.set_title(f"MAP over {CORPUS_TITLES[corpus]} (below the diagonal: F worse)", fontsize=10)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("MAP, feminine queries")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path = folder / "map.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written
