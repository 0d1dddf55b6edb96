"""``python -m builder defaults --jobs N``: languages built in worker processes write the same bytes as one
process, on a small English set with a given-translation language (its alignment by the real encoder, its MT
fallback by the real bergamot>apertium chain) and two MT-route languages (apertium)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from builder.__main__ import main
from builder.align import Relevance
from builder.translators import offline_available
from tests.builder.test_reference import french_copy, write_copy, write_english

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
    assert outputs[2] == outputs[1]


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_number(value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["defaults", "--jobs", value])
    assert stop.value.code == 2 and "is not a number of processes" in capsys.readouterr().err
