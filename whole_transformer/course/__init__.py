"""The course as an instructor runs it: release, lecture edition, autograding, feedback, grades.

``python -m whole_transformer.course <command>`` (``__main__.py`` runs it; ``commands/`` declares each
command once: its function, arguments and help line; the Makefile's targets call them). One subpackage
per subsystem:

- ``layout``, ``cells``  where things are (nbgrader's folders, running nbgrader); what a cell is to nbgrader;
  ``gradebook`` the course's gradebook and each private course's; ``whole_output`` a command's output folders
  replaced all or nothing; ``csp`` the Content-Security-Policy of every page the course writes or serves;
- ``core/``       the typed grading core, which imports no other subpackage: a cell's ``verdict`` and a
  submission's ``results`` as dataclasses, the ``expected`` values' format, ``compare`` (a result with
  them) and the one ``scheduler`` loop;
- ``answers/``    everything that knows the answers: ``reference`` solutions, the ``mistakes`` catalogue
  (``mistakes.toml``), ``hidden_tests`` (the exercises' hidden cases, worked out with the reference;
  ``hidden_cached`` those of ``cached_attention``, ``hidden_sampling`` ``sample_next``'s (its draws);
  ``hidden_cells`` source/'s test cells kept in step with them, ``hidden_parts`` their text and digest),
  ``check_data`` (the visible checks' hashes);
- ``publish/``    ``release`` (release/), ``lecture`` (notebooks/ and their HTML), ``handout`` (the
  students' repository), ``notebook`` (running a notebook top to bottom: the one ``run_notebook``),
  their ``templates/`` and ``vendor/``;
- ``plugins/``    what nbgrader runs (its plug-ins): ``app`` (nbgrader started light), ``execute`` (the sandboxed,
  crash-proof Execute step), ``verdict`` (expected values held outside the kernel; ``cell_verdict`` one
  cell's verdict, ``verdict_text`` what a verdict says), ``hide_tests``
  (the feedback filter), ``inert`` (what a student wrote, sanitized before a page someone else opens shows it),
  ``collect`` (nbgrader collect merging each submission into the hand-in, file by file);
- ``sandbox/``    ``bubblewrap`` (the student's kernel locked in; ``spec`` what it may see, as bwrap
  arguments), ``warm_kernels`` (each student's kernels forked from one fork server; ``kernel_process``
  such a kernel as jupyter_client sees it), ``zygote`` (the service's one warm process whose kernels
  enter each student's sandbox); the programs run as they are: ``fork_server``, ``kernel_zygote``,
  ``kernel_launcher`` (``limits`` inlined in each); it knows nothing of grades;
- ``autograder/`` the grading unit: an ``assignment`` and a ``submission`` in, one result out (``grade``: the
  stages in order in a private course, one module a stage: ``locate``, ``restore``, ``code_review`` (its rules:
  ``code_rules``), ``nbgrader_run`` its nbgrader process); the one ``store`` of results (the merge into the
  course, and ``result.json`` read back); a class: ``autograde`` (what it checks first: ``prepare``; what it
  tells as it goes: ``class_log``), ``graders`` (local or Dask), ``claims``, ``cluster``; the LMS's zips:
  ``collect_zip``, ``lms_names``;
- ``reports/``    ``feedback``, ``grades`` and ``insights`` (what it counts: ``class_insights``; its page:
  ``insights_page``);
- ``service/``    grading on submission (``serve``): the exchange watched (``watch``), each attempt decided under
  course.toml's [service] policy (``decision``), graded and ended (``on_submission``, ``attempt``), its feedback
  released (``attempt_feedback``);
- ``term/``       the term's ``settings`` (course.toml; its sections ``late_policy`` and ``service_policy``,
  one value read: ``toml_values``), ``late`` (lateness and penalty), ``handin_time`` (the time a hand-in
  counts: the claim against the evidence; ``handin_merge`` a hand-in only ever added to, each file's time
  recorded), ``roster``, ``names``;
- ``lti/``        the course inside an LMS by LTI 1.3: ``settings`` (course.toml's ``[lti]``), ``keys`` (the tool's
  key pair), ``tool_config`` (what an LMS admin pastes), ``launch`` (an id_token checked or refused),
  ``roster_link`` (the launched student on the roster), ``passback`` (the scores to the LMS's gradebook),
  ``after_grading`` (when grading ends, the scores sent), ``hub`` (JupyterHub's sign-in from the LMS).

``make classroom`` (JupyterHub on this machine) is an example beside the package, not in it: examples/classroom/.

Nothing here is imported by the notebooks; the sandbox hides this subpackage from student code.
Module by module, a line on each: docs/code.md (``tests/test_codebase.py`` checks that both list every
subpackage).
"""

import sys as _sys

# nbformat imports jsonschema, which on import compiles rfc3987-syntax's Lark grammar (1.6 s here)
# to check the "iri" string format, which no notebook or gradebook schema uses. Every process of the
# course (its commands, the nbgrader runs they start: ``plugins/app.py``, Dask workers grading) goes
# without it; jsonschema then leaves out that one format check.
# (None in sys.modules makes the import fail, as the import system documents; typeshed types the values ModuleType)
_sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
