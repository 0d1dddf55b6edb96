"""The gender-layer registry (builder/layers.py): one entry per pack value, used by every caller."""

from __future__ import annotations

from dataclasses import replace

import pytest

import languages
from builder.errors import BuildError
from builder.layers import LAYERS, RULES, keeps_case, layer_info, layer_kind, make_layer


def test_the_registry_and_the_pack_values_are_the_same_list():
    assert set(LAYERS) | {RULES} == set(languages.GENDER_LAYERS)


def test_each_entry_names_a_class_with_the_layer_interface():
    import importlib

    for kind in LAYERS.values():
        cls = getattr(importlib.import_module(kind.module), kind.cls)
        for attr in ("prepare", "prepare_labels", "decide"):
            assert callable(getattr(cls, attr, None)), (kind.name, attr)
        assert kind.path == kind.module.replace(".", "/") + ".py"


def test_a_pack_gets_its_own_layer():
    pt, de, ca = languages.load("pt"), languages.load("de"), languages.load("ca")
    assert type(make_layer(pt)).__name__ == "GenderLayer" and not keeps_case(pt)
    assert type(make_layer(de)).__name__ == "GermanGenderLayer" and keeps_case(de)
    info = layer_info(de)
    assert info["module"] == "builder/german.py" and info["lexicon"].startswith("german-nouns:")
    assert layer_info(pt)["lexicon"] == "apertium:apertium-es-pt"
    assert layer_kind(ca).name == "lexicon"


def test_rules_has_no_layer_and_the_reference_route_refuses_it():
    rules = replace(languages.load("pt"), gender_layer=RULES, lexicon=None)
    assert layer_kind(rules) is None and not keeps_case(rules)
    assert layer_info(rules)["module"] == "builder/gender.py"
    with pytest.raises(BuildError, match="needs a gender layer"):
        make_layer(rules)


def test_an_unknown_value_is_one_error_naming_the_pack():
    odd = replace(languages.load("pt"), gender_layer="klingon")
    with pytest.raises(BuildError, match=r"pt\.yaml: gender_layer 'klingon' names no gender layer"):
        layer_kind(odd)
