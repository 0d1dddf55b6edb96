"""`python -m eval report`: the static site, rendered in headless Chromium (Debian `chromium`).

Chromium is driven over its DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages ended by a
NUL byte on file descriptors 3 and 4), so the test needs nothing beyond the browser and the standard
library. The page must load from file:// with no console error, show its tables and figures (every image
decoded), and a full-page screenshot is kept: its path is printed (pytest -s, or the captured output of a
failure): it is copied out of pytest's tmp folders to $SITE_SCREENSHOT_DIR, by default
<system temp>/gendered-job-titles-artifacts/eval-site.png.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from eval.report import model_styles, text_colour_on, zoomed_limits
from tests.cli_errors import one_error_line

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--remote-debugging-pipe"]


class Chromium:
    """One headless Chromium with a page, spoken to over the DevTools pipe."""

    def __init__(self, profile: Path, timeout: float = 60.0):
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if exe is None:
            pytest.fail("chromium not found: apt-get install chromium (scripts/setup.sh installs it when missing)")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # fds 3 and 4 in the child, whatever numbers the pipes got here
        high_r, high_w = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)

        def child_fds():
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"], preexec_fn=child_fds,
                                     close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_browser_r, from_browser_w, high_r, high_w):
            os.close(fd)
        self.timeout = timeout
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed the DevTools pipe (exit status {self.proc.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: str | None = None, **params) -> dict:
        self._next_id += 1
        request = {"id": self._next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = session
        os.write(self._to_browser, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def page(self, method: str, **params) -> dict:
        return self.call(method, session=self.session, **params)

    def wait_for(self, event: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == event for e in self.events):
            self.events.append(self._read_message(deadline))

    def console_errors(self) -> list[str]:
        errors = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(json.dumps(params["exceptionDetails"])[:300])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                errors.append(f"{params['entry']['text']} {params['entry'].get('url', '')}")
        return errors

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def render(index: Path, tmp: Path, screenshot: Path, width: int = 1280) -> tuple[dict, list[str]]:
    """Open ``index`` from file:// in a window ``width`` px wide (mobile emulation under 600 px), return what the
    page shows and the console errors; save a full-page PNG."""
    browser = Chromium(tmp / f"chromium-profile-{width}")
    mobile = width < 600
    try:
        for domain in ("Page", "Runtime", "Log"):
            browser.page(f"{domain}.enable")
        browser.page("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=mobile)
        browser.page("Page.navigate", url=index.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        shown = browser.page("Runtime.evaluate", returnByValue=True, expression="""JSON.stringify({
            tables: Array.from(document.querySelectorAll('table')).map(t => ({
                caption: t.caption ? t.caption.textContent : '', rows: t.rows.length,
                visible: t.getBoundingClientRect().height > 0 || t.closest('details:not([open])') !== null})),
            images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), complete: i.complete,
                width: i.naturalWidth, shown: i.getBoundingClientRect().width,
                box_right: (i.closest('figure') || i).getBoundingClientRect().right})),
            headings: Array.from(document.querySelectorAll('h2')).map(h => h.textContent),
            relevant: document.querySelectorAll('details[open] .rel').length,
            only_in_one_list: document.querySelectorAll('details[open] .only').length,
            external: Array.from(document.querySelectorAll('[src],[href]')).map(e => e.getAttribute('src') || e.getAttribute('href'))
                .filter(u => /^[a-z]+:/i.test(u)),
            height: document.documentElement.scrollHeight,
            page_width: document.documentElement.scrollWidth, window_width: window.innerWidth,
            // what sticks out of the page: an element whose right edge is past the window (what a table or a
            // figure holds scrolls inside it; the table or figure itself must fit)
            wider: Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right >
                window.innerWidth + 0.5 && !(e.parentElement.closest('table, figure'))).map(e => e.tagName + ' ' +
                e.textContent.slice(0, 40)).slice(0, 5),
            // a table scrolled to its end keeps its first column (the model) where it was
            first_column_moved: Array.from(document.querySelectorAll('table')).filter(t => t.scrollWidth > t.clientWidth
                && t.getBoundingClientRect().height > 0).filter(t => {
                const cell = t.rows[0].cells[0], before = cell.getBoundingClientRect().left;
                t.scrollLeft = t.scrollWidth;
                const moved = Math.abs(cell.getBoundingClientRect().left - before) > 0.5 || t.scrollLeft === 0;
                t.scrollLeft = 0;
                return moved;
            }).map(t => t.caption ? t.caption.textContent.slice(0, 40) : t.id),
            // text cut off by its own box: content wider or taller than an element that hides its overflow (a
            // table that scrolls is not cut: its overflow is auto)
            clipped: Array.from(document.querySelectorAll('body *')).filter(e => {
                const st = getComputedStyle(e);
                return (['hidden', 'clip'].includes(st.overflowX) && e.scrollWidth > e.clientWidth + 1)
                    || (['hidden', 'clip'].includes(st.overflowY) && e.scrollHeight > e.clientHeight + 1)
                    || st.textOverflow === 'ellipsis';
            }).concat(Array.from(document.querySelectorAll('table')).filter(t => {
                // a table's title whose text reaches past the box the table scrolls in: cut off until one scrolls
                if (!t.caption) return false;
                const text = document.createRange();
                text.selectNodeContents(t.caption);
                return text.getBoundingClientRect().right > t.getBoundingClientRect().left + t.clientWidth + 1;
            }).map(t => t.caption))
              .map(e => e.tagName + ' ' + e.textContent.slice(0, 40)).slice(0, 5),
            // wide tables scroll inside their own box
            scrolling_tables: Array.from(document.querySelectorAll('table')).filter(t => t.scrollWidth > t.clientWidth
                && getComputedStyle(t).overflowX === 'auto').length,
            cell_text_px: Array.from(document.querySelectorAll('td')).slice(0, 50).map(td =>
                parseFloat(getComputedStyle(td).fontSize)),
            notes: Array.from(document.querySelectorAll('p.note')).map(p => p.textContent),
            // each n row of a table: its label and cells
            n_rows: Object.fromEntries(Array.from(document.querySelectorAll('table')).filter(t => t.id).map(t => [t.id,
                Array.from(t.querySelectorAll('tr.n')).map(r => Array.from(r.cells).map(c => c.textContent))]))})""")["result"]["value"]
        shown = json.loads(shown)
        height = min(shown["height"], 16000)
        browser.page("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=mobile)
        png = browser.page("Page.captureScreenshot", format="png")["data"]
        screenshot.write_bytes(base64.b64decode(png))
        return shown, browser.console_errors()
    finally:
        browser.close()


def keep_artifact(screenshot: Path, name: str = "eval-site.png") -> Path:
    """Copy the screenshot out of pytest's rotating tmp folders, to $SITE_SCREENSHOT_DIR or the system temp folder."""
    folder = Path(os.environ.get("SITE_SCREENSHOT_DIR") or Path(tempfile.gettempdir()) / "gendered-job-titles-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    kept = Path(shutil.copy(screenshot, folder / name))
    print(f"site screenshot: {kept}")
    return kept


def run_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eval", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Real runs of two models on the inline PT and ES sets, and a real audit of them, written by the CLI."""
    from tests.eval.testsets import make_testset
    from eval.testset import write_testset

    tmp = tmp_path_factory.mktemp("site-results")
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), tmp / "data")
    params = tmp / "params.yaml"
    params.write_text("eval:\n  bootstrap_resamples: 200\n  permutation_resamples: 500\n  worst_pairs: 3\n  list_depth: 5\n"
                      "audit:\n  tau: 1\n", encoding="utf-8")
    r = run_cli("run", "--data", str(tmp / "data"), "--model", "tfidf-char", "--model", "m-use", "--out", str(tmp / "runs"),
                "--cache", str(tmp / "cache"), "--params", str(params), "--quiet")
    assert r.returncode == 0, r.stderr
    r = run_cli("audit", "--data", str(tmp / "data"), "--models", "tfidf-char,m-use", "--out", str(tmp / "audit"),
                "--cache", str(tmp / "cache"), "--params", str(params), "--quiet")
    assert r.returncode == 0, r.stderr
    return tmp


