"""Grading a class: one student's path from locating files to the merged record, local or on Dask."""
