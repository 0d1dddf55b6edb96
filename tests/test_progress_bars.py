"""Progress bars (tqdm) draw only on a terminal: written to a log file or a pipe (stderr not a TTY) they would
be thousands of carriage-return updates (issue 23). The project's own bars pass ``disable=None``."""

from __future__ import annotations

import io
import sys

from builder.cache import TranslationCache
from builder.translate import translate_sentences
from tests.eval.test_models import CountingModel


class Upper:
    """A translator as builder.translate sees one: name, version, target, translate(batch)."""

    name, version, target = "upper", "1", "pt"

    def translate(self, batch):
        return [s.upper() for s in batch]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_translate_and_encode_bars_stay_off_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    from eval.models import EmbeddingCache

    for stream, drawn in ((io.StringIO(), False), (Terminal(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        sentences = [f"He is a {stream.__class__.__name__} {i}." for i in range(50)]
        got = translate_sentences(sentences, Upper(), TranslationCache(tmp_path / f"{drawn}.sqlite"), batch_size=5,
                                  progress=True)
        assert got[sentences[0]] == sentences[0].upper()
        EmbeddingCache(tmp_path / f"emb-{drawn}").encode(CountingModel(), ["advogado", "advogada"], "query",
                                                         progress=True)
        written = stream.getvalue()
        assert ("translate en->pt (upper)" in written and "encode " in written) is drawn, written
        assert ("\r" in written) is drawn
