import sys

from config.cli import quiet_interrupt_at_start

if __name__ == "__main__":  # `python -m`: before the imports below, a Ctrl-C in them is one line, not a traceback
    quiet_interrupt_at_start()

from annotation.cli import main  # noqa: E402

sys.exit(main())
