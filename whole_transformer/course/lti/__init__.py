"""The course inside an LMS, by LTI 1.3: the tool's side of a launch, and the scores back through AGS.

``settings`` reads course.toml's ``[lti]``; ``keys`` makes and loads the tool's key pair; ``tool_config``
prints what an LMS admin pastes; ``launch`` checks the LMS's signed id_token (or refuses it, saying why);
``roster_link`` puts the launched student into the roster; ``hub`` is JupyterHub's sign-in from the LMS
(jupyterhub-ltiauthenticator with the course's checks, the assignment fetched before a student's server
starts); ``passback`` sends each score to the LMS's line item and keeps what did not arrive for the next post;
``after_grading`` posts as grading ends (``make autograde``, ``make grades``, each attempt the grading service
merges). The commands are in ``commands/lti.py``.
"""
