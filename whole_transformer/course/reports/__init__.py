"""Reports: feedback for students, grades for the instructor.

``ABOUT_STUDENTS``: every file and folder the course's commands write in the course folder about students
(their work, grades, feedback, names or mistakes), each ignored by the repository's ``.gitignore`` so that
``git add -A`` in the course folder commits none of them (tests/test_term.py checks it after a whole term).
"""

#: (path in the course folder, the command that writes it); a folder ends with "/"
ABOUT_STUDENTS = (
    ("submitted/", "make roster, make collect-zip, nbgrader collect, make serve: what each student handed in"),
    ("downloaded/", "make collect-zip: the LMS zips' notebooks as downloaded"),
    ("autograde/", "make autograde, make serve: the graded notebooks and each result.json; the course's state"),
    ("gradebook.db", "make roster, make autograde: nbgrader's gradebook (names, emails, scores, comments)"),
    ("gradebook.db-journal", "SQLite, while the gradebook is written"),
    ("feedback/", "make feedback: nbgrader's feedback per student"),
    ("feedback-pages/", "make feedback: one page per student"),
    (".feedback.previous-1/", "make feedback: the previous run's feedback, while a new one is written"),
    ("grades.csv", "make grades: nbgrader's export"),
    ("grades-detail.csv", "make grades: a row per student and graded cell"),
    ("canvas-grades.csv", "make grades: for Canvas"),
    ("moodle-grades.csv", "make grades: for Moodle"),
    ("integrity-report.csv", "make autograde: the findings on each hand-in"),
    ("insights.csv", "make insights: each student beside their mistakes"),
    ("insights.html", "make insights: the class report, naming students"),
    ("students.csv", "make roster FILE=students.csv: the class list, when kept in the course folder"),
    (".nbgrader.log", "nbgrader's log, which names students"),
)
