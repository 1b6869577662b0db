"""The interactive labs, one module each. Importing this package imports no lab yet:
each lab's module (and ipywidgets, matplotlib) loads on first use, so a notebook starts fast.

    from whole_transformer.labs import machine_lab
    machine_lab()
"""

import importlib

_LABS = {
    "machine_lab": "machine",  # notebook 01
    "microscope_lab": "microscope",  # notebook 02
    "block_picture": "block",  # notebook 02
    "scale_lab": "scale",  # notebook 02
    "decode_lab": "reading",  # notebook 03
    "held_out_table": "reading",  # notebook 03
    "batch_lab": "batch",  # notebook 04
    "training_lab": "training",  # notebook 04
}

__all__ = sorted(_LABS)


def __getattr__(name):
    if name in _LABS:
        return getattr(importlib.import_module(f".{_LABS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; the labs are {__all__}")
