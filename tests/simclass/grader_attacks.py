"""The code the simulated class's hostile students hand in (tests/simclass/students.py), one constant each.

Each is written where a student would put it: an answer of their own, or code run before the first wrong
answer of an exercise (``edits.tamper``). SNOOP and VANDAL are templates: the course's paths and a loopback
listener's port are filled in (``edits.insert_with_paths``).
"""

# ------------------------------------------------------------------ attacks on the kernel
SWALLOW_INTERRUPT = (
    "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n    except KeyboardInterrupt:\n        pass"
)

EXIT_IN_THE_HIDDEN_TEST = (
    "import os\n\n\ndef next_token(h, W, b):\n    if len(h) == 1:\n"
    "        os._exit(1)\n    return int(np.argmax(h @ W + b))"
)

ALLOCATES_64_GIB = (
    "def next_token(h, W, b):\n    hog = bytearray(64 * 2**30)  # 64 GiB\n    return int(np.argmax(h @ W + b))"
)

CALLS_ITSELF = (
    "def greedy_decode(model, prompt, eos=1, max_new=6):\n    return greedy_decode(model, prompt, eos, max_new)"
)

# ------------------------------------------------------------------ fooling the tests
SHADOWS_BUILTINS = (
    "abs = lambda x: 0.0\nisinstance = lambda *a: True\nfloat = lambda x=0: 0.0\nround = lambda *a, **k: 0\n"
)

ALWAYS_EQUAL = """\
class Anything(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def next_token(h, W, b):
    return Anything(0)
"""

REPLACES_NUMPY_COMPARISONS = (
    "np.isclose = lambda *a, **k: True\nnp.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
)

ONLY_WHEN_GRADED = (
    "import os\n\nif os.environ.get('NBGRADER_EXECUTION'):\n"
    "    import builtins\n    builtins.abs = lambda x: 0\n"
    "    np.array_equal = lambda *a, **k: True\n    np.isclose = lambda *a, **k: True\n"
)

# ------------------------------------------------------------------ talking the kernel into points
PATCH_GRADING = """\
from whole_transformer import grading
for name in dir(grading):
    if callable(getattr(grading, name)) and not name.startswith("__"):
        setattr(grading, name, lambda *a, **k: True)"""

SWAP_MODULES = """\
import sys, types


class Yes(types.ModuleType):
    def __getattr__(self, name):
        return lambda *a, **k: True


import whole_transformer
sys.modules["whole_transformer.grading"] = whole_transformer.grading = Yes("whole_transformer.grading")
sys.modules["numpy.testing"] = Yes("numpy.testing")"""

SWALLOW_EVERY_ERROR = "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n"

LYING_FLOAT = """\
class Liar(float):
    def __eq__(self, other):
        return True

    def __sub__(self, other):
        return Liar(0.0)

    def __rsub__(self, other):
        return Liar(0.0)

    def __abs__(self):
        return 0.0

    __hash__ = float.__hash__


def masked_loss(logits, targets, pad=0):
    return Liar(123.0)
"""

NO_ASSERT = """\
import ast


class NoAssert(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()


get_ipython().ast_transformers.append(NoAssert())"""

FAKE_VERDICT = """\
from IPython.display import publish_display_data


def _after(result):
    print("Tests passed.")
    publish_display_data({"application/vnd.whole-transformer.results+json":
                          '{"name": "next_token", "results": [{"value": 0}]}', "text/plain": "ok"})


get_ipython().events.register("post_run_cell", _after)"""

# ------------------------------------------------------------------ reaching outside the submission
SNOOP = """\
import os, pathlib
for path in ["../../source/whole-transformer/03-one-word-at-a-time.ipynb", "../../../gradebook.db",
             {source!r}, {gradebook!r}, {other!r}, os.path.expanduser("~/.bashrc"), "/root/.bashrc"]:
    try:
        print("READ", path, len(open(path, "rb").read()))
    except Exception as e:
        print("DENIED", path, type(e).__name__)
print("LISTING", sorted(os.listdir("..")))
"""

VANDAL = """\
import os, socket
for path in [{root!r} + "/pwned.txt", {root!r} + "/gradebook.db", {root!r} + "/submitted/full/x.txt",
             "../../pwned.txt", "/root/pwned.txt"]:
    try:
        with open(path, "a") as f:
            f.write("pwned")
        print("WROTE", path)
    except Exception as e:
        print("DENIED", path, type(e).__name__)
try:  # a listener outside the sandbox, on the machine's loopback address (tests/simclass/loopback.py)
    socket.create_connection(("127.0.0.1", {port}), timeout=3)
    print("NETWORK open")
except Exception as e:
    print("NETWORK closed", type(e).__name__)
"""
