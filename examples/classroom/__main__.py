"""``python -m examples.classroom up|down`` (from the repository's folder): see ``up.py``."""

import sys

from .up import main

sys.exit(main())
