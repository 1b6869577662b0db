"""The rules of the review stage (``code_review.py``): what in a cell's syntax tree an instructor should look at.

``RuleWalk`` walks one cell and lists, once each: builtins or module attributes replaced, the
package's reference implementations (``REFERENCE_FUNCTIONS``) or grading internals
(``FORBIDDEN_MODULES``) imported, files read outside the submission, IPython internals touched,
objects that compare equal to anything, frame introspection and dynamic code, the process killed,
and KeyboardInterrupt swallowed inside a loop.
"""

from __future__ import annotations

import ast
import builtins

#: package functions that do part of an exercise's job (batched, on tensors): using one in an answer is reported
REFERENCE_FUNCTIONS = {
    "task": {"xy_arrays", "make_batch"},
    "train": {"loss_fn"},
    "decode": {"greedy_step", "greedy_trace", "read_numbers"},
    "labs": {"keep_mask"},  # labs._sampling: the sampling lab's top-k and top-p, batched
}
#: package modules no answer has any business importing
FORBIDDEN_MODULES = ("whole_transformer.course", "nbgrader")

_BUILTIN_NAMES = {n for n in dir(builtins) if not n.startswith("_")} | {"__builtins__", "__import__"}
_HARMLESS_BUILTIN_NAMES = {"copyright", "credits", "license", "exit", "quit", "help"}
_SENSITIVE_WORDS = ("source", "release", "gradebook", "autograde", "submitted", "nbgrader_config", ".ipynb")
# the tables of names, several a row (they read best that way), so the formatter leaves them as they are
# fmt: off
_FILE_FUNCS = {
    "open", "listdir", "scandir", "walk", "glob", "iglob", "load", "loadtxt", "genfromtxt", "fromfile",
    "read_text", "read_bytes", "write_text", "write_bytes", "copy", "copyfile", "copytree", "rmtree",
    "remove", "unlink", "rename", "replace", "symlink", "link", "system", "popen", "run", "Popen",
    "check_output", "call", "chdir", "makedirs", "mkdir", "rmdir", "iterdir", "rglob", "stat",
}
_INTROSPECTION = {
    ("sys", "_getframe"), ("inspect", "currentframe"), ("inspect", "stack"), ("inspect", "getouterframes"),
    ("inspect", "getsource"), ("traceback", "extract_stack"), ("traceback", "print_stack"),
    ("gc", "get_objects"), ("gc", "get_referrers"), ("sys", "settrace"), ("sys", "setprofile"),
    ("sys", "modules"), ("sys", "excepthook"), ("sys", "displayhook"),
}
_IPYTHON_HOOKS = ("input_transformers", "ast_transformers", "set_custom_exc", "events", "run_cell",
                  "showtraceback", "display_formatter", "user_ns", "register_magic_function")
_MAGIC_METHODS = {"__eq__", "__ne__", "__bool__", "__float__", "__int__", "__index__", "__array__",
                  "__len__", "__getattr__", "__getattribute__", "__abs__", "__round__", "__hash__"}
# fmt: on
_VALUE_BASES = {"int", "float", "str", "tuple", "list", "dict", "bool", "ndarray", "Tensor", "number"}


def _root(node) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _strings(node) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _outside(path: str) -> bool:
    p = path.strip()
    return (
        p.startswith(("/", "~"))
        or ".." in p.replace("\\", "/").split("/")
        or any(w in p for w in ("gradebook", "nbgrader_config"))
    )


