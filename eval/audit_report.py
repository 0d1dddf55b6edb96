"""Markdown tables and PNG plots of an audit document (``eval.audit.run_audit``), in the conventions of
``eval.report``: values with bootstrap 95% intervals and n, parameters named in every heading."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from eval.errors import NotANumber
from eval.report import CORPUS_TITLES, _fmt_ci, model_styles, save_png, text_colour_on, zoomed_limits


def _corr(c: dict) -> str:
    if c.get("reason"):
        return f"NaN ({c['reason']})"
    return _fmt_ci(c)


def _pct(fig: dict) -> str:
    if not fig or fig.get("value") is None:
        return "–"
    lo, hi = fig["ci95"]
    return f"{100 * fig['value']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({fig['count']}/{fig['n']})"


def audit_markdown(doc: dict) -> str:
    s, es = doc["audit_settings"], doc["eval_settings"]
    models = [m["name"] for m in doc["models"]]
    out = [
        "# Audit across models\n\n",
        f"Models: {', '.join(models)}. Test set {doc['testset']['version']}; self-match policy "
        f"**{es['self_match']}**; tie-break: {es['tie_break']}; intervals: {s['interval']}.\n\n",
        f"**Served** (k = {s['k']}, ρ = {s['rho']:g}, τ = {s['tau']}): {s['served']}.\n",
    ]
    for lang, block in sorted(doc["languages"].items()):
        for corpus, c in block["corpora"].items():
            head = f"{lang.upper()}, {CORPUS_TITLES[corpus]}"
            out.append(f"\n## {head}: mean asymmetry per model ({c['pairs']} pairs)\n\n")
            out.append("| model | " + " | ".join(c["mean"]) + " |\n|---|" + "---|" * len(c["mean"]) + "\n")
            for name in models:
                out.append(f"| {name} | " + " | ".join(_fmt_ci(c["mean"][m][name]) for m in c["mean"]) + " |\n")

            out.append(f"\n### {head}: correlation of per-pair vectors between models (do they fail on the same occupations?)\n\n")
            out.append("| measure | models | Pearson r [95% CI] | Spearman ρ [95% CI] | n |\n|---|---|---|---|---|\n")
            for measure, entries in c["correlation"].items():
                for e in entries:
                    out.append(f"| {measure} | {e['a']} × {e['b']} | {_corr(e['pearson'])} | {_corr(e['spearman'])} | {e['pearson']['n']} |\n")

            ex = c["exclusion"]
            out.append(
                f"\n### {head}: systemic exclusion (k = {ex['k']}, ρ = {ex['rho']:g}, τ = {ex['tau']} of {ex['models']} models)\n\n"
                f"{ex['pairs_scored']} pairs scored, {ex['pairs_left_out']} left out (a form without relevant titles).\n\n"
                "| share of pairs | value [95% CI] (count/n) |\n|---|---|\n"
                f"| feminine excluded (F failed, M served, by ≥ τ models) | {_pct(ex['feminine_excluded'])} |\n"
                f"| masculine excluded (M failed, F served, by ≥ τ models) | {_pct(ex['masculine_excluded'])} |\n"
                f"| difference F − M | {_fmt_ci(ex['difference_F-M'])} |\n"
                f"| both forms failed by ≥ τ models (not a gender gap) | {_pct(ex['both_failed'])} |\n"
            )
            out.append("\nServed share per model (masculine / feminine queries): " + "; ".join(
                f"{n} {v['masculine']:.3f} / {v['feminine']:.3f}" for n, v in ex["served_share_per_model"].items()
                if v["masculine"] is not None) + ".\n")
            grid = ex["grid"]
            out.append(f"\nFeminine-excluded share (in brackets: masculine-excluded) over ρ (rows) × τ (columns), k = {grid['k']}:\n\n")
            out.append("| ρ \\ τ | " + " | ".join(str(t) for t in grid["tau"]) + " |\n|---|" + "---|" * len(grid["tau"]) + "\n")
            for rho, row_f, row_m in zip(grid["rho"], grid["feminine_excluded"], grid["masculine_excluded"]):
                cells = [f"{f:.3f} (M {m:.3f})" if f is not None else "–" for f, m in zip(row_f, row_m)]
                out.append(f"| {rho:g} | " + " | ".join(cells) + " |\n")
            for direction in ("feminine", "masculine"):
                rows = c["most_excluded"][direction]
                out.append(f"\nMost often {direction}-excluded occupations (k = {ex['k']}, ρ = {ex['rho']:g}; ordered by the "
                           f"number of models excluding the pair, τ = {ex['tau']} marks a systemic exclusion):")
                if not rows:
                    out.append(" none.\n")
                    continue
                out.append("\n\n| feminine | masculine | English | models excluding | AP failed form / served form |\n|---|---|---|---|---|\n")
                for r in rows:
                    aps = "; ".join(f"{n} {r['AP_failed_form'][n]:.3f}/{r['AP_served_form'][n]:.3f}" for n in r["models"])
                    out.append(f"| {r['feminine']} | {r['masculine']} | {', '.join(r['english'])} | {r['models_excluding']} | {aps} |\n")
            if c.get("forms"):
                out.append(forms_exclusion_markdown(head, c["forms"], ex))
        if "mitigation" in block:
            out.append(mitigation_markdown(lang, block["mitigation"], es))
    return "".join(out)


def forms_exclusion_markdown(head: str, forms: dict, ex: dict) -> str:
    """The pairs each extra query form (doublet, neomorpheme) excludes, beside its masculine / feminine query."""
    out = [f"\n### {head}: pairs the extra query forms exclude (k = {ex['k']}, ρ = {ex['rho']:g}, τ = {ex['tau']} of "
           f"{ex['models']} models)\n\nA (form, masculine or feminine query) pair of one occupation is form-excluded when "
           "≥ τ models serve the masculine (feminine) query and fail the form's, reference-excluded the reverse.\n\n"
           "| form | vs | pairs scored | form excluded | reference excluded | both failed |\n|---|---|---|---|---|---|\n"]
    for form, sides in forms.items():
        for side, f in sides.items():
            out.append(f"| {form} | {side[3:]} | {f['pairs_scored']} | {_pct(f['form_excluded'])} | "
                       f"{_pct(f['reference_excluded'])} | {_pct(f['both_failed'])} |\n")
    return "".join(out)


def mitigation_markdown(lang: str, mit: dict, es: dict) -> str:
    rbo = f"RBO(p={es['rbo_p']:g})"
    ch = mit["changes"]
    out = [
        f"\n## {lang.upper()}: mitigation by normalisation (rules `{mit['rules']}`, docs/audit.md)\n\n",
        f"Texts changed by the rules: queries F {ch['queries']['feminine']['changed']}/{ch['queries']['feminine']['items']}, "
        f"M {ch['queries']['masculine']['changed']}/{ch['queries']['masculine']['items']}, "
        f"N {ch['queries']['neutral']['changed']}/{ch['queries']['neutral']['items']}; corpus F "
        f"{ch['corpus']['feminine']['changed']}/{ch['corpus']['feminine']['items']}, M "
        f"{ch['corpus']['masculine']['changed']}/{ch['corpus']['masculine']['items']}, N "
        f"{ch['corpus']['neutral']['changed']}/{ch['corpus']['neutral']['items']} (a changed masculine or neutral text is "
        "an over-normalisation or the repair of a translation's agreement error). Duplicate texts after normalisation: "
        f"masculine corpus {ch['corpus_duplicate_texts']['masculine']}, feminine corpus "
        f"{ch['corpus_duplicate_texts']['feminine']}.\n\n",
        f"**{mit['pairs_identical_after']} of {mit['pairs']} query pairs became identical strings.** Their symmetry "
        "after normalisation is 1.0 *by construction* (one string, one embedding, one ranking): that is a "
        "tautology, not an effect of the mitigation, and they are left out of the effect estimate. Only the "
        f"{mit['pairs'] - mit['pairs_identical_after']} pairs that still differ measure a real effect.\n",
    ]
    for corpus in ("masculine", "feminine"):
        out.append(f"\n### {lang.upper()}, {CORPUS_TITLES[corpus]}: before → after\n\n")
        out.append(f"| model | identical: n, AO after (by construction) | still different: n | AO before | AO after | change | "
                   f"{rbo} before | {rbo} after | change | AP_M−AP_F before → after |\n|---|---|---|---|---|---|---|---|---|---|\n")
        for name, per_corpus in mit["models"].items():
            m = per_corpus[corpus]
            same, diff = m["identical_after_normalisation"], m["still_different"]
            out.append(
                f"| {name} | {same['n']}, {_fmt_ci(same['AO_after'])} | {diff['n']} | {_fmt_ci(diff['AO']['before'])} | "
                f"{_fmt_ci(diff['AO']['after'])} | {_fmt_ci(diff['AO']['change'])} | {_fmt_ci(diff[rbo]['before'])} | "
                f"{_fmt_ci(diff[rbo]['after'])} | {_fmt_ci(diff[rbo]['change'])} | "
                f"{_fmt_ci(diff['AP_M-AP_F']['before'])} → {_fmt_ci(diff['AP_M-AP_F']['after'])} |\n"
            )
        out.append("\nMAP and accuracy over all queries (feminine / masculine), before → after; the feminine figures "
                   "include the pairs made identical:\n\n| model | MAP F | MAP M | acc@1 F | acc@1 M |\n|---|---|---|---|---|\n")
        for name, per_corpus in mit["models"].items():
            m = per_corpus[corpus]
            cells = [f"{_fmt_ci(m['MAP'][g]['before'])} → {_fmt_ci(m['MAP'][g]['after'])}" for g in ("feminine", "masculine")]
            cells += [f"{_fmt_ci(m['accuracy']['acc@1'][g]['before'])} → {_fmt_ci(m['accuracy']['acc@1'][g]['after'])}"
                      for g in ("feminine", "masculine")]
            out.append(f"| {name} | " + " | ".join(cells) + " |\n")
        out.append("\nMAP and acc@1 of the pairs that still differ (the real measurement; the made-identical pairs left out), "
                   "before → after (change):\n\n| model | MAP F | MAP M | acc@1 F | acc@1 M |\n|---|---|---|---|---|\n")
        for name, per_corpus in mit["models"].items():
            diff = per_corpus[corpus]["still_different"]
            cells = [f"{_fmt_ci(diff[key]['before'])} → {_fmt_ci(diff[key]['after'])} ({_fmt_ci(diff[key]['change'])})"
                     for key in ("MAP_F", "MAP_M", "acc@1_F", "acc@1_M")]
            out.append(f"| {name} | " + " | ".join(cells) + " |\n")
    if mit["pairs_still_different"]:
        out.append("\nPairs that still differ after normalisation (masculine / feminine → normalised feminine): "
                   + "; ".join(f"{p['masculine']} / {p['feminine']} → {p['feminine_normalised']}" for p in mit["pairs_still_different"])
                   + ".\n")
    return "".join(out)


def _label_cells(ax, image, mat, spec: str, missing: str) -> None:
    """Write each cell's value on a heatmap, white on dark cells and black on light ones."""
    import numpy as np

    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            value = mat[i, j]
            colour = "black" if np.isnan(value) else text_colour_on(image.cmap(image.norm(value)))
            # 11 pt: the figures are shown scaled down to the page's width, and the numbers must stay readable
            ax.text(j, i, missing if np.isnan(value) else spec.format(value), ha="center", va="center", fontsize=11, color=colour)


