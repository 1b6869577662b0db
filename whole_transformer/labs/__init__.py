"""The interactive labs, one module each. Importing this package imports no lab yet:
each lab's module (and ipywidgets, matplotlib) loads on first use, so a notebook starts fast.

    from whole_transformer.labs import machine_lab
    machine_lab()

Headless: when ``WT_LABS_HEADLESS`` is set (``make autograde`` sets it in the sandboxed kernel,
where nothing will ever display a widget), calling a lab builds nothing: it returns a stand-in
that shows one line of text. The stand-in builds the real lab only if a cell reaches into it
(``lab.slider``...), except ``train`` of the training lab, which does not train headless (no
grade depends on a lab). Grades are the same either way; a notebook graded headless runs
seconds faster (no ipywidgets, matplotlib or training runs).
"""

import importlib

from ..envflags import labs_headless

_LABS = {
    "machine_lab": "machine",  # notebook 01
    "microscope_lab": "microscope",  # notebook 02
    "block_picture": "block",  # notebook 02
    "scale_lab": "scale",  # notebook 02
    "decode_lab": "decode_steps",  # notebook 03
    "held_out_table": "heldout",  # notebook 03
    "sampling_lab": "sampling",  # notebook 03
    "cache_lab": "cache",  # notebook 03
    "attention_maps_lab": "attention_maps",  # notebook 03
    "batch_lab": "batch",  # notebook 04
    "training_lab": "training",  # notebook 04
}

__all__ = sorted(_LABS)


def headless() -> bool:
    """True when nothing will display the labs (WT_LABS_HEADLESS set, as while autograding)."""
    return labs_headless()


class Headless:
    """What a lab call returns headless: one line of text; the real lab is built on first use."""

    def __init__(self, name, args, kwargs):
        self._wt = (name, args, kwargs, [])

    def __repr__(self):
        return f"[{self._wt[0]}: not drawn while autograding; open the notebook to use it]"

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))

    @property
    def message(self):  # the training lab's status line
        return f"{self._wt[0]}: nothing trains while autograding (no grade depends on it)"

    def train(self, *args, **kwargs):
        if self._wt[0] == "training_lab":
            return None
        return self._real().train(*args, **kwargs)

    def _real(self):
        name, args, kwargs, built = self._wt
        if not built:
            built.append(getattr(importlib.import_module(f".{_LABS[name]}", __name__), name)(*args, **kwargs))
        return built[0]

    def __getattr__(self, attr):
        if attr.startswith("_"):  # IPython asks for _repr_html_ and the like: text only, build nothing
            raise AttributeError(attr)
        return getattr(self._real(), attr)


def _headless_factory(name):
    def lab(*args, **kwargs):
        return Headless(name, args, kwargs)

    lab.__name__ = lab.__qualname__ = name
    return lab


def __getattr__(name):
    if name in _LABS:
        if headless():
            return _headless_factory(name)
        return getattr(importlib.import_module(f".{_LABS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}; the labs are {__all__}")
