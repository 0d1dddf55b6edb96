"""``python -m builder defaults --jobs N``: languages built in worker processes write the same bytes as one
process, on a small English set with a given-translation language (its alignment by the real encoder, its MT
fallback by the real bergamot>apertium chain) and two MT-route languages (apertium); a failing language and Ctrl-C stop every worker."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.align import Relevance
from builder.translators import offline_available
from tests.builder.test_reference import french_copy, write_copy, write_english
from tests.english import english_or_skip

REPO = Path(__file__).resolve().parents[2]

LANGS = ["fr", "ca", "gl"]


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.skipif(not all(offline_available(t, lang) for t, lang in
                            (("apertium", "ca"), ("apertium", "gl"), ("bergamot>apertium", "fr"))),
                    reason="apertium or bergamot not installed (bash scripts/setup.sh)")
def test_worker_processes_write_the_bytes_one_process_writes(tmp_path, monkeypatch, capsys):
    english = write_english(tmp_path / "dataset")
    french = french_copy()
    # The copy lacks Gardener: that id takes the MT fallback, so the chain's cache is shared between languages.
    write_copy(tmp_path / "dataset", "fr", Relevance(french.queries, {k: v for k, v in french.corpus.items()
                                                                      if v != "Jardinier"}, french.qrels))
    params = tmp_path / "params.yaml"
    params.write_text(f"languages: [{', '.join(LANGS)}]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # no corrections/<lang>.jsonl of the repository's sets
    outputs = {}
    for jobs in (1, 2):
        out = tmp_path / f"out-{jobs}"
        rc = main(["--params", str(params), "defaults", "--source", str(english), "--out", str(out),
                   "--cache", str(tmp_path / f"cache-{jobs}"), "--quiet", "--jobs", str(jobs)])
        printed = capsys.readouterr().out
        assert rc == 0
        outputs[jobs] = digest(out)
        # the summary lists the languages in params.yaml's order, whichever worker finished first
        assert [line.split(":")[0] for line in printed.splitlines() if "written to" in line] == LANGS
    assert sorted({name.split("/")[0] for name in outputs[1]}) == sorted(LANGS)
    differing = sorted(name for name in outputs[1].keys() | outputs[2].keys() if outputs[1].get(name) != outputs[2].get(name))
    assert not differing, f"--jobs 2 wrote other bytes than --jobs 1 in {differing}"


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_number(value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["defaults", "--jobs", value])
    assert stop.value.code == 2 and "is not a number of processes" in capsys.readouterr().err


def test_a_failing_language_stops_the_build_with_one_error_line(tmp_path, monkeypatch, capsys):
    english = write_english(tmp_path / "dataset")
    (write_copy(tmp_path / "dataset", "fr", french_copy()) / "annotations.tsv").unlink()
    params = tmp_path / "params.yaml"
    params.write_text("languages: [fr, ca, gl]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc = main(["--params", str(params), "defaults", "--source", str(english), "--out", str(tmp_path / "out"),
               "--cache", str(tmp_path / "cache"), "--quiet", "--jobs", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: ") and "fr/annotations.tsv: file missing" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "fr").exists()
    assert not [p for p in (tmp_path / "out").glob(".*")]  # no staging folder left by a stopped worker


def test_ctrl_c_stops_every_worker_at_once(tmp_path):
    """A terminal's Ctrl-C reaches the whole process group: the workers leave it to the main process, which stops
    them, and exits 130 with its one line; no worker, staging folder or resource-tracker warning is left."""
    english = english_or_skip()
    proc = subprocess.Popen([sys.executable, "-m", "builder", "defaults", "--source", str(english),
                             "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--quiet",
                             "--jobs", "2"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "cache").is_dir() and time.monotonic() < deadline:  # the workers are building
        time.sleep(0.1)
    time.sleep(2)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130 and err == "interrupted: finished translations are cached; outputs are left as " \
                                             "they were\n", err
    assert took < 10, took
    deadline = time.monotonic() + 10  # the resource tracker leaves once the main process has gone
    while (group := subprocess.run(["ps", "-o", "pid=,stat=,args=", "-g", str(proc.pid)], capture_output=True,
                                   text=True).stdout.strip()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert group == ""
    assert not list((tmp_path / "out").glob(".*"))  # no staging folder of a stopped worker
