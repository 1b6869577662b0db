"""What nbgrader runs: the app, the sandboxed Execute step, the verdict outside the kernel, the feedback filter."""
