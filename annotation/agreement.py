"""Inter-annotator agreement on nominal labels, as pure functions.

``units`` maps a unit (a record and question) to the labels the annotators gave it, as
``{annotator: label}``. Units with fewer than two labels carry no information about agreement.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping


def cohen_kappa(labels_a: list[Hashable], labels_b: list[Hashable]) -> float:
    """Cohen's kappa of two annotators who labelled the same units (same order). NaN when chance agreement
    is 1 (both used one and the same category only): kappa is undefined there, as in scikit-learn."""
    if len(labels_a) != len(labels_b):
        raise ValueError(f"cohen_kappa: {len(labels_a)} labels against {len(labels_b)}; they must pair up")
    n = len(labels_a)
    if n == 0:
        raise ValueError("cohen_kappa: no units labelled by both annotators")
    observed = sum(a == b for a, b in zip(labels_a, labels_b)) / n
    count_a, count_b = Counter(labels_a), Counter(labels_b)
    expected = sum(count_a[c] * count_b[c] for c in count_a.keys() | count_b.keys()) / (n * n)
    if expected == 1.0:
        return math.nan
    return (observed - expected) / (1.0 - expected)


def krippendorff_alpha_nominal(units: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> float:
    """Krippendorff's alpha for nominal data, any number of annotators, missing labels allowed; NaN when
    the data hold a single category (alpha is undefined there).

    From the coincidence matrix o (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"):
    alpha = 1 - (n - 1) * Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k, with n_c the marginals and n the pairable values.
    """
    coincidence: Counter = Counter()
    for labels in units.values():
        values = list(labels.values())
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_k - 1) if c == k else n_c * n_k
                coincidence[(c, k)] += pairs / (m - 1)
    n = sum(coincidence.values())
    if n == 0:
        raise ValueError("krippendorff_alpha_nominal: no unit has two or more labels")
    marginals: Counter = Counter()
    for (c, _k), v in coincidence.items():
        marginals[c] += v
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = (n * n - sum(v * v for v in marginals.values())) / (n - 1)
    if expected == 0:  # a single category in the data: no variation to agree on
        return math.nan
    return 1.0 - observed / expected
