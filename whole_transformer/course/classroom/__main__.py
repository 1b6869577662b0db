"""``python -m whole_transformer.course.classroom up|down``: see ``hub.py``."""

import sys

from .hub import main

sys.exit(main())
