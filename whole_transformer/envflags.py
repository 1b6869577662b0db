"""Yes/no settings read from the environment, parsed one way everywhere.

>>> import os
>>> os.environ["WT_EXAMPLE"] = "Yes"
>>> flag("WT_EXAMPLE")
True
>>> os.environ["WT_EXAMPLE"] = "off"
>>> flag("WT_EXAMPLE", default=True)
False
>>> del os.environ["WT_EXAMPLE"]
>>> flag("WT_EXAMPLE", default=True)
True
"""

from __future__ import annotations

import os

YES = frozenset({"1", "yes", "true", "on"})
NO = frozenset({"0", "no", "false", "off", "none"})


def flag(name: str, default: bool = False) -> bool:
    """``name`` read as yes (1, yes, true, on) or no (0, no, false, off, none), any case; ``default``
    when it is unset, empty or anything else."""
    value = os.environ.get(name, "").strip().lower()
    if value in YES:
        return True
    if value in NO:
        return False
    return default
