"""The typed grading core: what a grading decides and keeps, as data, and the loop that runs graders.

The other subpackages of ``course/`` import it; it imports none of them (nor ``layout``), only the
student side's plain data (``whole_transformer.questions``, for a question's answer letter):

- ``verdict``    ``CellVerdict``, the grader's verdict on one test cell (its ``Outcome``, the cases passed
  of those run, the failed kinds, the named mistake or the wrong answer and its hint, the partial score);
  its JSON is what ``result.json`` holds;
- ``results``    the result of grading one submission: a ``Result`` (per notebook a ``NotebookResult``, per
  test cell a ``CellStatus``: status, reason, verdict, points; the findings, each a ``Finding``), kept as one
  versioned ``result.json``, and ``Status``, the one vocabulary of how a grading or an attempt ended;
- ``expected``   the format of a hidden test's EXPECTED part (``expected_region``, ``split_expected``), its floats
  rounded by each case's tolerance (``rounded_payload``) and judged in step (``in_step``);
- ``compare``    how a handed-out result is compared with an expected case (``case_passes``, ``judge``);
- ``scheduler``  the one scheduling loop (claim, submit, poll, classify, merge) that ``make autograde`` and
  the grading service both run, each with its own queue.

A verdict on its way: ``plugins/cell_verdict.assess`` makes a ``CellVerdict``; ``plugins/verdict.Verdict``
hands its JSON to ``plugins/run_result.RunResult``, which writes the nbgrader run's one file; ``autograder/grade.py``
reads that into the submission's ``Result``, which ``autograder/store.py`` keeps as ``result.json``;
``reports/grades.py`` (``grades-detail.csv``), ``reports/class_insights.py`` and ``service/attempt_feedback.py``
read its fields.
"""
