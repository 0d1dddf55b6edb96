"""Inter-annotator agreement on nominal labels: scikit-learn's Cohen's kappa and the ``krippendorff``
package's alpha, with this project's edge cases stated (undefined agreement is NaN, no data is an error).

``units`` maps a unit (a record and question) to the labels the annotators gave it, as
``{annotator: label}``. Units with fewer than two labels carry no information about agreement.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping

# scikit-learn (1.8 s to import) and krippendorff are imported where they are used: every `python -m annotation`
# command, --help included, imports this module through annotation.pull.


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
    the pairable labels hold a single category (alpha is undefined there)."""
    import krippendorff
    import numpy as np

    pairable = {u: labels for u, labels in units.items() if len(labels) >= 2}
    if not pairable:
        raise ValueError("krippendorff_alpha_nominal: no unit has two or more labels")
    values = list(dict.fromkeys(v for labels in pairable.values() for v in labels.values()))
    if len(values) == 1:
        return math.nan
    codes = {v: float(i) for i, v in enumerate(values)}
    annotators = list(dict.fromkeys(a for labels in pairable.values() for a in labels))
    # The package's reliability data: one row per annotator, one column per unit, NaN where one gave no label.
    data = np.full((len(annotators), len(pairable)), np.nan)
    for column, labels in enumerate(pairable.values()):
        for annotator, value in labels.items():
            data[annotators.index(annotator), column] = codes[value]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
