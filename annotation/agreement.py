"""Inter-annotator agreement on nominal labels: scikit-learn's Cohen's kappa and Krippendorff's alpha (computed
from the coincidences, equal to the ``krippendorff`` package's), with this project's edge cases stated (undefined
agreement is NaN, no data is an error).

``units`` maps a unit (a record and question) to the labels the annotators gave it, as
``{annotator: label}``. Units with fewer than two labels carry no information about agreement.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping

# scikit-learn (1.8 s to import) is imported where it is used: every `python -m annotation` command, --help
# included, imports this module through annotation.pull.


def cohen_kappa(labels_a: list[Hashable], labels_b: list[Hashable]) -> float:
    """Cohen's kappa of two annotators who labelled the same units (same order). NaN when chance agreement
    is 1 (both used one and the same category only): kappa is undefined there."""
    if len(labels_a) != len(labels_b):
        raise ValueError(f"cohen_kappa: {len(labels_a)} labels against {len(labels_b)}; they must pair up")
    if not labels_a:
        raise ValueError("cohen_kappa: no units labelled by both annotators")
    if len(set(labels_a) | set(labels_b)) == 1:
        return math.nan  # scikit-learn says so too, with two warnings a report has no use for
    from sklearn.metrics import cohen_kappa_score

    # Labels as category numbers: scikit-learn needs one sortable type, annotators' labels may mix them.
    codes = {label: i for i, label in enumerate(dict.fromkeys([*labels_a, *labels_b]))}
    return float(cohen_kappa_score([codes[a] for a in labels_a], [codes[b] for b in labels_b]))


def krippendorff_alpha_nominal(units: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> float:
    """Krippendorff's alpha for nominal data, any number of annotators, missing labels allowed; NaN when
    the pairable labels hold a single category (alpha is undefined there).

    Computed from the coincidences directly (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"):
    alpha = 1 - (n - 1) * D / (n^2 - sum_c n_c^2), with n the pairable values, n_c those of category c and D the
    sum over units of (pairs of differing labels within the unit) / (m_u - 1). That is the ``krippendorff``
    package's figure (a test compares them), in time linear in the labels: the package builds a category ×
    category matrix per unit, which free-text answers (thousands of distinct titles) make tens of GiB."""
    from collections import Counter

    pairable = {u: labels for u, labels in units.items() if len(labels) >= 2}
    if not pairable:
        raise ValueError("krippendorff_alpha_nominal: no unit has two or more labels")
    totals: Counter = Counter()
    disagreement = 0.0
    for labels in pairable.values():
        counts = Counter(labels.values())
        m = sum(counts.values())
        totals.update(counts)
        # ordered pairs of different labels within the unit, weighted 1 / (m_u - 1)
        disagreement += (m * m - sum(c * c for c in counts.values())) / (m - 1)
    n = sum(totals.values())
    expected = n * n - sum(c * c for c in totals.values())
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * disagreement / expected
