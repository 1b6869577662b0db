"""The instructor's commands, each declared once (``declare``): ``material`` builds and checks what the
course hands out, ``submissions`` takes in, grades and reports on what the class hands in.

``COMMANDS`` is every command by name, in the order ``--help`` lists them.
"""

from __future__ import annotations

from . import material, submissions
from .declare import Command, declared

COMMANDS: dict[str, Command] = {c.name: c for module in (material, submissions) for c in declared(module)}
