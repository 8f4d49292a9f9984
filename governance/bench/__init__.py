"""Benchmarks, the ranking evaluation and ``just demo``'s script, apart from runtime code.

May use every other part; nothing imports it. Its temporary projects keep their ledgers' anchors
in a temporary folder, never in the user's home (``GOVERNANCE_ANCHOR_DIR``, unless already set).
"""

import atexit
import os
import shutil
import tempfile

if not os.environ.get("GOVERNANCE_ANCHOR_DIR"):
    _ANCHORS = tempfile.mkdtemp(prefix="governance-bench-anchors-")
    os.environ["GOVERNANCE_ANCHOR_DIR"] = _ANCHORS
    atexit.register(shutil.rmtree, _ANCHORS, True)