def test_site_renders_in_chromium_with_tables_figures_and_no_console_error(results, tmp_path):
    site = tmp_path / "site"
    r = run_cli("report", str(results / "runs"), str(results / "audit"), "--out", str(site))
    assert r.returncode == 0, r.stderr
    index = site / "index.html"
    assert f"wrote {index}" in r.stdout
    screenshot = tmp_path / "site.png"
    shown, errors = render(index, tmp_path, screenshot)
    keep_artifact(screenshot)
    assert errors == []
    assert shown["external"] == []  # nothing from the network: the page works from file:// offline
    captions = [t["caption"] for t in shown["tables"]]
    for table in ("Table 2a: AO", "Table 2b: RBO(p=0.98)", "Table 3a", "Table 3b", "Table 4: MAP", "Table 5: MAP",
                  "Parity over masculine", "Parity over feminine", "PT: correlation", "PT: systemic exclusion",
                  "PT: pairs that still differ"):
        assert any(c.startswith(table) for c in captions), (table, captions)
    # a row per model plus the n row; m-use gets the paper's Table 2 row too
    table2a = next(t for t in shown["tables"] if t["caption"].startswith("Table 2a"))
    assert table2a["rows"] == 1 + 2 + 1 + 1
    images = {i["src"]: i for i in shown["images"]}
    expected = {f"figures/{n}.png" for n in ("symmetry", "map", "gap")} | {
        f"figures/{k}_{lang}.png" for k in ("correlation", "exclusion", "mitigation") for lang in ("pt", "es")}
    assert set(images) == expected
    assert all(i["complete"] and i["width"] > 300 and i["shown"] > 300 for i in images.values()), images
    assert shown["headings"][:4] == ["Symmetry: do the feminine and masculine query get the same ranking?", "MAP per query gender",
                                     "Parity: the paired gap and its test", "Least symmetric pairs, lists side by side"]
    assert shown["relevant"] > 0 and shown["only_in_one_list"] > 0
    # The screenshot shows the figures: each model's colour covers a visible area of it.
    pixels = np.asarray(Image.open(screenshot).convert("RGB")).reshape(-1, 3)
    assert Image.open(screenshot).size[0] == 1280 and Image.open(screenshot).size[1] > 3000
    for name, style in model_styles(["tfidf-char", "m-use"]).items():
        rgb = np.array([int(style["color"][i:i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(pixels.astype(int) - rgb).sum(axis=1) < 30).sum() > 500, name
    # At 1280 px and at a phone's 390 px the page never scrolls sideways: wide tables scroll in their own box
    # (the screenshots stay under tmp_path: site.png, site-390.png).
    assert shown["page_width"] <= shown["window_width"] == 1280 and shown["wider"] == [], shown["wider"]
    assert shown["clipped"] == [], shown["clipped"]
    phone, errors = render(index, tmp_path, tmp_path / "site-390.png", width=390)
    assert errors == []
    assert phone["page_width"] <= phone["window_width"] == 390 and phone["wider"] == [], phone["wider"]
    assert phone["clipped"] == [], phone["clipped"]
    assert phone["scrolling_tables"] > 0 and min(phone["cell_text_px"]) >= 11
    # on a phone a figure keeps its own size (text as large as at 1280 px) and scrolls inside its box
    assert all(i["complete"] and i["shown"] >= i["width"] and i["box_right"] <= 390 for i in phone["images"]), phone["images"]
    assert phone["first_column_moved"] == [] and shown["first_column_moved"] == []
    assert Image.open(tmp_path / "site-390.png").size[0] == 390


@pytest.fixture(scope="module")
def mixed_results(tmp_path_factory) -> tuple[Path, Path]:
    """Two models on different sets, as a researcher compares them: tfidf-char on PT and ES, m-use on PT only and
    on another build of it that lacks the Cook queries (3 pairs, not 4). The m-use file is given first."""
    from tests.eval.testsets import make_testset
    from eval.testset import TestSet, write_testset

    tmp = tmp_path_factory.mktemp("mixed-results")
    for lang in ("pt", "es"):
        write_testset(make_testset(lang), tmp / "full")
    pt = make_testset("pt")
    queries = pt.queries.filter(~pt.queries["id"].str.contains("Cook"))
    write_testset(TestSet("pt", queries, pt.corpus, pt.qrels.filter(pt.qrels["query_id"].is_in(queries["id"])), {"lang": "pt"}),
                  tmp / "short")
    params = tmp / "params.yaml"
    params.write_text("eval:\n  bootstrap_resamples: 200\n  permutation_resamples: 500\n  worst_pairs: 3\n  list_depth: 5\n",
                      encoding="utf-8")
    for model, data, out in (("tfidf-char", "full", "a"), ("m-use", "short", "b")):
        r = run_cli("run", "--data", str(tmp / data), "--model", model, "--out", str(tmp / out), "--cache", str(tmp / "cache"),
                    "--params", str(params), "--quiet")
        assert r.returncode == 0, r.stderr
    (muse,), (tfidf,) = sorted((tmp / "b").glob("m-use__*.json")), sorted((tmp / "a").glob("tfidf-char__*.json"))
    return muse, tfidf


def test_each_model_shows_its_own_counts_and_the_page_fits_1280_and_390_px(mixed_results, tmp_path):
    """The n rows are each model's (the first file's counts were shown for every model: "–" for tfidf-char's ES,
    m-use's 3 PT pairs for tfidf-char's 4), in eval compare's tables and on the site; a kind of table has its note
    once; at 1280 and 390 px no element is wider than the window, and a wide table keeps its first column in view."""
    muse, tfidf = mixed_results
    r = run_cli("compare", str(muse), str(tfidf), "--out", str(tmp_path / "compare"))
    assert r.returncode == 0, r.stderr
    tables = (tmp_path / "compare" / "tables.md").read_text(encoding="utf-8")
    assert r.stdout.strip() == tables.strip()
    # Table 2a: query pairs per language (ES, PT); Table 4: queries with a relevant title per language and gender
    assert tables.count("| n: m-use | – | 3 |\n| n: tfidf-char | 3 | 4 |") == 4  # Tables 2a, 2b, 3a, 3b
    assert tables.count("| n: m-use | – | – | – | 3 | 3 | 1 |\n| n: tfidf-char | 3 | 3 | 0 | 4 | 4 | 1 |") == 4  # 4, 5, nDCG@10 x 2
    assert "| n |" not in tables
    assert tables.count("Value with bootstrap 95% interval; n = query pairs.") == 1  # one note for Tables 2a-3b

    site = tmp_path / "site"
    assert run_cli("report", str(muse), str(tfidf), "--out", str(site)).returncode == 0
    for width in (1280, 390):
        screenshot = tmp_path / f"mixed-{width}.png"
        shown, errors = render(site / "index.html", tmp_path, screenshot, width=width)
        keep_artifact(screenshot, f"eval-site-mixed-{width}.png")
        assert errors == []
        assert shown["n_rows"]["table-2a"] == [["n: m-use", "–", "3"], ["n: tfidf-char", "3", "4"]]
        assert shown["n_rows"]["table-4"][1] == ["n: tfidf-char", "3", "3", "0", "4", "4", "1"]
        assert len(shown["notes"]) == len(set(shown["notes"]))
        assert shown["page_width"] <= shown["window_width"] == width and shown["wider"] == [], (width, shown["wider"])
        assert shown["clipped"] == [] and shown["first_column_moved"] == [], (width, shown["clipped"], shown["first_column_moved"])
        assert all(i["box_right"] <= width for i in shown["images"]), shown["images"]
    assert shown["scrolling_tables"] > 0  # at 390 px Table 4 scrolls, its first column fixed


def test_a_missing_figure_is_a_console_error(results, tmp_path):
    """The check above can fail: a figure that does not load is reported by the browser."""
    site = tmp_path / "site"
    assert run_cli("report", str(results / "runs"), "--out", str(site)).returncode == 0
    (site / "figures" / "gap.png").unlink()
    shown, errors = render(site / "index.html", tmp_path, tmp_path / "broken.png")
    assert any("gap.png" in e or "ERR_FILE_NOT_FOUND" in e for e in errors), errors
    assert not next(i for i in shown["images"] if i["src"] == "figures/gap.png")["width"]


def test_site_is_deterministic_and_self_contained(results, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert run_cli("report", str(results / "runs"), str(results / "audit"), "--out", str(out)).returncode == 0
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    page = (a / "index.html").read_text(encoding="utf-8")
    assert str(results) not in page and str(tmp_path) not in page  # no absolute path: the folder can be moved
    assert "<script" not in page and "http://" not in page and "https://" not in page


def test_report_tables_hold_the_results_figures(results, tmp_path):
    """Cells come from the results file: value and interval of a figure, the paired p, the paper's value."""
    site = tmp_path / "site"
    assert run_cli("report", str(results / "runs"), "--out", str(site)).returncode == 0
    page = (site / "index.html").read_text(encoding="utf-8")
    doc = json.loads(next((results / "runs").glob("m-use__*.json")).read_text())
    ao = doc["languages"]["pt"]["corpora"]["masculine"]["symmetry"]["AO"]
    assert f'{ao["value"]:.3f}<span class="ci">[{ao["ci95"][0]:.3f}, {ao["ci95"][1]:.3f}]</span>' in page
    par = doc["languages"]["es"]["corpora"]["feminine"]["parity"]["paired_AP_M-AP_F"]
    assert f"{par['p_value']:.3f}" in page
    assert "paper: m-use (Table 2)" in page and "0.9016" in page and "0.9077" in page  # DESIGN §2, PT and ES
    assert "paper: m-use (Table 4)" in page and "0.3495" in page and "0.4779" in page
    assert "paper: tfidf-char" not in page  # no paper value for a model the paper did not score
    assert 'id="audit"' not in page  # no audit given, no audit section


def test_bad_inputs_are_clear_errors(results, tmp_path):
    r = run_cli("report", str(tmp_path / "nothing"), "--out", str(tmp_path / "site"))
    assert r.returncode == 2 and "nothing: no such file or folder" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1}', encoding="utf-8")
    r = run_cli("report", str(bad), "--out", str(tmp_path / "site"))
    assert r.returncode == 2 and f"error: {bad}: neither an eval results file nor an audit file" in r.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"a": ', encoding="utf-8")
    r = run_cli("report", str(broken), "--out", str(tmp_path / "site"))
    assert r.returncode == 2 and f"error: {broken}: not a readable JSON file" in r.stderr
    r = run_cli("report", str(results / "audit"), "--out", str(tmp_path / "site"))
    assert r.returncode == 2 and "no eval results among the inputs" in r.stderr
    r = run_cli("report", str(results / "runs"), str(results / "audit" / "runs"), "--out", str(tmp_path / "site"))
    assert r.returncode == 2 and "give one results file per model and test set" in r.stderr
    assert not (tmp_path / "site").exists()


def test_compare_survives_a_closed_pipe_and_writes_out(results, tmp_path):
    files = [str(p) for p in sorted((results / "runs").glob("*__*.json"))]
    printed = run_cli("compare", *files)
    assert printed.returncode == 0 and printed.stdout.startswith("# Evaluation results")
    # `| head -1` that has already gone: the reading end is closed before compare writes a byte, so every
    # write fails with EPIPE (deterministic, unlike racing a real head)
    read_end, write_end = os.pipe()
    os.close(read_end)
    out = tmp_path / "compare"
    proc = subprocess.run([sys.executable, "-m", "eval", "compare", *files, "--out", str(out)], cwd=ROOT, stdout=write_end,
                          stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(write_end)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert (out / "tables.md").read_text(encoding="utf-8") == printed.stdout.removesuffix("\n")
    assert {p.name for p in (out / "plots").iterdir()} == {"symmetry.png", "map.png", "gap.png"}


def test_help_texts_have_no_rest_markup():
    for command in ([], ["run"], ["compare"], ["audit"], ["report"]):
        r = run_cli(*command, "--help")
        assert r.returncode == 0 and "``" not in r.stdout and "`" not in r.stdout, (command, r.stdout)
    assert "python -m eval report" in run_cli("--help").stdout


def test_one_style_per_model_in_every_figure():
    both = model_styles(["tfidf-char", "m-use"])
    alone = model_styles(["m-use"])
    audit = model_styles(["m-use", "m-e5-small-q4", "tfidf-char"])
    assert both["m-use"] == alone["m-use"] == audit["m-use"] and both["tfidf-char"] == audit["tfidf-char"]
    many = model_styles([f"model-{i}" for i in range(8)] + ["m-use"])
    assert len({s["color"] for s in many.values()}) == 9 and len({s["marker"] for s in many.values()}) == 9
    assert model_styles(["x/y", "m-use"])["x/y"] == model_styles(["m-use", "x/y"])["x/y"]


def test_heatmap_text_is_white_on_dark_cells():
    # WCAG relative luminance: black text reads on white and yellow, white text on navy and dark red
    assert text_colour_on((1, 1, 1)) == "black" and text_colour_on((1, 1, 0)) == "black"
    assert text_colour_on((0, 0, 0.5)) == "white" and text_colour_on((0.5, 0, 0)) == "white"
    import matplotlib

    cmap = matplotlib.colormaps["RdBu_r"]
    assert text_colour_on(cmap(1.0)) == "white" and text_colour_on(cmap(0.5)) == "black"


def test_zoomed_limits_hold_the_data_and_not_the_whole_range():
    lo, hi = zoomed_limits([0.84, 0.86, float("nan"), 0.9016], 0.0, 1.0)
    assert 0.8 < lo < 0.84 and 0.9016 < hi < 0.95
    assert zoomed_limits([0.999, 1.0], 0.0, 1.0)[1] == 1.0  # clipped at the metric's range
    assert zoomed_limits([], 0.0, 1.0) == (0.0, 1.0)
    lo, hi = zoomed_limits([0.5], 0.0, 1.0)
    assert lo < 0.5 < hi and hi - lo >= 0.02  # a single value still gets a visible span


# A name that runs script wherever it is written into HTML unescaped: its onerror changes the page's title.
HOSTILE = "x<img src=x onerror=\"document.title='pwned'\">"
TITLE = "Evaluation report: gendered job titles"


def _hostile_docs(results: Path) -> tuple[list[dict], dict]:
    """The real results and audit with the hostile name as a language code, model name, test-set version,
    pair text and every free-text audit field: what a crafted file (or a hostile test-set folder, before
    list_languages refused one) puts in."""
    def rename_lang(doc: dict) -> dict:
        doc["languages"] = {(HOSTILE if lang == "pt" else lang): block for lang, block in doc["languages"].items()}
        return doc

    docs = []
    for path in sorted((results / "runs").glob("*__*.json")):
        doc = rename_lang(json.loads(path.read_text(encoding="utf-8")))
        doc["model"]["name"] = HOSTILE + doc["model"]["name"]
        doc["testset"]["version"] = HOSTILE
        doc["settings"]["bootstrap_resamples"] = HOSTILE
        for block in doc["languages"].values():
            for pairs in block["worst_pairs"].values():
                for p in pairs:
                    p["feminine"] = HOSTILE
                    p["top_feminine"][0]["text"] = HOSTILE
        docs.append(doc)
    audit = rename_lang(json.loads(next((results / "audit").glob("audit__*.json")).read_text(encoding="utf-8")))
    audit["audit_settings"]["served"] = HOSTILE
    audit["audit_settings"]["interval"] = HOSTILE
    return docs, audit


def test_hostile_names_are_shown_as_text_in_chromium_and_run_no_script(results, tmp_path):
    """Everything that reaches the page is escaped: rendered in a real browser, the hostile name is text, the
    onerror never runs (the title stays) and no element of it exists."""
    from eval.site import render_page

    site = tmp_path / "site"
    assert run_cli("report", str(results / "runs"), str(results / "audit"), "--out", str(site)).returncode == 0
    docs, audit = _hostile_docs(results)
    figures = sorted(p.name for p in (site / "figures").iterdir())
    page = render_page(docs, [HOSTILE + ".json"], audit, HOSTILE, figures, figures)
    assert "<img src=x" not in page
    (site / "index.html").write_text(page, encoding="utf-8")
    browser = Chromium(tmp_path / "chromium-profile")
    try:
        for domain in ("Page", "Runtime"):
            browser.page(f"{domain}.enable")
        browser.page("Page.navigate", url=(site / "index.html").resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        time.sleep(0.5)  # an onerror of an image that failed to load would have run by now
        shown = json.loads(browser.page("Runtime.evaluate", returnByValue=True, expression="""JSON.stringify({
            title: document.title, injected: document.querySelectorAll('img[src="x"], img[onerror], [onerror]').length,
            text: document.body.innerText, summary: document.querySelector('summary').textContent})""")["result"]["value"])
    finally:
        browser.close()
    assert shown["title"] == TITLE
    assert shown["injected"] == 0
    assert HOSTILE in shown["text"] and HOSTILE.upper() in shown["summary"] + shown["text"]


def test_report_refuses_a_language_that_is_not_a_code_and_a_string_where_a_number_belongs(results, tmp_path):
    docs, audit = _hostile_docs(results)
    crafted = tmp_path / "crafted"
    crafted.mkdir()
    (crafted / "run.json").write_text(json.dumps(docs[0]), encoding="utf-8")
    site = tmp_path / "site"
    r = run_cli("report", str(crafted / "run.json"), "--out", str(site))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"error: {crafted / 'run.json'}: language ") and "is not a language code" in r.stderr
    assert len(r.stderr.splitlines()) == 1 and not (site / "index.html").exists()
    # the audit's numbers (k, tau, pairs scored, counts, pearson n) are numbers or the report is refused
    for where in (("audit_settings", "k"), ("audit_settings", "tau"), ("languages", "es", "corpora", "masculine", "exclusion",
                                                                         "pairs_scored")):
        doc = json.loads(next((results / "audit").glob("audit__*.json")).read_text(encoding="utf-8"))
        node = doc
        for key in where[:-1]:
            node = node[key]
        node[where[-1]] = HOSTILE
        (crafted / "audit.json").write_text(json.dumps(doc), encoding="utf-8")
        r = run_cli("report", str(results / "runs"), str(crafted / "audit.json"), "--out", str(site))
        assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, (where, r.stderr)
        assert f"{where[-1]} is " in r.stderr and "where a number belongs" in r.stderr, r.stderr
        assert not (site / "index.html").exists() or "<img src=x" not in (site / "index.html").read_text(encoding="utf-8")


def test_a_test_set_folder_that_is_not_a_language_code_is_refused(tmp_path):
    from eval.testset import list_languages, write_testset
    from languages import LanguageError, languages_under
    from tests.eval.testsets import make_testset

    data = tmp_path / "data"
    write_testset(make_testset("pt"), data)
    (data / "pt").rename(data / HOSTILE)
    with pytest.raises(LanguageError, match="a test-set folder whose name .* is not a language code"):
        languages_under(data, list_languages)
    r = run_cli("run", "--data", str(data), "--model", "tfidf-char", "--out", str(tmp_path / "runs"), "--quiet")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "is not a language code" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and not (tmp_path / "runs").exists()
    for bad in ("pt\n", "../pt", HOSTILE):
        r = run_cli("run", "--data", str(data), "--lang", bad, "--model", "tfidf-char", "--out", str(tmp_path / "runs"))
        assert r.returncode == 2 and "--lang " in r.stderr and "is not a language code" in r.stderr, (bad, r.stderr)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_report_never_deletes_files_it_did_not_write(results, tmp_path):
    site = tmp_path / "site"
    (site / "figures").mkdir(parents=True)
    mine = site / "figures" / "my-drawing.svg"
    mine.write_text("<svg/>", encoding="utf-8")
    r = run_cli("report", str(results / "runs"), "--out", str(site))
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"error: {site}: holds files eval report did not write (figures/my-drawing.svg)")
    assert _snapshot(site) == {"figures/my-drawing.svg": b"<svg/>"}


def test_a_failed_report_leaves_the_previous_site_as_it_was(results, tmp_path):
    site = tmp_path / "site"
    assert run_cli("report", str(results / "runs"), str(results / "audit"), "--out", str(site)).returncode == 0
    before = _snapshot(site)
    doc = json.loads(next((results / "audit").glob("audit__*.json")).read_text(encoding="utf-8"))
    doc["languages"]["es"]["corpora"]["masculine"]["exclusion"]["pairs_scored"] = "many"  # fails after the plots
    bad = tmp_path / "audit.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    one_model = str(next((results / "runs").glob("m-use__*.json")))  # other figures than the site's: a mix would show
    r = run_cli("report", one_model, str(bad), "--out", str(site))
    assert r.returncode == 2 and "pairs_scored is 'many' where a number belongs" in r.stderr, r.stderr
    assert _snapshot(site) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site")) == []  # no leftover


def test_a_kill_while_plotting_leaves_the_previous_pngs(results, tmp_path, monkeypatch):
    """eval run and compare write their PNGs whole or not at all: a kill in savefig leaves the old picture."""
    import matplotlib.figure

    from eval.report import load_results, write_plots

    docs = load_results(sorted((results / "runs").glob("*__*.json")))
    plots = tmp_path / "plots"
    write_plots(docs, plots)
    before = _snapshot(plots)

    def killed(self, fname, *args, **kwargs):
        fname.write(b"\x89PNG half")  # a part of the picture, then the kill
        raise KeyboardInterrupt

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", killed)
    with pytest.raises(KeyboardInterrupt):
        write_plots(docs, plots)
    assert _snapshot(plots) == before and all(len(b) > 1000 for b in before.values())


def test_map_labels_never_overlap_and_stay_inside_the_axes(tmp_path):
    """Issue 23: language labels of points near each other (MAP 0.33-0.36) overlapped, and "ES paper" at the
    right edge was clipped. 21 points, 10 of them within 0.03 of each other, and one at the edge: every label
    is placed apart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    from eval.report import place_labels

    fig, axes = plt.subplots(1, 2, figsize=(11, 5.8), sharey=True, layout="constrained")
    ax = axes[0]
    rng = np.random.default_rng(0)
    points = [(0.33 + 0.03 * a, 0.33 + 0.03 * b) for a, b in rng.random((10, 2))]
    points += [(0.25 + 0.2 * a, 0.25 + 0.2 * b) for a, b in rng.random((11, 2))] + [(0.478, 0.449)]
    for x, y in points:
        ax.plot(x, y, "o")
    ax.set_xlim(0.18, 0.48)
    ax.set_ylim(0.18, 0.48)
    ax.set_aspect("equal")
    texts = [("PT", "ES", "CA", "GL", "FR", "IT", "DE")[i % 7] for i in range(21)] + ["ES paper"]
    anns = place_labels(fig, ax, [(x, y, t, "C0", 8) for (x, y), t in zip(points, texts)])
    fig.savefig(tmp_path / "labels.png", dpi=110)  # a test artifact; saving must not move what was placed
    renderer = fig.canvas.get_renderer()
    # each label's text (an annotation's extent also spans its leader line, which may pass other labels), placed
    # for this renderer (the save drew it at another dpi)
    boxes = [(a.update_positions(renderer), Text.get_window_extent(a, renderer))[1] for a in anns]
    inside = ax.get_window_extent(renderer)
    assert all(inside.x0 <= b.x0 and b.x1 <= inside.x1 and inside.y0 <= b.y0 and b.y1 <= inside.y1 for b in boxes)
    overlapping = [(anns[i].get_text(), anns[j].get_text()) for i in range(len(boxes)) for j in range(i)
                   if boxes[i].overlaps(boxes[j])]
    assert overlapping == []
    plt.close(fig)


# Runs `python -m eval ARGS` in this process and then says on stdout whether matplotlib was ever imported: every
# figure is drawn by matplotlib, imported by the plotting functions when they start, so a refusal that printed
# "matplotlib: False" drew nothing.
DREW = """
import runpy, sys
sys.argv = ["eval", *sys.argv[1:]]
try:
    runpy.run_module("eval", run_name="__main__", alter_sys=True)
finally:
    print("matplotlib:", "matplotlib" in sys.modules)
"""


def _eval_drawing(*args: str) -> tuple[subprocess.CompletedProcess, bool]:
    r = subprocess.run([sys.executable, "-c", DREW, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    return r, r.stdout.strip().splitlines()[-1] == "matplotlib: True"


def _set(doc: dict, where: tuple, value) -> dict:
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return doc


# Each a value only one check reads: the page (k), the audit figures alone (a grid share, a mitigation bar, a
# grid that is not rho x tau) and the results (a figure's value).
@pytest.mark.parametrize("where, value, needle", [
    (("audit_settings", "k"), HOSTILE, "audit_settings.k is"),
    (("languages", "es", "corpora", "feminine", "exclusion", "grid", "feminine_excluded", 0, 0), "x", "feminine_excluded[0][0] is 'x'"),
    (("languages", "pt", "mitigation", "models", "m-use", "masculine", "still_different", "MAP_M", "after", "value"), {},
     "still_different.MAP_M.after.value is {}"),
    (("languages", "pt", "corpora", "masculine", "exclusion", "grid", "masculine_excluded", 0), [0.5], "is not a"),
])
def test_a_refused_audit_file_draws_no_figure(results, tmp_path, where, value, needle):
    """Every refusal comes before any figure is drawn (seconds each): one error line, no site, matplotlib never
    imported."""
    doc = json.loads(next((results / "audit").glob("audit__*.json")).read_text(encoding="utf-8"))
    crafted = tmp_path / "audit.json"
    crafted.write_text(json.dumps(_set(doc, where, value)), encoding="utf-8")
    site = tmp_path / "site"
    r, drew = _eval_drawing("report", str(results / "runs"), str(crafted), "--out", str(site))
    one_error_line(r, str(crafted), needle)
    assert not drew and not site.exists() and list(tmp_path.glob(".site*")) == []


# A figure's value the tables refuse, and a section the tables read leniently (an empty parity is no parity to
# them) but the gap plot cannot draw: compare wrote tables.md and two figures, then gave a traceback.
@pytest.mark.parametrize("where, value, needle", [
    (("languages", "pt", "corpora", "masculine", "MAP", "feminine", "value"), "x", None),  # worded by the page or the tables
    (("languages", "pt", "corpora", "masculine", "parity"), [], "languages.pt.corpora.masculine.parity is []")])
@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_refused_results_file_draws_no_figure(results, tmp_path, command, where, value, needle):
    path = next((results / "runs").glob("tfidf-char__*.json"))
    doc = json.loads(path.read_text(encoding="utf-8"))
    crafted = tmp_path / path.name
    crafted.write_text(json.dumps(_set(doc, where, value)), encoding="utf-8")
    out = tmp_path / "out"
    r, drew = _eval_drawing(command, str(crafted), "--out", str(out))
    one_error_line(r, str(crafted), *([needle] if needle else []))
    assert not drew and not out.exists()


def test_the_drawing_probe_sees_a_figure_drawn(results, tmp_path):
    """The probe itself: a report that is written imported matplotlib."""
    r, drew = _eval_drawing("report", str(results / "runs"), "--out", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    assert drew and (tmp_path / "site" / "figures" / "symmetry.png").is_file()
