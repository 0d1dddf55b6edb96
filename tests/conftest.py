"""Session-wide guard: nothing in the test suite may reach a model hub, a dataset hub or DVC's telemetry.

Set at import, so every subprocess a test starts (CLIs, servers) inherits it too.
"""

import os

for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "DVC_NO_ANALYTICS"):
    os.environ[name] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