class RuleWalk(ast.NodeVisitor):
    """Walks one cell's syntax tree; ``found`` lists what an instructor should look at."""

    def __init__(self, aliases: dict[str, str], raw: str = ""):
        self.aliases = aliases
        self.raw = raw  # the cell as written (magics turn into get_ipython() calls we should not report)
        self.found: list[str] = []
        self.depth = 0  # inside def/class bodies
        self.loops = 0

    def add(self, msg: str) -> None:
        if msg not in self.found:
            self.found.append(msg)

    def _module_of(self, name: str) -> str | None:
        return self.aliases.get(name)

    # --- bindings of builtin names and module attributes
    def _bind(self, target, how: str) -> None:
        if isinstance(target, ast.Name):
            if self.depth == 0 and target.id in _BUILTIN_NAMES and target.id not in _HARMLESS_BUILTIN_NAMES:
                self.add(f"replaces the builtin {target.id!r} ({how})")
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            root = _root(target)
            dotted = _dotted(target.value if isinstance(target, ast.Subscript) else target)
            if isinstance(root, ast.Name) and self._module_of(root.id):
                mod = self._module_of(root.id)
                self.add(f"replaces {dotted or root.id} (in module {mod}) ({how})")
            elif isinstance(root, ast.Name) and root.id in {"__builtins__", "builtins"}:
                self.add(f"changes builtins ({how})")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._bind(t, how)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, how)

    def visit_Assign(self, node):
        for t in node.targets:
            self._bind(t, "assignment")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._bind(node.target, "assignment")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._bind(node.target, "assignment")
        self.generic_visit(node)

    def visit_Delete(self, node):
        for t in node.targets:
            self._bind(t, "del")
        self.generic_visit(node)

    def visit_Global(self, node):
        for n in node.names:
            if n in _BUILTIN_NAMES and n not in _HARMLESS_BUILTIN_NAMES:
                self.add(f"replaces the builtin {n!r} (global statement)")

    def _def(self, node, kind):
        if self.depth == 0 and node.name in _BUILTIN_NAMES and node.name not in _HARMLESS_BUILTIN_NAMES:
            self.add(f"replaces the builtin {node.name!r} ({kind} definition)")
        if isinstance(node, ast.ClassDef):
            for b in node.bases:
                name = _dotted(b).split(".")[-1]
                if name in _VALUE_BASES:
                    self.add(f"class {node.name} subclasses {name} (a value that may lie about itself)")
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in _MAGIC_METHODS:
                    self.add(f"class {node.name} defines {item.name} (an object that may compare equal to anything)")
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node):
        self._def(node, "function")

    def visit_AsyncFunctionDef(self, node):
        self._def(node, "function")

    def visit_ClassDef(self, node):
        self._def(node, "class")

    def visit_Lambda(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_For(self, node):
        self._bind(node.target, "loop variable")
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def visit_While(self, node):
        self.loops += 1
        self.generic_visit(node)
        self.loops -= 1

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self._bind(item.optional_vars, "with statement")
        self.generic_visit(node)

    def visit_NamedExpr(self, node):
        self._bind(node.target, "assignment")
        self.generic_visit(node)

    # --- imports
    def _check_module(self, module: str, names=()):
        for bad in FORBIDDEN_MODULES:
            if module == bad or module.startswith(bad + "."):
                what = "grading internals, reference implementations" if "course" in bad else "grading internals"
                self.add(f"imports {module} ({what})")
            for n in names:
                if f"{module}.{n}" == bad:
                    what = "grading internals, reference implementations" if "course" in bad else "grading internals"
                    self.add(f"imports {bad} ({what})")
        if module.startswith("whole_transformer."):
            short = module.split(".")[1]
            for n in names:
                if n in REFERENCE_FUNCTIONS.get(short, ()):
                    self.add(f"imports the package's own {module}.{n} (a reference implementation)")
                if short == "grading" or (short == "checks" and n != "check"):
                    self.add(f"imports grading internals {module}.{n}")

    def visit_Import(self, node):
        for a in node.names:
            self._check_module(a.name)
            if self.depth == 0 and a.asname in _BUILTIN_NAMES:
                self.add(f"replaces the builtin {a.asname!r} (import)")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.module:
            self._check_module(node.module, [a.name for a in node.names])
        for a in node.names:
            name = a.asname or a.name
            if self.depth == 0 and name in _BUILTIN_NAMES and name not in _HARMLESS_BUILTIN_NAMES:
                self.add(f"replaces the builtin {name!r} (import)")
        self.generic_visit(node)

    # --- attribute uses
    def visit_Attribute(self, node):
        dotted = _dotted(node)
        root = _root(node)
        if isinstance(root, ast.Name):
            mod = self._module_of(root.id) or ""
            parts = dotted.split(".")
            full = ".".join([mod] + parts[1:]) if mod else dotted
            short = mod.split(".")[1] if mod.startswith("whole_transformer.") else None
            if any(full == b or full.startswith(b + ".") for b in FORBIDDEN_MODULES):
                self.add(f"uses {full} (reference implementations or grading internals)")
            if short and len(parts) > 1 and parts[1] in REFERENCE_FUNCTIONS.get(short, ()):
                self.add(f"uses the package's own {full} (a reference implementation)")
            if mod == "whole_transformer" and len(parts) > 2 and parts[2] in REFERENCE_FUNCTIONS.get(parts[1], ()):
                self.add(f"uses the package's own {full} (a reference implementation)")
            if mod == "whole_transformer.grading" or (mod == "whole_transformer.checks" and parts[1:2] != ["check"]):
                self.add(f"uses grading internals {full}")
            if (mod.split(".")[0], parts[-1]) in _INTROSPECTION or tuple(full.split(".")[:2]) in _INTROSPECTION:
                self.add(f"uses {full} (frame introspection or interpreter hooks)")
        if node.attr in _IPYTHON_HOOKS:
            self.add(f"uses IPython internals ({dotted or node.attr})")
        self.generic_visit(node)

    # --- calls
    def visit_Call(self, node):
        name = _dotted(node.func)
        last = name.split(".")[-1] if name else ""
        root = _root(node.func)
        mod = self._module_of(root.id) if isinstance(root, ast.Name) else None
        if last in {"setattr", "delattr"} and node.args:
            target = node.args[0]
            if isinstance(target, ast.Name) and self._module_of(target.id):
                self.add(f"{last}() on module {self._module_of(target.id)}")
        if name in {"exec", "eval", "compile", "__import__"} or (mod == "importlib"):
            self.add(f"runs dynamic code ({name or last})")
        if name == "get_ipython" and "get_ipython" in self.raw:
            self.add("uses IPython internals (get_ipython)")
        if name in {"os._exit", "sys.exit", "exit", "quit", "os.kill", "os.abort"} or (mod == "signal"):
            self.add(f"ends or signals the process ({name})")
        if last in _FILE_FUNCS or name in {"open", "io.open"}:
            paths = _strings(node)
            bad = [p for p in paths if _outside(p)]
            if bad:
                self.add(f"touches files outside the submission: {name}({bad[0]!r})")
            elif not paths and (name in {"open", "io.open", "os.open"} or last in {"listdir", "scandir", "walk"}):
                self.add(f"opens a file whose path is computed at run time: {name}(…)")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            v = node.value
            if _outside(v) and any(w in v for w in _SENSITIVE_WORDS):
                self.add(f"names a path outside the submission: {v[:60]!r}")

    def visit_ExceptHandler(self, node):
        names = []
        t = node.type
        if t is None:
            names = ["(bare except)"]
        else:
            for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                names.append(_dotted(e))
        if any(n in {"KeyboardInterrupt", "BaseException", "(bare except)"} for n in names) and self.loops:
            self.add(f"catches {names[0]} inside a loop (cannot be interrupted)")
        self.generic_visit(node)
