"""The student's own models: runs trained and kept in notebook 04's training lab, offered by every lab that lets
you choose a model, each by its name and its settings.

04's training lab keeps a finished run when the student asks (the *Keep this run* button, or ``lab.keep(name)``):
``save`` writes it as ``your-models/<name>.pt`` in the kernel's working folder (the notebook's own folder, where 03
looks too), with its settings (which run, the seed, the epochs) and its whole history, so it outlives the kernel. A
name already taken is never overwritten unless the student says so (``replace=True``, the lab's *replace* box).
``WT_YOUR_MODEL_DIR``, when set, names another folder for ``your-models/``: the lecture build, the tests and the
benchmarks run the notebooks with a folder of their own there, so no run of theirs leaves a model in source/ or
notebooks/ (nor finds one).

``_decode.CHECKPOINTS``, the one chooser the labs share, lists each saved run as ``"yours:<name>"`` with the label
``label(name)``; the key ``"yours"`` alone means the run saved last. ``load`` reads a run (again only when its file
has changed); ``note`` tells a student which runs are theirs, or how to keep one.
"""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

from ..envflags import your_model_dir
from ..model import Transformer
from ..train import Run, load_checkpoint, save_checkpoint

KEY = "yours"  # the chooser's key of the run saved last; each run is "yours:<name>"
PREFIX = KEY + ":"
FOLDER = "your-models"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,39}")
HOW = (
    "No model of your own yet: train one in notebook 04, section 5 (the training lab: choose the run and its "
    "seed, press Train, then Keep this run under a name of your own). It is saved in your-models/ beside the "
    "notebooks; run this cell again and it is offered here by its name."
)
BROKEN = (OSError, RuntimeError, KeyError, ValueError, TypeError, EOFError, pickle.UnpicklingError)  # torch.load's
_CACHE: dict[str, tuple[float, Transformer, dict]] = {}


def folder() -> Path:
    """Where the student's runs are saved and looked for: your-models/ in the kernel's folder, the notebook's own."""
    return Path(your_model_dir() or Path.cwd()) / FOLDER


def check_name(name: object) -> str:
    """A run's name, stripped; a clear error for one that cannot be a file's name."""
    text = name.strip() if isinstance(name, str) else name
    if not isinstance(text, str) or not NAME.fullmatch(text):
        raise ValueError(
            f"a kept run's name is 1 to 40 letters, digits, spaces, '-', '_' or '.', starting with a letter or a "
            f"digit (such as no-mask-seed-3); got {name!r}"
        )
    return text


def path(name: str) -> Path:
    return folder() / f"{check_name(name)}.pt"


def names() -> list[str]:
    """The saved runs' names, the oldest first (the order they were kept in)."""
    d = folder()
    if not d.is_dir():
        return []
    files = [p for p in d.glob("*.pt") if p.is_file() and NAME.fullmatch(p.stem)]
    return [p.stem for p in sorted(files, key=lambda p: (p.stat().st_mtime, p.stem))]


def exists() -> bool:
    return bool(names())


def key(name: str) -> str:
    return PREFIX + check_name(name)


def name_of(checkpoint: str) -> str | None:
    """The saved run a chooser key names ("yours" is the one saved last), or None for a shipped model."""
    if checkpoint == KEY:
        saved = names()
        if not saved:
            raise ValueError(HOW)
        return saved[-1]
    return checkpoint[len(PREFIX) :] if checkpoint.startswith(PREFIX) else None


def load(name: str) -> tuple[Transformer, dict]:
    """(the saved run's model, its metadata), read again only when the file has changed; a clear error if absent."""
    p = path(name)
    if not p.is_file():
        saved = names()
        raise ValueError(HOW if not saved else f"no saved run is called {name!r}: yours are {', '.join(saved)}")
    k, stamp = str(p), p.stat().st_mtime
    if k not in _CACHE or _CACHE[k][0] != stamp:
        try:
            model, meta = load_checkpoint(str(p))
        except BROKEN as e:  # a half-written or foreign file: say which file and what to do
            raise ValueError(
                f"cannot read {p} as a model ({type(e).__name__}): train again in notebook 04's training lab "
                "and keep the run under this name (tick replace)"
            ) from None
        _CACHE[k] = (stamp, model, meta)
    return _CACHE[k][1], _CACHE[k][2]


def settings(meta: dict) -> str:
    """What was trained: "no causal mask, seed 3, 15 epochs"."""
    seed, epochs = meta.get("train_config", {}).get("seed", "?"), meta.get("epochs_trained", "?")
    return f"{meta.get('run_label', 'a run of the lab')}, seed {seed}, {epochs} epoch{'' if epochs == 1 else 's'}"


def label(name: str) -> str:
    """How the choosers name a saved run: its name, then its settings."""
    try:
        return f"{name} ({settings(load(name)[1])})"
    except ValueError:
        return f"{name} (cannot be read: train it again)"


def save(result: Run, name: str, run: str, run_label: str, replace: bool = False) -> Path:
    """Keep a finished run as your-models/<name>.pt with its settings and history; a taken name only if replace."""
    p = path(name)
    if p.exists() and not replace:
        raise ValueError(
            f"a run is already kept as {check_name(name)!r} ({label(check_name(name))}): type another name, "
            "or tick replace to write over it"
        )
    tmp = p.with_name(p.name + ".part")  # written whole, then put in place: a reader never meets half a file
    save_checkpoint(result, tmp, extra={"name": check_name(name), "run": run, "run_label": run_label})
    os.replace(tmp, p)
    return p


def note() -> str:
    """One line under a chooser: which runs are the student's own, or how to keep one."""
    saved = names()
    if not saved:
        return HOW
    return (
        f"Your runs, kept in notebook 04's training lab ({FOLDER}/ beside the notebooks): "
        + "; ".join(label(n) for n in saved)
        + "."
    )
