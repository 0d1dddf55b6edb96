"""``python -m annotation`` and the installed ``gjt-annotation`` (pyproject.toml [project.scripts]): annotation.cli."""

import sys

from config.cli import starting

# `python -m annotation` or `gjt-annotation`: before the imports below, so a Ctrl-C in them is one line, not a traceback
starting("annotation", __name__)

from annotation.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
