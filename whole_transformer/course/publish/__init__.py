"""The builds: release/ (what students get), the lecture edition notebooks/, the students' handout."""
