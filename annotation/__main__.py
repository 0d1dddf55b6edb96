import sys

from annotation.cli import main

sys.exit(main())