def _colour_model_ticks(ax, styles: dict) -> None:
    """Model names on the axes in the model's colour, as in every other figure."""
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        style = styles.get(label.get_text())
        if style:
            label.set_color(style["color"])


def _plotted(value, where: str, *, missing_ok: bool = True) -> float:
    """A value a figure draws: eval's null (no value) is NaN, a finite number is itself, anything else (a string,
    a list, a NaN written into the file) is refused."""
    if value is None and missing_ok:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise NotANumber(f"{where} is {value!r:.60} where a number belongs")
    return float(value)


@dataclass(frozen=True)
class LanguageFigures:
    """What the audit figures of one language draw, read out of the audit document and checked."""

    lang: str
    corpora: list[str]
    measures: list[str]
    pairs: object  # the pairs correlated, as the document names them (printed in a title)
    correlation: dict  # (corpus, measure) -> model x model matrix: upper triangle Pearson, lower Spearman
    exclusion: dict  # (corpus, direction) -> rho x tau matrix of shares
    rho: list[float]
    tau: list[float]
    vmax: float  # the exclusion heatmaps' one colour scale
    mitigation: MitigationFigure | None


@dataclass(frozen=True)
class MitigationFigure:
    """The values of one language's before/after figure (``mitigation_figure``)."""

    rules: object
    pairs_identical: object  # as written (the titles print them)
    pairs_different: object
    # (corpus, panel) -> (bar labels, values [label][model], error bars [label][model] as (below, above))
    panels: dict


