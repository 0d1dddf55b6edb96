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
