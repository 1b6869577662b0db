"""The sandbox: the bubblewrap launcher of a student's kernel and the warm fork server. It knows nothing of grades."""
