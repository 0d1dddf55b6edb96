"""The translation cache's read (builder.cache.get_many): reading the whole key when a rebuild asks for nearly
everything, looking sentences up one by one otherwise; both answer the same. Real SQLite files. And the Debian
package versions in the cache keys, read from one dpkg-query listing."""

import shutil
import subprocess

import pytest

from builder.cache import TranslationCache
from builder.translators import package_version

KEY = ("apertium", "apertium-3.8/apertium-eng-spa-0.8", "en", "es")


@pytest.fixture
def cache(tmp_path):
    c = TranslationCache(tmp_path / "translations.sqlite")
    stored = {f"He is a worker {i}.": f"Es un trabajador {i}." for i in range(1200)}
    stored["She is blank."] = "   "  # never an answer: counts as missing
    c.put_many(*KEY, stored)
    # the same sentences under other keys: another version, another target
    c.put_many(KEY[0], KEY[1] + "/marked", "en", "es", {s: "OTRO" for s in stored})
    c.put_many(KEY[0], KEY[1], "en", "ca", {s: "ALTRE" for s in stored})
    yield c, stored
    c.close()


@pytest.mark.parametrize("asked", [
    1200,  # a rebuild: every stored sentence (the whole key is read)
    700,  # more than half: still read whole
    5,  # a few: looked up one by one
    0,
])
def test_both_reads_give_the_stored_answers_of_the_key_only(cache, asked):
    c, stored = cache
    sentences = [f"He is a worker {i}." for i in range(asked)] + ["She is blank.", "Never translated."]
    got = c.get_many(*KEY, sentences)
    assert got == {s: stored[s] for s in sentences[:asked]}


def test_the_whole_key_read_and_the_lookup_agree_sentence_by_sentence(cache):
    c, stored = cache
    everything = c.get_many(*KEY, list(stored) + ["Never translated."])
    one_by_one = {}
    for s in list(stored) + ["Never translated."]:
        one_by_one.update(c.get_many(*KEY, [s]))
    assert everything == one_by_one and len(everything) == 1200


@pytest.mark.skipif(shutil.which("dpkg-query") is None, reason="not a Debian system")
def test_package_versions_from_one_listing_are_what_dpkg_query_says_per_package():
    # Part of every Apertium step's and lexicon's cache key: a different string would miss every cached answer.
    listed = subprocess.run(["dpkg-query", "-W", "-f=${Package}\\n"], capture_output=True, text=True).stdout.split()
    for package in [p for p in listed if p.startswith(("apertium", "hunspell"))][:12] + ["bash"]:
        own = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True)
        assert package_version(package) == (own.stdout.strip() or "unknown"), package
    assert package_version("no-such-package-gjt") == "unknown"