@dataclass(frozen=True)
class AuditFigures:
    """Every value the audit figures draw: read (and refused when malformed) before any figure is drawn, so a
    damaged audit file stops a report at once, not after the eval figures (seconds each)."""

    models: list[str]
    k: object  # the audit's settings as written (the titles print them)
    rho: object
    tau: object
    rbo_name: str
    languages: list[LanguageFigures]


MITIGATION_CORPORA = ("masculine", "feminine")


def mitigation_panels(rbo_name: str) -> dict:
    """The mitigation figure's columns: the two measures each panel shows before and after."""
    return {"symmetry": ("AO", rbo_name), "MAP": ("MAP_F", "MAP_M"), "acc@1": ("acc@1_F", "acc@1_M")}


def mitigation_values(lang: str, mit: dict, models: list[str], rbo_name: str) -> MitigationFigure:
    for key in ("pairs_identical_after", "pairs"):
        _plotted(mit[key], f"languages.{lang}.mitigation.{key}", missing_ok=False)
    n_same = mit["pairs_identical_after"]
    n_diff = mit["pairs"] - n_same
    panels = {}
    for corpus in MITIGATION_CORPORA:
        for panel, metrics in mitigation_panels(rbo_name).items():
            labels, vals, errs = [], [], []
            for metric in metrics:
                for phase in ("before", "after"):
                    labels.append(f"{metric}\n{phase}")
                    row_v, row_e = [], []
                    for name in models:
                        where = f"languages.{lang}.mitigation.models.{name}.{corpus}.still_different.{metric}.{phase}"
                        f = mit["models"][name][corpus]["still_different"][metric][phase]
                        v = _plotted(f["value"], f"{where}.value")
                        row_v.append(v)
                        if f["value"] is None:
                            row_e.append((0.0, 0.0))
                        else:
                            lo, hi = f["ci95"]  # a pair, or the unpacking refuses it
                            row_e.append((v - _plotted(lo, f"{where}.ci95[0]", missing_ok=False),
                                          _plotted(hi, f"{where}.ci95[1]", missing_ok=False) - v))
                    vals.append(row_v)
                    errs.append(row_e)
            panels[corpus, panel] = (labels, vals, errs)
    return MitigationFigure(mit["rules"], n_same, n_diff, panels)


