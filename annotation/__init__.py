"""annotation: human correction and relevance labelling in Argilla, flowing back into the build.

``python -m annotation push translations|relevance`` sends records to an Argilla server,
``python -m annotation pull`` writes the decided responses to ``corrections/<lang>.jsonl`` (docs/FORMAT.md),
which the builder applies on the next build; ``python -m annotation rule`` fixes one term in every proposed
title holding it. See docs/annotation.md.
"""


class AnnotationError(Exception):
    """A problem the user can fix (server down, wrong key, bad input file); the message says what to do."""
