"""The report of the pipeline's own results, as `dvc repro report` makes it: every default language, every model,
the audit. The layout checks of test_site.py run on a two-language fixture; the real page is wider (Tables 4 and
5 hold a column per language and gender), longer and has more points in each plot (issue 23: at 1280 px it
overflowed, MAP labels overlapped and "ES paper" was clipped). Here the page is rendered from the results the
pipeline commits (results/pipeline/runs: one eval document per model, eval_collect; results/pipeline/audit:
the audit document)
with this checkout's code, and checked:

- in every figure, no text (titles, tick and axis labels, legends, point labels, heatmap numbers) reaches past the
  picture's edge, and the MAP plot's point labels stay inside their axes and overlap no other label;
- in headless Chromium at 1280 px and at a phone's 390 px: no console error, the page never scrolls sideways
  (wide tables scroll in their own box), no element cuts its text off, every figure loads and fits the window.

Screenshots (the page's first 16,000 px at each width) go to the artifacts folder of test_site.py:
$SITE_SCREENSHOT_DIR, by default <system temp>/gendered-job-titles-artifacts/real-report-{1280,390}.png.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.eval.test_site import keep_artifact, render

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def committed_results() -> tuple[list[Path], Path]:
    pipeline = ROOT / "results" / "pipeline"
    runs = sorted((pipeline / "runs").glob("*.json"))
    audits = sorted((pipeline / "audit").glob("audit__*.json"))
    if not runs or len(audits) != 1:
        pytest.fail(f"{pipeline}: no committed pipeline results (runs/*.json and one audit/audit__*.json); make "
                    "them with `dvc repro report` and commit them with dvc.lock")
    return runs, audits[0]


def texts_past_the_edge(fig) -> list[str]:
    """The texts drawn in ``fig`` whose box reaches past the figure's edge (cut off in the saved PNG). Recorded as
    they are drawn: an axis keeps tick labels outside its view limits that it does not draw."""
    from matplotlib.text import Text

    drawn = []
    draw = Text.draw

    def recording_draw(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self.get_text(), self.get_window_extent(renderer)))

    Text.draw = recording_draw
    try:
        fig.canvas.draw()
    finally:
        Text.draw = draw
    width, height = fig.bbox.width, fig.bbox.height
    return [text for text, box in drawn if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1]


def test_the_real_report_fits_at_1280_and_390_px_with_no_clipped_label(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import eval.audit_report
    import eval.report
    from matplotlib.text import Text

    from eval.site import build_site

    runs, audit_path = committed_results()
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in runs]
    audit = json.loads(audit_path.read_text(encoding="utf-8"))
    # the whole report: every model of params.yaml (those the committed metrics name), every default language
    models = [d["model"]["name"] for d in docs]
    assert sorted(models) == sorted(params["eval"]["models"]), (models, params["eval"]["models"])
    assert {p.name.split(".")[0] for p in (ROOT / "results" / "metrics").glob("*.json")} == set(models)
    for doc in docs:
        assert sorted(doc["languages"]) == sorted(params["languages"]), doc["model"]["name"]
    assert sorted(audit["languages"]) == sorted(params["languages"])
    assert sorted(m["name"] for m in audit["models"]) == sorted(params["audit"]["models"])

    # every figure is checked as it is saved; the MAP plot's point labels as placed, checked when it is saved
    cut: dict[str, list[str]] = {}
    placed: list[tuple] = []
    labels: dict[str, tuple[list, list]] = {}  # panel title: (labels outside the axes, overlapping labels)
    save_png, place_labels = eval.report.save_png, eval.report.place_labels

    def recorded_place_labels(fig, ax, points, **options):
        anns = place_labels(fig, ax, points, **options)
        placed.append((ax, anns))
        return anns

    def checked_save(fig, path):
        cut[Path(path).name] = texts_past_the_edge(fig)
        for ax, anns in (placed if Path(path).name == "map.png" else []):
            renderer = fig.canvas.get_renderer()
            inside = ax.get_window_extent(renderer)
            # the texts (an annotation's extent also spans its leader line, which may pass other labels)
            boxes = [(a.update_positions(renderer), Text.get_window_extent(a, renderer))[1] for a in anns]
            assert len(anns) >= len(models) * len(langs)  # one per model and language, plus the paper's points
            outside = [a.get_text() for a, b in zip(anns, boxes)
                       if not (inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 and b.y1 <= inside.y1)]
            overlapping = [(anns[i].get_text(), anns[j].get_text()) for i in range(len(boxes)) for j in range(i)
                           if boxes[i].overlaps(boxes[j])]
            labels[ax.get_title()] = (outside, overlapping)
        save_png(fig, path)

    langs = params["languages"]
    monkeypatch.setattr(eval.report, "save_png", checked_save)
    monkeypatch.setattr(eval.audit_report, "save_png", checked_save)
    monkeypatch.setattr(eval.report, "place_labels", recorded_place_labels)
    index = build_site([*runs, audit_path], tmp_path / "site")

    expected = {f"{n}.png" for n in ("symmetry", "map", "gap")} | {
        f"{k}_{lang}.png" for k in ("correlation", "exclusion", "mitigation") for lang in langs}
    assert expected <= set(cut), sorted(expected - set(cut))
    assert {name: texts for name, texts in cut.items() if texts} == {}
    assert len(labels) == 2  # the MAP plot's two panels: masculine and feminine corpus
    assert {title: found for title, found in labels.items() if found != ([], [])} == {}

    for width in (1280, 390):
        screenshot = tmp_path / f"real-report-{width}.png"
        shown, errors = render(index, tmp_path, screenshot, width=width)
        keep_artifact(screenshot, screenshot.name)
        assert errors == []
        assert shown["external"] == []
        assert shown["page_width"] <= shown["window_width"] == width and shown["wider"] == [], (width, shown["wider"])
        assert shown["clipped"] == [], (width, shown["clipped"])
        images = {i["src"]: i for i in shown["images"]}
        assert {f"figures/{name}" for name in expected} <= set(images)
        # a figure fits the window; on a phone it keeps its own size and scrolls inside its box
        assert all(i["complete"] and i["width"] > 300 and i["box_right"] <= width
                   and (i["shown"] >= i["width"] if width < 600 else 0 < i["shown"] <= width) for i in images.values()), images
        assert shown["first_column_moved"] == [], (width, shown["first_column_moved"])
        assert any(t["caption"].startswith("Table 4: MAP") for t in shown["tables"])
        assert all(t["visible"] for t in shown["tables"])


def test_the_real_map_plot_labels_overlap_no_label_and_no_error_bar(tmp_path, monkeypatch):
    """Issue 39: on the pipeline's MAP plot (three models, seven languages, the paper's points) labels sat behind
    error bars. Every point label's text box, from matplotlib's renderer as saved, overlaps no other label, no
    interval line (its path's extent) and no cap, and stays inside its axes."""
    import matplotlib

    matplotlib.use("Agg")
    import eval.report
    from matplotlib.text import Text

    runs, _ = committed_results()
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in runs]
    found: dict[str, dict] = {}
    place_labels, save_png = eval.report.place_labels, eval.report.save_png
    placed: list[tuple] = []

    def recorded(fig, ax, points, **options):
        anns = place_labels(fig, ax, points, **options)
        placed.append((ax, anns))
        return anns

    def checked_save(fig, path):
        if Path(path).name == "map.png":
            renderer = fig.canvas.get_renderer()
            for ax, anns in placed:
                boxes = [(a.update_positions(renderer), Text.get_window_extent(a, renderer))[1] for a in anns]
                # the intervals as matplotlib draws them: each bar line's path extent, each cap's marker extent
                bars = [path.get_extents(c.get_transform()) for c in ax.collections for path in c.get_paths()]
                caps = [line.get_window_extent(renderer) for line in ax.lines if line.get_marker() in ("|", "_")]
                inside = ax.get_window_extent(renderer)
                found[ax.get_title()] = {
                    "labels": len(anns), "bars": len(bars), "caps": len(caps),
                    "outside": [a.get_text() for a, b in zip(anns, boxes) if not (
                        inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 and b.y1 <= inside.y1)],
                    "on labels": [(anns[i].get_text(), anns[j].get_text()) for i in range(len(boxes)) for j in range(i)
                                  if boxes[i].overlaps(boxes[j])],
                    "on bars": [a.get_text() for a, b in zip(anns, boxes) if any(b.overlaps(x) for x in bars + caps)]}
        save_png(fig, path)

    monkeypatch.setattr(eval.report, "place_labels", recorded)
    monkeypatch.setattr(eval.report, "save_png", checked_save)
    eval.report.write_plots(docs, tmp_path)
    assert len(found) == 2, found  # the masculine and the feminine corpus
    points = len(docs) * len(eval.report._langs(docs))
    for title, f in found.items():
        assert f["labels"] >= points and f["bars"] == 2 * points and f["caps"] == 4 * points, (title, f)
        assert (f["outside"], f["on labels"], f["on bars"]) == ([], [], []), (title, f)