def audit_figures(doc: dict) -> AuditFigures:
    """Read every value the audit figures draw out of ``doc``, refusing a malformed one (a missing key, a string
    where a number belongs, a grid that is not ρ × τ); nothing is drawn."""
    import numpy as np

    models = [m["name"] for m in doc["models"]]
    s = doc["audit_settings"]
    for key in ("k", "rho", "tau"):
        _plotted(s[key], f"audit_settings.{key}", missing_ok=False)
    rbo_name = f"RBO(p={_plotted(doc['eval_settings']['rbo_p'], 'eval_settings.rbo_p', missing_ok=False):g})"
    languages = []
    for lang, block in sorted(doc["languages"].items()):
        corpora = list(block["corpora"])
        measures = list(block["corpora"][corpora[0]]["correlation"])
        correlation = {}
        for corpus in corpora:
            for measure in measures:
                mat = np.eye(len(models))
                for e in block["corpora"][corpus]["correlation"][measure]:
                    where = f"languages.{lang}.corpora.{corpus}.correlation.{measure}"
                    if e["a"] not in models or e["b"] not in models:
                        raise NotANumber(f"{where} names a model pair {e['a']!r:.40} × {e['b']!r:.40} not among the audit's "
                                         f"models {models}")
                    i, j = models.index(e["a"]), models.index(e["b"])
                    mat[i, j] = _plotted(e["pearson"]["value"], f"{where}.pearson.value")
                    mat[j, i] = _plotted(e["spearman"]["value"], f"{where}.spearman.value")
                correlation[corpus, measure] = mat
        grid_rho = grid_tau = None
        exclusion = {}
        for corpus in corpora:
            grid = block["corpora"][corpus]["exclusion"]["grid"]
            where = f"languages.{lang}.corpora.{corpus}.exclusion.grid"
            rhos = [_plotted(v, f"{where}.rho", missing_ok=False) for v in grid["rho"]]
            taus = [_plotted(v, f"{where}.tau", missing_ok=False) for v in grid["tau"]]
            grid_rho, grid_tau = grid["rho"], grid["tau"]  # as written: the ticks print them
            for direction in ("feminine_excluded", "masculine_excluded"):
                rows = grid[direction]
                if not isinstance(rows, list) or len(rows) != len(rhos) or any(
                        not isinstance(row, list) or len(row) != len(taus) for row in rows):
                    raise NotANumber(f"{where}.{direction} is not a {len(rhos)} × {len(taus)} grid (ρ × τ)")
                exclusion[corpus, direction] = np.array(
                    [[_plotted(v, f"{where}.{direction}[{i}][{j}]") for j, v in enumerate(row)] for i, row in enumerate(rows)],
                    dtype=float).reshape(len(rhos), len(taus))
        # one colour scale for the four panels: the same shade is the same share everywhere
        shares = [v for mat in exclusion.values() for v in mat.ravel() if not np.isnan(v)]
        languages.append(LanguageFigures(
            lang, corpora, measures, block["corpora"][corpora[0]]["pairs"], correlation, exclusion, grid_rho, grid_tau,
            max([0.05, *shares]), mitigation_values(lang, block["mitigation"], models, rbo_name) if "mitigation" in block else None))
    return AuditFigures(models, s["k"], s["rho"], s["tau"], rbo_name, languages)


