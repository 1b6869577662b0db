"""nbgrader's settings for a student's copy of the course: only what Validate says.

The Validate button (and ``nbgrader validate``) lists every visible check that is not right yet,
with its hint; this line heads that list. The grade comes from the hidden tests the instructor runs.
"""

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file
c.Validator.failed_warning = (
    "{num_failed} visible check(s) below are not right yet, each shown with its hint. The visible checks "
    "only help: the hidden tests your instructor runs after you hand in decide the grade.\n"
)
