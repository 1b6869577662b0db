"""What a graded function may not call: the package's own code for the step it is asked to write.

The package computes, for its labs, some of what the exercises ask (the sampling lab's ``stages``, the
decoder's loop, the cache step, x and y); torch has layers that do others. A graded function earns points
only for what it computes itself, so while a hidden test (``grading.hand_out``) or a visible check
(``exercise_checks``) runs a student's function, every callable named for that exercise in ``FORBIDDEN``
is a tripwire: a call to it from the student's code is recorded and raises ``AnswerCalled`` (naming the
function), so the call returns no answer. The record travels with the results: each case a hidden test hands
out says ``"called": "<module>.<name>"``, and the grader, outside the kernel, gives that exercise nothing and
says why (``course/plugins/cell_verdict.py``). Outside a graded run the functions are themselves: the labs
use them as before.

A tripwire trips only for a call made from the student's code: a frame between the call and the graded run
that is not the package's nor a library's (the standard library, site-packages). The course's own harness
(``stepwise.token_by_token`` calls ``stepwise._one_step`` around the student's function) goes through.

While a run lasts, the tripwire takes the place of each forbidden callable wherever a loaded module, the
student's function's globals, defaults or closure hold it, and on the class that defines a method; a module
imported during the run is caught there too (the named modules are imported when the run starts), and put back as the
run ends, so no tripwire outlives its run.

What it does not do, said plainly: it catches calling the course's code, not copying it (the package is
readable source), and a submission that tampers with the kernel on purpose (digging the original out of an
object, a thread of its own) can get round it, as it could hand-write the results; the grading never trusts
the kernel for the expected values, which only the grader holds.

To forbid more: add ``"module:qualified.name"`` entries under the exercise in ``FORBIDDEN`` (a method is
``"module:Class.method"``). A name that cannot be found (a module not installed) is skipped.

    >>> import numpy as np
    >>> from whole_transformer import task
    >>> def make_xy(seq, eq=12, pad=0):
    ...     x, y, _ = task.xy_arrays([427])
    ...     return list(x[0]), list(y[0])
    >>> with run("make_xy", make_xy) as trip:
    ...     try:
    ...         make_xy(task.sequence(427))
    ...     except AnswerCalled as e:
    ...         print(e)
    make_xy called whole_transformer.task.xy_arrays, the course's own code for this step: it earns nothing for \
what it does not compute itself
    >>> trip.called
    ['whole_transformer.task.xy_arrays']
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import sysconfig
import threading
from pathlib import Path
from types import FrameType
from typing import Any

#: torch's own LayerNorm and attention: what 02's block and forward pass may not call for the parts they hold
TORCH_LAYERS = (
    "torch.nn.functional:layer_norm",
    "torch:layer_norm",
    "torch.nn.functional:scaled_dot_product_attention",
    "torch.nn.functional:multi_head_attention_forward",
)
#: exercise → the callables its function may not call ("module:qualified name"). Another exercise's
#: entries go below the others; see the module's docstring.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "next_token": (
        "whole_transformer.decode:greedy_step",
        "whole_transformer.decode:greedy_trace",
    ),
    "greedy_decode": (
        "whole_transformer.decode:greedy_step",
        "whole_transformer.decode:greedy_trace",
        "whole_transformer.decode:read_numbers",
        "whole_transformer.decode:evaluate",
    ),
    "make_xy": (
        "whole_transformer.task:xy_arrays",
        "whole_transformer.task:make_batch",
        "whole_transformer.labs._batch:xy_of",
    ),
    "masked_loss": (
        "whole_transformer.train:loss_fn",
        "whole_transformer.train:batch_loss",
        "whole_transformer.train:held_out_loss",
        "whole_transformer.fast:logits_at",
        "torch.nn.functional:cross_entropy",
        "torch.nn.functional:nll_loss",
    ),
    "cached_attention": (
        "whole_transformer.fast:extend",
        "whole_transformer.fast:cache_rows",
        "whole_transformer.stepwise:_one_step",
        "whole_transformer.stepwise:token_by_token",
        "whole_transformer.model:Attention.attend",
        "whole_transformer.model:Attention.forward",
        "torch.nn.functional:scaled_dot_product_attention",
        "torch.nn.functional:multi_head_attention_forward",
    ),
    "sample_next": (
        "whole_transformer.labs._sampling:stages",
        "whole_transformer.labs._sampling:keep_mask",
        "whole_transformer.labs._sampling:read_many",
    ),
    # notebook 02: the forward pass in NumPy (answers/forbidden.py also refuses a cell that imports torch or the
    # model's code, from its syntax tree; these catch a call that reaches the model by another name)
    "layer_norm": (
        "torch.nn.functional:layer_norm",
        "torch:layer_norm",
    ),
    "multi_head_attention": (
        "whole_transformer.model:Attention.forward",
        "whole_transformer.model:Attention.attend",
        "whole_transformer.model:Attention.split_heads",
        "torch.nn.functional:scaled_dot_product_attention",
        "torch.nn.functional:multi_head_attention_forward",
    ),
    "decoder_block": (
        "whole_transformer.model:Block.forward",
        "whole_transformer.model:Attention.forward",
        "whole_transformer.model:FFN.forward",
        *TORCH_LAYERS,
    ),
    "forward": (
        "whole_transformer.model:Transformer.forward",
        "whole_transformer.model:Transformer.embed",
        "whole_transformer.model:Block.forward",
        "whole_transformer.model:Attention.forward",
        "whole_transformer.model:FFN.forward",
        "whole_transformer.model:sinusoidal_positions",
        "whole_transformer.steps:trace",
        "whole_transformer.weights:float64_model",
        *TORCH_LAYERS,  # the model holds LayerNorms and attentions: torch's may not stand in for them either
    ),
}


class AnswerCalled(Exception):
    """The student's function called a callable ``FORBIDDEN`` for its exercise (the message names it)."""