def write_audit_plots(doc: dict | AuditFigures, folder: str | Path) -> list[Path]:
    """Per language: correlation_<lang>.png (model × model matrices), exclusion_<lang>.png (ρ × τ heatmaps),
    and with mitigation mitigation_<lang>.png (before/after on the pairs that still differ). ``doc``: the audit
    document, or its values already read by ``audit_figures``."""
    figures = doc if isinstance(doc, AuditFigures) else audit_figures(doc)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    models = figures.models
    styles = model_styles(models)
    written = []
    for block in figures.languages:
        lang, corpora, measures = block.lang, block.corpora, block.measures
        fig, axes = plt.subplots(len(corpora), len(measures), figsize=(5.2 * len(measures), 4.2 * len(corpora)), squeeze=False,
                                 layout="constrained")
        for r, corpus in enumerate(corpora):
            for col, measure in enumerate(measures):
                ax = axes[r, col]
                mat = block.correlation[corpus, measure]
                im = ax.imshow(mat, vmin=-1, vmax=1, cmap="RdBu_r")
                _label_cells(ax, im, mat, "{:.2f}", "NaN")
                ax.set_xticks(range(len(models)), models, rotation=30, ha="right", fontsize=9)
                ax.set_yticks(range(len(models)), models, fontsize=9)
                _colour_model_ticks(ax, styles)
                ax.set_title(f"{measure}, {CORPUS_TITLES[corpus]}", fontsize=9)
        fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.6)
        fig.suptitle(f"{lang.upper()}: correlation of per-pair vectors between models (upper: Pearson, lower: Spearman; "
                     f"n = {block.pairs} pairs; independent of k, ρ, τ)", fontsize=10)
        path = folder / f"correlation_{lang}.png"
        try:
            save_png(fig, path)  # whole or not at all
        finally:
            plt.close(fig)
        written.append(path)

        fig, axes = plt.subplots(len(corpora), 2, figsize=(9, 3.6 * len(corpora)), squeeze=False)
        for r, corpus in enumerate(corpora):
            for col, direction in enumerate(("feminine_excluded", "masculine_excluded")):
                ax = axes[r, col]
                mat = block.exclusion[corpus, direction]
                im = ax.imshow(mat, vmin=0, vmax=block.vmax, cmap="Reds", aspect="auto")
                _label_cells(ax, im, mat, "{:.2f}", "–")
                if figures.rho in block.rho and figures.tau in block.tau:  # the reported setting, outlined
                    i, j = block.rho.index(figures.rho), block.tau.index(figures.tau)
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2))
                ax.set_xticks(range(len(block.tau)), [str(t) for t in block.tau])
                ax.set_yticks(range(len(block.rho)), [f"{v:g}" for v in block.rho])
                ax.set_xlabel(f"τ (models of {len(models)})")
                ax.set_ylabel("ρ (AP threshold)")
                ax.set_title(f"{direction.replace('_', ' ')}, {CORPUS_TITLES[corpus]}", fontsize=9)
                fig.colorbar(im, ax=ax, shrink=0.8)
        fig.suptitle(f"{lang.upper()}: share of pairs excluded by ≥ τ models (k = {figures.k}; reported setting "
                     f"ρ = {figures.rho:g}, τ = {figures.tau} outlined)", fontsize=10)
        fig.tight_layout()
        path = folder / f"exclusion_{lang}.png"
        try:
            save_png(fig, path)  # whole or not at all
        finally:
            plt.close(fig)
        written.append(path)

        if block.mitigation is None:
            continue
        fig = _mitigation_figure(lang, block.mitigation, models, figures.rbo_name)
        path = folder / f"mitigation_{lang}.png"
        try:
            save_png(fig, path)  # whole or not at all
        finally:
            plt.close(fig)
        written.append(path)
    return written


