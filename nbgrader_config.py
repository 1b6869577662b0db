"""nbgrader configuration of the course "The whole Transformer".

Run nbgrader (or `make release|autograde|feedback|grades`) from this folder. Folders follow
nbgrader's defaults, with the autograded output in ``autograde/``:

    source/whole-transformer/      the four notebooks with solutions and hidden tests
    release/whole-transformer/     what students get (nbgrader generate_assignment; committed)
    submitted/<student>/whole-transformer/   what students hand in
    autograde/<student>/whole-transformer/   graded notebooks (not committed)
    feedback/<student>/whole-transformer/    feedback HTML for students
    gradebook.db                   the gradebook (not committed), unless DB_URL names another

The gradebook is nbgrader's SQLite file ``gradebook.db`` here by default. With ``DB_URL`` set in
the environment (``make autograde DB_URL=postgresql://grader@dbhost/course``, or a Unix socket:
``postgresql://grader@/course?host=/run/postgresql``), every command and the Formgrader use that
database instead (PostgreSQL through the pinned psycopg 3 driver); nbgrader creates its schema there
and ``nbgrader db upgrade`` migrates it.

Autograding runs each student's kernel in a bubblewrap sandbox (whole_transformer/course/
sandbox/bubblewrap.py): it cannot read source/, release/, the gradebook, other students or your home
folder, cannot write outside its scratch folder, and has no network. Opt out only on purpose, with
``make autograde NO_SANDBOX=1`` (docs/instructor.md).
"""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties,
    CheckCellMetadata,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from whole_transformer.course.plugins.execute import SandboxExecute  # noqa: E402
from whole_transformer.course.plugins.hide_tests import HideHiddenTests  # noqa: E402
from whole_transformer.course.plugins.inert import MakeInert  # noqa: E402
from whole_transformer.course.plugins.run_result import RunResult  # noqa: E402
from whole_transformer.course.env_vars import db_url  # noqa: E402
from whole_transformer.course.layout import COURSE_ID  # noqa: E402
from whole_transformer.course.plugins.verdict import HoldExpected, Verdict  # noqa: E402

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file

# ---------------------------------------------------------------- the course and its folders
c.CourseDirectory.course_id = COURSE_ID
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograde"
c.CourseDirectory.feedback_directory = "feedback"
# result.json: the course's result of a grading, beside the graded notebooks (autograder/store.py); never copied
# into feedback/ (it names mistakes and holds nbgrader's log), nor taken from a student's hand-in
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    ".wt",
    "your-model.pt",
    "your-models",
    "result.json",
]
if db_url():  # e.g. postgresql://grader@dbhost/course (see the docstring)
    c.CourseDirectory.db_url = db_url()

# ---------------------------------------------------------------- what students get
# An answer cell becomes this stub; its `raises-exception` tag lets "Run All" go on past it.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearSolutions.enforce_metadata = True

# ---------------------------------------------------------------- autograding
# Each notebook runs top to bottom in under 30 s; its slowest cell (a short training run) takes
# a few seconds. A cell gets 30 s, the whole notebook 180 s including restarts after a crash.
c.SandboxExecute.timeout = 30
c.SandboxExecute.iopub_timeout = 8  # after an interrupt: seconds before the kernel is killed
c.SandboxExecute.startup_timeout = 60
c.SandboxExecute.notebook_timeout = 180
c.SandboxExecute.max_restarts = 3
c.SandboxExecute.memory_limit = 3 * 2**30  # address space of the kernel; torch needs ~1.5 GiB
c.SandboxExecute.file_size_limit = 64 * 2**20
c.SandboxExecute.max_outputs = 200
c.SandboxExecute.max_output_bytes = 2_000_000
# The kernel never sees an expected value: HoldExpected keeps them in this process, the kernel hands
# out what the student's functions return, and Verdict compares here (whole_transformer/course/plugins/verdict.py).
c.Autograde.autograde_preprocessors = [
    HoldExpected,  # cut the expected values out of the hidden tests before the kernel starts
    SandboxExecute,  # nbgrader's Execute, sandboxed and surviving dead or stuck kernels
    Verdict,  # judge the handed-out results here; a test cell's outputs become its verdict
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
    RunResult,  # the run's one file for the course: each cell's ending, verdict and points (plugins/run_result.py)
]
c.OverwriteCells.add_missing_cells = True
c.LimitOutput.max_lines = 1000
c.LimitOutput.max_traceback = 100

# ---------------------------------------------------------------- feedback
# Hidden tests, their expected values and tracebacks that show them never reach a student.
# What the student wrote (Markdown, HTML, SVG and JavaScript outputs) is made inert (plugins/inert.py).
c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, MakeInert, CSSHTMLHeaderPreprocessor]

# ---------------------------------------------------------------- the term (course.toml)
# Due date, late policy, extensions and points live in course.toml (whole_transformer/course/term/
# settings.py); reading it here makes every nbgrader command stop on a bad file, with what to fix.
from whole_transformer.course.term.settings import load as _load_term  # noqa: E402

_term = _load_term(os.getcwd() if os.path.isfile("course.toml") else _here)

# ---------------------------------------------------------------- handing out (JupyterHub)
# release_feedback releases who handed in through the exchange and names the others (plugins/exchange.py)
c.ExchangeFactory.release_feedback = "whole_transformer.course.plugins.exchange.ReleaseFeedback"
# collect merges each submission into what the student handed in, file by file (plugins/collect.py); to replace
# whole hand-ins instead: nbgrader collect whole-transformer --MergeCollect.replace=True
c.ExchangeFactory.collect = "whole_transformer.course.plugins.collect.MergeCollect"
# With nbgrader's exchange on a shared JupyterHub, set its folder here, e.g.:
# c.Exchange.root = "/srv/nbgrader/exchange"

# ---------------------------------------------------------------- Validate (students)
# A visible check that is not right writes its hint to stderr under Validate (whole_transformer/checks.py),
# so Validate lists it as failed; this line heads the list. The same words are in the handout's config.
c.Validator.failed_warning = (
    "{num_failed} visible check(s) below are not right yet, each shown with its hint. The visible checks "
    "only help: the hidden tests your instructor runs after you hand in decide the grade.\n")
