"""The classroom: JupyterHub, nbgrader's exchange, an instructor and students on this machine."""