def mitigation_figure(lang: str, mit: dict, models: list[str], rbo_name: str):
    """The before/after figure of one language: rows are the corpus variants (masculine, feminine), columns
    the panels (symmetry AO and RBO; MAP of each form; acc@1 of each form), bars
    per model with bootstrap 95% intervals, over the pairs that still differ after normalisation only.
    The pairs made identical are named in each title (1.0 by construction) and not drawn."""
    return _mitigation_figure(lang, mitigation_values(lang, mit, models, rbo_name), models, rbo_name)


def _mitigation_figure(lang: str, values: MitigationFigure, models: list[str], rbo_name: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    panels = mitigation_panels(rbo_name)
    n_same, n_diff = values.pairs_identical, values.pairs_different
    fig, axes = plt.subplots(len(MITIGATION_CORPORA), len(panels), figsize=(5.0 * len(panels), 3.9 * len(MITIGATION_CORPORA)),
                             sharey=True, squeeze=False, layout="constrained")
    styles = model_styles(models)
    ends = []
    for r, corpus in enumerate(MITIGATION_CORPORA):
        for col, panel in enumerate(panels):
            ax = axes[r, col]
            labels, vals, errs = values.panels[corpus, panel]
            x = np.arange(len(labels))
            width = 0.8 / len(models)
            for i, name in enumerate(models):
                # "after" bars hatched, so before and after differ without colour too
                ax.bar(x + i * width - 0.4 + width / 2, [v[i] for v in vals], width, yerr=np.array([e[i] for e in errs]).T,
                       capsize=3, label=name, color=styles[name]["color"], edgecolor="white",
                       hatch=["", "//"] * (len(labels) // 2))
                ends += [v[i] - e[i][0] for v, e in zip(vals, errs)] + [v[i] + e[i][1] for v, e in zip(vals, errs)]
            ax.set_xticks(x, labels, fontsize=8)
            ax.grid(axis="y", alpha=0.3)
            ax.set_title(f"{panel}, {CORPUS_TITLES[corpus]}: {n_diff} pairs still different\n"
                         f"({n_same} made identical: 1.0 by construction, not shown)", fontsize=9)
    # zoomed to the bars and their intervals (shared by every panel): a change of 0.01 must be visible
    axes[0, 0].set_ylim(*zoomed_limits(ends, 0.0, 1.02))
    axes[0, 0].set_ylabel("value (axis zoomed, not from 0)", fontsize=8)
    axes[1, 0].set_ylabel("value (axis zoomed, not from 0)", fontsize=8)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncols=len(models), fontsize=8)
    fig.suptitle(f"{lang.upper()}: before/after normalisation (rules {values.rules}), only the pairs that still differ; "
                 "MAP and acc@1 of the masculine (M) and feminine (F) form of those pairs "
                 "(95% bootstrap CI; independent of k, ρ, τ)", fontsize=10)
    return fig


def forms_exclusion_summary(doc: dict) -> str:
    """One table over languages of the pairs each extra query form excludes (counts of form-excluded /
    reference-excluded / both-failed pairs out of those scored), per corpus variant and reference form."""
    s = doc["audit_settings"]
    out = [f"| lang | corpus | form | vs | form excluded | reference excluded | both failed | pairs |\n"
           "|---|---|---|---|---|---|---|---|\n"]
    for lang, block in sorted(doc["languages"].items()):
        for corpus, c in block["corpora"].items():
            for form, sides in (c.get("forms") or {}).items():
                for side, f in sides.items():
                    out.append(f"| {lang.upper()} | {corpus} | {form} | {side[3:]} | {f['form_excluded']['count']} | "
                               f"{f['reference_excluded']['count']} | {f['both_failed']['count']} | {f['pairs_scored']} |\n")
    return (f"k = {s['k']}, ρ = {s['rho']:g}, τ = {s['tau']} of {len(doc['models'])} models "
            f"({', '.join(m['name'] for m in doc['models'])}).\n\n" + "".join(out))
