"""The student's own model: trained in notebook 04's training lab, saved beside the notebooks, offered by every lab
that lets you choose a model.

04's training lab saves each run of the course's model as ``your-model.pt`` in the kernel's working folder (the
notebook's own folder, where 03 looks too), so the model outlives the kernel. ``WT_YOUR_MODEL_DIR``, when set, names
another folder: the lecture build, the tests and the benchmarks run the notebooks with a folder of their own there,
so no run of theirs leaves a model in source/ or notebooks/ (nor finds one). ``_decode.CHECKPOINTS``, the one
chooser the labs share, lists it as ``"yours"`` whenever that file is there; ``load`` reads it (again only when the
file has changed); ``note`` tells a student who has no model yet how to get one.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from ..envflags import your_model_dir
from ..model import Transformer
from ..train import load_checkpoint

KEY = "yours"  # its key among the checkpoints
FILE = "your-model.pt"
HOW = (
    "No model of your own yet: train one in notebook 04, section 5 (the training lab, run "
    "“the course's model”). It is saved as your-model.pt beside the notebooks; run this cell again and "
    "“your model” is offered here."
)
BROKEN = (OSError, RuntimeError, KeyError, ValueError, TypeError, pickle.UnpicklingError)  # what torch.load raises
_CACHE: dict[str, tuple[float, Transformer, dict]] = {}


def path() -> Path:
    """Where the student's model is saved and looked for: the kernel's folder, the notebook's own."""
    return Path(your_model_dir() or Path.cwd()) / FILE


def exists() -> bool:
    return path().is_file()


def load() -> tuple[Transformer, dict]:
    """(the student's model, its metadata), read again only when the file has changed; a clear error if absent."""
    p = path()
    if not p.is_file():
        raise ValueError(HOW)
    key, stamp = str(p), p.stat().st_mtime
    if key not in _CACHE or _CACHE[key][0] != stamp:
        try:
            model, meta = load_checkpoint(str(p))
        except BROKEN as e:  # a half-written or foreign file: say which file and what to do
            raise ValueError(
                f"cannot read {p} as a model ({type(e).__name__}): train again in notebook 04's training lab"
            ) from None
        _CACHE[key] = (stamp, model, meta)
    return _CACHE[key][1], _CACHE[key][2]


def label() -> str:
    """How the choosers name it: "your model (N epochs)"."""
    meta = load()[1]
    return f"your model ({meta.get('epochs_trained', '?')} epochs)"


def note() -> str:
    """One line under a chooser: what "your model" is, or how to get one."""
    if not exists():
        return HOW
    return f"“{label()}” is the model you trained in notebook 04, read from {FILE} beside the notebooks."
