"""The grading service: each submission to nbgrader's exchange graded at once, its feedback released at once.

``python -m whole_transformer.course serve`` (``serve.py``); the policy in course.toml [service]
(``term/settings.py`` reads it, ``policy.py`` applies it); ``watch.py`` the queue (the exchange's
inbound folders) and the durable record of what was done; ``attempt.py`` one attempt's ending
(into the course, feedback, record); ``feedback.py`` the pages and their release into the exchange;
``status.py`` the log and the status page.
"""
