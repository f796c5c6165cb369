"""The transforms above the ops: reverse mode's front doors (``entry``), forward mode,
batching, tracing and the functional API.

``engine.py`` (the reverse-mode algorithm) sits beside this package; every transform here
reaches the ops through the one dispatch path in ``_core/dispatch.py``.
"""

from __future__ import annotations
