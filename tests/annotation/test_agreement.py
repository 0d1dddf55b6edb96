import math

import pytest

from annotation.agreement import cohen_kappa, krippendorff_alpha_nominal


def test_cohen_kappa_hand_computed():
    # p_o = 3/4; marginals a: x3 y1, b: x2 y2 -> p_e = (3*2 + 1*2)/16 = 1/2 -> kappa = (3/4-1/2)/(1/2) = 1/2
    assert cohen_kappa(["x", "x", "x", "y"], ["x", "x", "y", "y"]) == pytest.approx(0.5)


def test_cohen_kappa_by_definition_with_three_categories():
    # pairs (a,a) (b,c) (c,c) (a,b) (b,b); marginals a: a2 b2 c1, b: a1 b2 c2
    # p_o = 3/5; p_e = (2*1 + 2*2 + 1*2)/25 = 8/25 -> kappa = (15/25 - 8/25) / (17/25) = 7/17
    assert cohen_kappa(["a", "b", "c", "a", "b"], ["a", "c", "c", "b", "b"]) == pytest.approx(7 / 17)
    # Perfect disagreement on two categories used equally: p_o = 0, p_e = 1/2 -> kappa = -1
    assert cohen_kappa(["x", "y"], ["y", "x"]) == pytest.approx(-1.0)
    # Mixed label types (an annotator's 1 against another's "1") are different categories, not an error.
    assert cohen_kappa([1, "1"], [1, "1"]) == pytest.approx(1.0)


def test_cohen_kappa_single_category_and_errors():
    assert math.isnan(cohen_kappa(["x", "x"], ["x", "x"]))
    with pytest.raises(ValueError, match="pair up"):
        cohen_kappa(["x"], ["x", "y"])
    with pytest.raises(ValueError, match="no units"):
        cohen_kappa([], [])


def test_krippendorff_alpha_reference_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders x 12 units example
    # with missing values: nominal alpha = 0.743.
    rows = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    units = {u: {c: rows[c][u] for c in rows if rows[c][u] is not None} for u in range(12)}
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)


def test_krippendorff_alpha_small_cases():
    # coincidences: x-x 2, x-y 1, y-x 1; n=4, n_x=3, n_y=1 -> 1 - 3*2/(16-9-1) = 0
    assert krippendorff_alpha_nominal({1: {"a": "x", "b": "x"}, 2: {"a": "x", "b": "y"}}) == pytest.approx(0.0)
    assert krippendorff_alpha_nominal({1: {"a": "x", "b": "x"}, 2: {"a": "y", "b": "y"}}) == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha_nominal({1: {"a": "x", "b": "x"}}))
    with pytest.raises(ValueError, match="two or more"):
        krippendorff_alpha_nominal({1: {"a": "x"}})
    # A unit with one label adds nothing: the same alpha as without it.
    assert krippendorff_alpha_nominal({1: {"a": "x", "b": "x"}, 2: {"a": "x", "b": "y"}, 3: {"a": "z"}}) \
        == pytest.approx(0.0)


def test_alpha_equals_the_krippendorff_package_on_random_data_with_missing_labels():
    """The coincidence formula against the package, on data where annotators skip units and use many labels."""
    import krippendorff
    import numpy as np

    rng = np.random.default_rng(7)
    for trial in range(20):
        n_units, n_ann, n_labels = int(rng.integers(3, 40)), int(rng.integers(2, 5)), int(rng.integers(2, 12))
        data = rng.integers(0, n_labels, size=(n_ann, n_units)).astype(float)
        data[rng.random(data.shape) < 0.25] = np.nan
        units = {u: {a: int(data[a, u]) for a in range(n_ann) if not np.isnan(data[a, u])} for u in range(n_units)}
        if sum(len(v) >= 2 for v in units.values()) == 0 or len({x for v in units.values() if len(v) >= 2 for x in v.values()}) < 2:
            continue
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        assert krippendorff_alpha_nominal(units) == pytest.approx(expected, abs=1e-12), trial


def test_alpha_on_thousands_of_distinct_titles_is_quick():
    """Free-text answers (every title its own label) once made the package build a 70 GiB matrix (issue 35)."""
    units = {i: {"a": f"title {i}", "b": f"title {i}" if i % 3 else f"other {i}"} for i in range(3000)}
    alpha = krippendorff_alpha_nominal(units)
    assert 0.6 < alpha < 0.7  # a third of the units disagree