def what_it_is(name: str) -> str:
    """How a forbidden callable is named to the student: the course's code, or a library's ready-made step."""
    return (
        "the course's own code for this step"
        if name.startswith("whole_transformer.")
        else ("a library's ready-made version of this step")
    )


def message(exercise: str, name: str) -> str:
    return f"{exercise} called {name}, {what_it_is(name)}: it earns nothing for what it does not compute itself"


def _resolved(path: str) -> str:
    return str(Path(path).resolve())


# the package's folder as its modules' code names it, and resolved (a symlinked install names it either way)
_PACKAGE = tuple({os.path.dirname(os.path.abspath(__file__)) + os.sep, _resolved(os.path.dirname(__file__)) + os.sep})
_LIBRARY_KEYS = ("stdlib", "platstdlib", "purelib", "platlib")
_LIBRARIES = tuple(
    sorted({f(p) + os.sep for k, p in sysconfig.get_paths().items() if k in _LIBRARY_KEYS for f in (str, _resolved)})
)
_getframe = sys._getframe
_modules = sys.modules


def _is_ours_or_a_library(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return True
    if not filename.startswith("/"):
        return False  # "<ipython-input-…>", "<string>": code typed in, the student's
    return filename.startswith(_PACKAGE) or filename.startswith(_LIBRARIES)


def _resolve(entry: str):
    """(the object holding the attribute, the attribute's name, the callable) of "module:qual.name", or None."""
    module_name, _, qual = entry.partition(":")
    holder: Any
    try:
        holder = importlib.import_module(module_name)
    except ImportError:
        return None
    *path, attr = qual.split(".")
    for part in path:
        holder = getattr(holder, part, None)
        if holder is None:
            return None
    original = holder.__dict__.get(attr) if isinstance(holder, type) else getattr(holder, attr, None)
    if original is None:
        return None
    return holder, attr, original


def _dotted(entry: str) -> str:
    module_name, _, qual = entry.partition(":")
    return f"{module_name}.{qual}"


class Run:
    """One graded run of a student's function: its tripwires, and the calls they caught (``called``)."""

    def __init__(self, exercise: str, fn):
        self.exercise = exercise
        self.fn = fn
        self.called: list[str] = []
        self.entry: FrameType | None = (
            None  # the frame that started the run: a call from the student's code lies above it
        )
        self.thread = threading.get_ident()
        self._undo: list = []
        self._wired: dict[int, tuple[Any, Any]] = {}  # id(tripwire) → (tripwire, the callable it stands for)

    # ------------------------------------------------------------ the wire
    def _from_student(self) -> bool:
        if threading.get_ident() != self.thread:
            return True  # a thread the student started while the run lasts
        f: FrameType | None = _getframe(2)
        while f is not None and f is not self.entry:
            if not _is_ours_or_a_library(f.f_code.co_filename):
                return True
            f = f.f_back
        return False

    def _wire(self, name: str, original):
        run = self

        def tripwire(*args, **kwargs):
            if run._from_student():
                if name not in run.called:
                    run.called.append(name)
                raise AnswerCalled(message(run.exercise, name))
            return original(*args, **kwargs)

        tripwire.__name__ = getattr(original, "__name__", "tripwire")
        tripwire.__qualname__ = getattr(original, "__qualname__", "tripwire")
        tripwire.__doc__ = getattr(original, "__doc__", None)
        return tripwire

    # ------------------------------------------------------------ putting it in place, and back
    def _set(self, holder, key, value, kind: str) -> None:
        if kind == "dict":
            old = holder[key]
            holder[key] = value
            self._undo.append(lambda: holder.__setitem__(key, old))
        elif kind == "attr":
            old = holder.__dict__[key] if isinstance(holder, type) else getattr(holder, key)
            setattr(holder, key, value)
            self._undo.append(lambda: setattr(holder, key, old))
        elif kind == "cell":
            old = holder.cell_contents
            holder.cell_contents = value
            self._undo.append(lambda: setattr(holder, "cell_contents", old))

    def _student_functions(self):
        """The student's function and the functions its closure holds (a driver wraps the student's one)."""
        seen, todo = [], [self.fn]
        while todo and len(seen) < 8:
            f = todo.pop()
            if not hasattr(f, "__code__") or any(f is s for s in seen):
                continue
            seen.append(f)
            for cell in f.__closure__ or ():
                with contextlib.suppress(ValueError):
                    if callable(cell.cell_contents):
                        todo.append(cell.cell_contents)
        return seen

    def __enter__(self) -> Run:
        self.entry = _getframe(1)
        wires = {}
        for entry in FORBIDDEN.get(self.exercise, ()):
            found = _resolve(entry)
            if found is None:
                continue
            holder, attr, original = found
            wire = self._wire(_dotted(entry), original)
            wires[id(original)] = (original, wire)
            self._wired[id(wire)] = (wire, original)
            self._set(holder, attr, wire, "attr")
        if not wires:
            return self
        namespaces = [m.__dict__ for m in list(_modules.values()) if getattr(m, "__dict__", None) is not None]
        fns = self._student_functions()
        namespaces += [f.__globals__ for f in fns]
        done, wired = set(), wires.keys()
        for ns in namespaces:
            if id(ns) in done:
                continue
            done.add(id(ns))
            if wired.isdisjoint(map(id, list(ns.values()))):  # looked at in C first: most hold no forbidden callable
                continue
            for key, value in list(ns.items()):
                hit = wires.get(id(value))
                if hit is not None and value is hit[0]:
                    self._set(ns, key, hit[1], "dict")
        for f in fns:
            for cell in f.__closure__ or ():
                with contextlib.suppress(ValueError):
                    hit = wires.get(id(cell.cell_contents))
                    if hit is not None and cell.cell_contents is hit[0]:
                        self._set(cell, None, hit[1], "cell")
            self._swap_defaults(f, wires)
        return self

    def _swap_defaults(self, f, wires: dict) -> None:
        """A forbidden callable held as a default argument of the student's function: the tripwire instead."""

        def swap(v):
            hit = wires.get(id(v))
            return hit[1] if hit is not None and v is hit[0] else v

        old = f.__defaults__
        if old and any(swap(v) is not v for v in old):
            f.__defaults__ = tuple(swap(v) for v in old)
            self._undo.append(lambda: setattr(f, "__defaults__", old))
        kw = f.__kwdefaults__
        if kw and any(swap(v) is not v for v in kw.values()):
            f.__kwdefaults__ = {k: swap(v) for k, v in kw.items()}
            self._undo.append(lambda: setattr(f, "__kwdefaults__", kw))

    def __exit__(self, *exc) -> None:
        while self._undo:
            self._undo.pop()()
        self._unwire_new_modules()

    def _unwire_new_modules(self) -> None:
        """A module first imported while the run lasted took the tripwire by ``from … import`` (its namespace was
        not there to be undone): the callable it stands for is put back, so no tripwire outlives its run."""
        if not self._wired:
            return
        wires = self._wired.keys()
        for m in list(_modules.values()):
            ns = getattr(m, "__dict__", None)
            if not isinstance(ns, dict) or wires.isdisjoint(map(id, list(ns.values()))):
                continue
            for key, value in list(ns.items()):
                hit = self._wired.get(id(value))
                if hit is not None and value is hit[0]:
                    ns[key] = hit[1]


def forbidden_names() -> set[str]:
    """Every forbidden callable's dotted name, as a case's ``"called"`` gives it."""
    return {_dotted(e) for entries in FORBIDDEN.values() for e in entries}


def run(exercise: str, fn) -> Run:
    """``with run(exercise, fn) as trip:`` — call ``fn`` inside; ``trip.called`` lists what it called."""
    return Run(exercise, fn)
