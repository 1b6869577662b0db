"""The classroom: JupyterHub, nbgrader's exchange, an instructor and students on this machine (``make classroom``).

A worked example and the test rig of the JupyterHub term (tests/classroom), built on the course package but
not part of it: what students and instructors install holds none of it. ``up`` is the command (the hub:
``hub``; what it made: ``room``; its accounts and the instructor's course: ``instructor``; ``down``:
``teardown``), the students' ``env`` (seeded from the running one: ``seed``), ``commands`` (run as an
account). The hub's sign-in from an LMS, which a real hub needs too, is the package's: ``lti/hub.py``.
"""
