"""nbgrader's release_feedback for a class that hands in by several routes.

Stock ``nbgrader release_feedback`` stops with ``FileNotFoundError: …/submission_secret.txt`` at the
first student who did not hand in through nbgrader's exchange (git, an LMS zip, a copy by hand):
only ``nbgrader submit`` writes that secret, and the student's ``fetch_feedback`` finds their
feedback by it. ``ReleaseFeedback`` releases the feedback of every student who has one and names
the others, whose feedback goes by the page ``make feedback`` writes (feedback-pages/<student>.html).
"""

from __future__ import annotations

import glob
import os

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback


class ReleaseFeedback(ExchangeReleaseFeedback):
    def copy_files(self):
        pattern = self.coursedir.format_path(self.coursedir.feedback_directory, "*", self.coursedir.assignment_id)
        skipped = []
        for folder in sorted(glob.glob(pattern)):
            if glob.glob(os.path.join(folder, "*.html")) and not all(
                os.path.isfile(os.path.join(folder, f)) for f in ("submission_secret.txt", "timestamp.txt")
            ):
                skipped.append(os.path.basename(os.path.dirname(folder)))
        if skipped:
            self.log.warning(
                "not released through the exchange (handed in another way, no submission_secret.txt): "
                "%s; give them feedback-pages/<student>.html instead",
                ", ".join(skipped),
            )
            excluded = set(filter(None, (self.coursedir.student_id_exclude or "").split(",")))
            self.coursedir.student_id_exclude = ",".join(sorted(excluded | set(skipped)))
        super().copy_files()
