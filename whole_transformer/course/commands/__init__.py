"""The instructor's commands, each declared once (``declare``): ``material`` builds and checks what the
course hands out, ``submissions`` takes in, grades and reports on what the class hands in, ``grade_one`` grades
one submission anywhere (its result said and written to a folder), ``lti`` puts the course inside an LMS (its
key, its configuration, the scores posted to the LMS's gradebook).

``COMMANDS`` is every command by name, in the order ``--help`` lists them.
"""

from __future__ import annotations

from . import grade_one, lti, material, submissions
from .declare import Command, declared

COMMANDS: dict[str, Command] = {
    c.name: c for module in (material, submissions, grade_one, lti) for c in declared(module)
}
