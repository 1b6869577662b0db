"""``python -m whole_transformer.course.classroom up|down``: see ``up.py``."""

import sys

from .up import main

sys.exit(main())
