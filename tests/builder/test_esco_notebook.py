"""scripts/compare_esco_notebook.py: the notebook's pair rule as issue 24 states it, beside ours, on a small MELO copy
written here (its pins set to these files): the German ``/…in`` split with its bogus *X ↔ in* pairs, the Romance
ending rule, and what our gender layer says of the pairs it alone makes."""

from __future__ import annotations

from scripts.compare_esco_notebook import compare, german_pairs, romance_pairs
from tests.builder.test_esco import GERMAN, SPANISH, pin_melo, write_melo


def test_german_rule_splits_on_the_slash_and_pairs_the_bare_suffix():
    assert german_pairs(["Koch/Köchin", "AHS-Lehrer/in", "Mönch/Nonne", "Import-/Exportmanager/Import-/Exportmanagerin"]) \
        == [("Koch", "Köchin"), ("AHS-Lehrer", "in")]


def test_romance_rule_pairs_labels_of_one_occupation_by_their_endings():
    labels = ["director técnico/directora técnica", "directora técnica", "director técnico", "jefe técnico",
              "jefa técnica", "gerente técnico"]
    assert romance_pairs(labels, "es") == [("director técnico", "directora técnica"), ("jefe técnico", "jefa técnica")]
    assert romance_pairs(["acteur", "actrice", "vendeur", "vendeuse"], "fr") == [("acteur", "actrice"),
                                                                                 ("vendeur", "vendeuse")]


def test_compare_counts_both_rules_and_the_bogus_pairs(tmp_path, monkeypatch):
    root = tmp_path / "melo"
    write_melo(root, "de", [*GERMAN, ("d3", "Lehrer/Lehrerin", ["AHS-Lehrer/in", "Gymnasiallehrer/in"])])
    pin_melo(monkeypatch, root, "de")
    r = compare(root, "de", tmp_path / "lexicon.sqlite")
    assert r["notebook_paper"] == 1238 and r["occupations"] == 3
    # Medizinisch-technischer Laborassistent/…in, Koch/Köchin, Laborant/Laborantin, Küchenchef/Küchenchefin,
    # Lehrer/Lehrerin, and the two bare suffixes.
    assert r["notebook_rule"] == 7 and r["bogus"] == 2 and r["preferred_only"] == 3
    assert sorted(r["bogus_examples"]) == ["AHS-Lehrer ↔ in", "Gymnasiallehrer ↔ in"]
    assert r["why"]["bogus"] == 2 and r["both"] == 5 and r["ours_queries"] == 3

    root = tmp_path / "melo-es"
    write_melo(root, "es", SPANISH)
    pin_melo(monkeypatch, root, "es")
    r = compare(root, "es", tmp_path / "lexicon.sqlite")
    # directora/director técnica, jefe/jefa, conductor/conductora de autobús, comprador/compradora, catador/catadora
    assert r["notebook_rule"] == 5 and r["bogus"] == 0 and r["both"] == 5 and r["ours_queries"] == 3
