"""nbgrader's settings for a student's copy of the course: what Validate says, and how it reaches its kernel.

The Validate button (and ``nbgrader validate``) lists every visible check that is not right yet,
with its hint; this line heads that list. The grade comes from the hidden tests the instructor runs.

Validate runs the notebook in a kernel of its own. Over TCP (Jupyter's default) that kernel warns, on every
run, "Kernel is running over TCP without encryption ... susceptible to eavesdropping": the kernel and nbgrader
talk through ports of this computer (127.0.0.1), which another user logged in to the same machine could
connect to. Here they talk through socket files in Jupyter's runtime folder instead (IPC; the folder is
yours alone, and the files go when the kernel ends), so the warning does not come.
"""

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file
c.Validator.failed_warning = (
    "{num_failed} visible check(s) below are not right yet, each shown with its hint. The visible checks "
    "only help: the hidden tests your instructor runs after you hand in decide the grade.\n"
)
# IPC: the kernel's channels are socket files in Jupyter's runtime folder while it runs
c.KernelManager.transport = "ipc"
