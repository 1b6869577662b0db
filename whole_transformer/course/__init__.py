"""The course as an instructor runs it: release, lecture edition, autograding, feedback, grades.

``python -m whole_transformer.course release|lecture|autograde [--jobs N]|feedback|grades``
(the Makefile's targets). Modules:

- ``layout``     where things are (nbgrader's folders, DESIGN.md section 2);
- ``build``      release/ (nbgrader generate_assignment) and the lecture edition notebooks/;
- ``sandbox``    the bubblewrap sandbox the student's kernel runs in;
- ``execute``    nbgrader's Execute step, sandboxed and surviving dead or stuck kernels;
- ``integrity``  restore protected cells, report tampering and suspicious code;
- ``autograde``  grade a class, N students at once, each in a private course, then merge;
- ``feedback``   the preprocessor that keeps hidden tests out of feedback;
- ``feedback_cmd`` make feedback; ``grades`` grades.csv and grades-detail.csv.

Nothing here is imported by the notebooks; the sandbox hides this subpackage from student code.
"""
