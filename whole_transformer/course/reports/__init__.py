"""Reports: feedback for students, grades for the instructor."""
