"""The grading service: each submission to nbgrader's exchange graded at once, its feedback released at once.

``python -m whole_transformer.course serve`` (``serve.py``: the service's passes of the course's one
scheduling loop, ``core/scheduler.py``); the policy in course.toml [service] (``term/settings.py`` reads
it, ``decision.py`` applies it); ``on_submission.py`` which attempt the loop grades next and how each ends;
``watch.py`` the queue (the exchange's inbound folders) and the durable record of what was done;
``attempt.py`` one attempt's ending (into the course, feedback, record); ``attempt_feedback.py`` the pages
and their release into the exchange; ``status.py`` the log and the status page. Each attempt's nbgrader run is forked
from the warm nbgrader (``autograder/warm_nbgrader.py``).
"""
