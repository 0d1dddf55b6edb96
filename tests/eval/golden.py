"""Comparing results with a golden file written by an earlier toolkit: the same structure, keys in the same
order (the order is part of the written bytes), the same strings, integers and nulls, and floats equal to a
relative 1e-12.

Why not exact equality: a float figure is a mean or a bootstrap quantile of sums whose order numpy may change
between versions (pairwise summation, SIMD widths); numpy 2.4 moved one golden figure by one ulp (~1e-16
relative). 1e-12 leaves four orders of magnitude above that and stays far below what any change of a
definition, a tie-break or a relevance set does to these figures (1e-4 and more on the small inline sets)."""

from __future__ import annotations

import math

REL = 1e-12
# The default measures of the toolkits that wrote the golden files (nDCG@10 joined the defaults later): a golden
# comparison scores these, so that it compares the figures the file holds.
MEASURES_BEFORE_NDCG = ("AO", "RBO(p=0.98)", "AP", "acc@1", "acc@5", "acc@10", "identical_top1", "Gap(AP)", "Gap(acc@1)")


def assert_json_close(actual, expected, *, rel: float = REL, where: str = "$") -> None:
    if isinstance(expected, float) or isinstance(actual, float):
        assert isinstance(actual, (int, float)) and isinstance(expected, (int, float)) \
            and not isinstance(actual, bool) and not isinstance(expected, bool), f"{where}: {actual!r} != {expected!r}"
        assert math.isclose(actual, expected, rel_tol=rel, abs_tol=rel), f"{where}: {actual!r} != {expected!r} (rel {rel:g})"
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and list(actual) == list(expected), \
            f"{where}: keys {list(actual) if isinstance(actual, dict) else actual!r} != {list(expected)}"
        for key in expected:
            assert_json_close(actual[key], expected[key], rel=rel, where=f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: {actual!r} != {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_json_close(a, e, rel=rel, where=f"{where}[{i}]")
    else:
        assert type(actual) is type(expected) and actual == expected, f"{where}: {actual!r} != {expected!r}"
