"""What a forward-pass exercise of notebook 02 may not call: the model it is asked to build, in another form.

``layer_norm``, ``multi_head_attention``, ``decoder_block`` and ``forward`` are to be written in NumPy. A
solution that imports torch or the package's model code, or calls a name the notebook brings in that runs the
torch model (``trace``, ``load_model``, ``float64_model``), gets its result from the course and earns nothing:
``refusal`` reads the solution cell's syntax tree, in the grader (never in the kernel), and says why.

>>> uses("def forward(ids, weights, n_heads=4, pad=0):\\n    import torch\\n    return trace(load_model('60'), ids)")
['torch', 'trace', 'load_model']
"""

from __future__ import annotations

import ast

#: the exercises the rule applies to
EXERCISES = ("layer_norm", "multi_head_attention", "decoder_block", "forward")
#: modules whose use is refused (a module, or any module under it)
MODULES = (
    "torch",
    "whole_transformer.model",
    "whole_transformer.fast",
    "whole_transformer.steps",
    "whole_transformer.train",
    "whole_transformer.decode",
    "whole_transformer.stepwise",
    "whole_transformer.labs",
    "whole_transformer.course",
)
#: names of the notebook's that run the torch model
NAMES = {"torch", "trace", "load_model", "float64_model", "exact_copy", "Transformer"}


def _refused_module(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in MODULES)


def uses(source: str) -> list[str]:
    """What the cell uses of ``MODULES`` and ``NAMES``, once each, in the order it is written."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if _refused_module(a.name)]
            found += [a.name for a in node.names if a.name == "whole_transformer"]  # its modules by attribute
        elif isinstance(node, ast.ImportFrom) and node.module:
            if _refused_module(node.module):
                found.append(node.module)
            elif node.module == "whole_transformer":
                found += [
                    f"whole_transformer.{a.name}" for a in node.names if _refused_module(f"whole_transformer.{a.name}")
                ]
        elif isinstance(node, ast.Name) and node.id in NAMES:
            found.append(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            found.append("__import__")
    return list(dict.fromkeys(found))


def refusal(exercise: str, source: str) -> str | None:
    """Why the solution of ``exercise`` earns nothing (it calls what it should build), or None."""
    if exercise not in EXERCISES or not source:
        return None
    used = uses(source)
    if not used:
        return None
    return (
        f"{exercise} is refused: it uses {', '.join(used)}. This exercise is to be written in NumPy; "
        "code that gets its result from torch or from the course's own model (torch, the course's model and its "
        "steps) earns no points for it, whatever it returns. Write it with np and the notebook's own functions, "
        "then run its check again."
    )
