"""The course as an instructor runs it: release, lecture edition, autograding, feedback, grades.

``python -m whole_transformer.course release|lecture|autograde [--jobs N]|feedback|grades``
(the Makefile's targets). Modules:

- ``layout``     where things are (nbgrader's folders), the assignment's name, running nbgrader;
- ``cells``      what a notebook cell is to nbgrader (grade id, flags, solution and hidden regions);
- ``build``      release/ (nbgrader generate_assignment) and the lecture edition notebooks/;
- ``kernel``     running a notebook top to bottom in a fresh kernel;
- ``sandbox``    the bubblewrap sandbox the student's kernel runs in;
- ``execute``    nbgrader's Execute step, sandboxed and surviving dead or stuck kernels;
- ``verdict``    the hidden tests' expected values held outside the kernel, and the verdict;
- ``hidden``     the hidden tests of source/, generated from the reference solutions;

Autograding a class (``autograde``), one student through the pipeline, one module a stage:

- ``gradebook``  the course gradebook and the assignment in it (template, pack, stamp);
- ``locate``     which file handed in is which notebook; a student's files packed as a job;
- ``restore``    protected cells put back as released, each change a finding;
- ``scan``       suspicious code in what the student wrote;
- ``run``        one student graded by nbgrader in a private course: the stages in order;
- ``merge``      the result put into the course gradebook and autograde/;
- ``record``     the typed record of a student's grading, the integrity report;
- ``graders``, ``claims``, ``cluster``   where grading runs, who grades whom, a local Dask cluster;
- ``hide_tests`` the preprocessor that keeps hidden tests out of feedback;
- ``feedback``   make feedback; ``grades`` grades.csv and grades-detail.csv.

Nothing here is imported by the notebooks; the sandbox hides this subpackage from student code.
"""

import sys as _sys

# nbformat imports jsonschema, which on import compiles rfc3987-syntax's Lark grammar (1.6 s here)
# to check the "iri" string format, which no notebook or gradebook schema uses. Every process of the
# course (its commands, the nbgrader runs they start: ``nbgrader_app``, Dask workers grading) goes
# without it; jsonschema then leaves out that one format check.
_sys.modules.setdefault("rfc3987_syntax", None)
