"""The kernel zygote: one Python that imports the libraries once for every student, and forks each kernel
into the sandbox of the student it grades.

Run as ``python -c <programs.source("kernel_zygote")> SOCKET`` outside any sandbox, with the environment
a sandboxed kernel gets (``zygote.KernelZygote``). It imports ipykernel, NumPy, PyTorch and the student's
side of the course's package, and never anything of ``whole_transformer.course`` (an import of it fails
here, and the zygote refuses to start if one slipped in): so its memory, which every kernel inherits,
holds no answer, test or gradebook. It never runs a line of a student's code.

A request on SOCKET (a JSON line; passed with it, the grading run's stderr and a pidfd of the process
it names) names the host pid of a student's sandbox (the ``fork_server`` bubblewrap started for that
student, as before: its own folders, /tmp, PID and network namespaces, user and limits) and a kernel's
connection file. A
*joiner* is forked: it enters every namespace of that sandbox and its root (``join``), then forks the
kernel, which is born inside that sandbox's PID namespace, drops every capability, sets the limits and
becomes an ipykernel. The joiner answers the kernel's pid (as the sandbox numbers it), then its exit
code, and ends. The kernel can see neither the zygote nor the joiner (both are outside its PID
namespace), nor any other student's sandbox.
"""

import ctypes
import fcntl
import json
import os
import resource
import select
import signal
import socket
import sys

from whole_transformer.course.sandbox.limits import (  # sandbox: inlined
    LIMITS,
    WARM_MODULES_VAR,
    env_limits,
    env_warm_modules,
    no_core_dumps,
    run_kernel,
)

#: the namespaces a sandbox has of its own, besides its user namespace (``--unshare-all``)
CLONE = {"mnt": 0x20000, "pid": 0x20000000, "net": 0x40000000, "ipc": 0x8000000, "uts": 0x4000000}
OPTIONAL = {"cgroup": 0x2000000}  # bwrap's --unshare-cgroup-try: joined when it has one
CLONE_NEWUSER = 0x10000000
NS_GET_PARENT = 0xB702  # ioctl: the parent of a user namespace
PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 4, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
FORBIDDEN = "whole_transformer.course"

libc = ctypes.CDLL(None, use_errno=True)


class ZygoteError(RuntimeError):
    pass


class NoCourse:
    """A meta path finder that makes every module of the grading side fail to import here."""

    def find_spec(self, name, path=None, target=None):
        if name == FORBIDDEN or name.startswith(FORBIDDEN + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def warm_up(modules: list[str]) -> None:
    sys.meta_path.insert(0, NoCourse())
    sys.argv = ["ipykernel_launcher"]
    from ipykernel import kernelapp  # noqa: F401  (imported once, for every kernel forked)

    for name in modules:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - the kernel that imports it meets the same error itself
            pass
    leaked = sorted(m for m in sys.modules if m == FORBIDDEN or m.startswith(FORBIDDEN + "."))
    if leaked:
        raise ZygoteError(f"the zygote imported the grading side ({', '.join(leaked)}); it must not")


def check(ok: bool, what: str) -> None:
    if not ok:
        raise ZygoteError(f"{what}: {os.strerror(ctypes.get_errno())}")


def ns_inode(path: str) -> int:
    return os.stat(path).st_ino


def join(target: int, pidfd: int) -> dict[str, int]:
    """Enter every namespace of process ``target`` (``pidfd``: a pidfd of it) and its root folder; return
    the namespaces' inodes.

    User namespaces are entered from the outermost one between ours and the target's down to the
    target's own; each other namespace as soon as the user namespace we are in owns it (as root, bwrap
    makes some in ours; otherwise, in the user namespace it made first)."""
    base = f"/proc/{target}"
    root = os.open(f"{base}/root", os.O_RDONLY | os.O_DIRECTORY)
    pending, want = {}, {}
    for name, flag in {**CLONE, **OPTIONAL}.items():
        fd = os.open(f"{base}/ns/{name}", os.O_RDONLY)
        want[name] = os.fstat(fd).st_ino
        if want[name] == ns_inode(f"/proc/self/ns/{name}"):
            os.close(fd)
            if name in CLONE:
                raise ZygoteError(f"process {target} shares this process's {name} namespace: it is no sandbox")
            continue
        pending[name] = (fd, flag)
    chain, fd = [], os.open(f"{base}/ns/user", os.O_RDONLY)
    want["user"], own_user = os.fstat(fd).st_ino, ns_inode("/proc/self/ns/user")
    if want["user"] == own_user:
        raise ZygoteError(f"process {target} shares this process's user namespace: it is no sandbox")
    if select.select([pidfd], [], [], 0)[0]:  # it ended: the pid may be another's now, whose files we opened
        raise ZygoteError(f"the sandbox's process {target} has ended")
    while os.fstat(fd).st_ino != own_user:
        chain.append(fd)
        fd = fcntl.ioctl(fd, NS_GET_PARENT)  # EPERM if it is not below ours
    for user in [None, *reversed(chain)]:
        if user is not None:
            check(libc.setns(user, CLONE_NEWUSER) == 0, "entering the sandbox's user namespace")
        for name, (nsfd, flag) in list(pending.items()):
            if libc.setns(nsfd, flag) == 0:
                del pending[name]
    if pending:
        raise ZygoteError(f"could not enter the sandbox's {', '.join(pending)} namespace(s)")
    os.fchdir(root)
    os.chroot(".")
    os.chdir("/")
    return want


def drop_privileges() -> None:
    """No capability in any set, none to gain again (bounding set, ambient set, no new privileges)."""
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            check(False, f"dropping capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    check(libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()) == 0, "dropping capabilities")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "setting no_new_privs")


def verify(want: dict[str, int]) -> None:
    """In the kernel, before any student code: in the sandbox's namespaces, and with no capability."""
    for name, inode in want.items():
        if ns_inode(f"/proc/self/ns/{name}") != inode:
            raise ZygoteError(f"the kernel is not in the sandbox's {name} namespace")
    status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        if int(status[key].strip(), 16) != 0:
            raise ZygoteError(f"the kernel kept capabilities ({key} {status[key].strip()})")
    if status["NoNewPrivs"].strip() != "1":
        raise ZygoteError("the kernel could gain privileges")


def kernel(req: dict, want: dict[str, int], err_fd: int, pid_w: int) -> None:
    """In the forked kernel (inside the sandbox): drop everything, then ipykernel; never returns."""

    def prepare() -> None:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        try:
            os.setgroups([])  # as bwrap's own sandboxed process when it may; a user namespace may forbid it
        except OSError:
            pass
        drop_privileges()
        verify(want)
        os.write(pid_w, str(os.getpid()).encode())
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(err_fd, 1)  # what a kernel prints on its own stdout goes where its stderr goes (the grading log)
        os.dup2(err_fd, 2)
        os.closerange(3, min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 1 << 20))
        os.environ.clear()
        os.environ.update(req["env"])
        env_limits()
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the kernel itself is an ordinary process
        os.chdir(req["cwd"])

    run_kernel(prepare, req["connection"])


def read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 2)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 16)
        if not more:
            raise ZygoteError("the request ended early")
        data += more
    return json.loads(data), fds


def joiner(conn: socket.socket, startup_env: dict[str, str]) -> None:
    """In the forked joiner: one kernel into one sandbox; answers its pid, then its exit code."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    try:
        req, fds = read_request(conn)
        differs = sorted(
            k
            for k in set(req["env"]) | set(startup_env)
            if not k.startswith(LIMITS) and req["env"].get(k) != startup_env.get(k)
        )
        if differs or len(fds) != 2:
            raise ZygoteError(
                f"this zygote's kernels get another environment ({', '.join(differs)})"
                if differs
                else "a request must pass two file descriptors (stderr, the sandbox's pidfd)"
            )
        want = join(int(req["pid"]), fds[1])
        pid_r, pid_w = os.pipe()
        child = os.fork()
        if child == 0:
            conn.close()
            os.close(pid_r)
            kernel(req, want, fds[0], pid_w)
        os.close(pid_w)
        for fd in fds:
            os.close(fd)
        drop_privileges()
        nspid = os.read(pid_r, 32)
        if not nspid:
            _, status = os.waitpid(child, 0)
            raise ZygoteError(f"the kernel ended before it started (exit code {os.waitstatus_to_exitcode(status)})")
        conn.sendall(json.dumps({"pid": int(nspid)}).encode() + b"\n")
        _, status = os.waitpid(child, 0)
        conn.sendall(json.dumps({"code": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    except BaseException as e:  # noqa: BLE001 - the grading run reads why and starts the kernel another way
        try:
            conn.sendall(json.dumps({"error": f"{type(e).__name__}: {e}"}).encode() + b"\n")
        except OSError:
            pass
    os._exit(0)


def main() -> None:
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # nothing may trace this process or read its memory
    no_core_dumps()
    startup_env, path = dict(os.environ), sys.argv[1]
    warm_up(env_warm_modules())
    os.chdir("/")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # joiners are reaped by the system
    print(json.dumps({"ready": True}), flush=True)
    while True:
        ready = select.select([server, sys.stdin], [], [])[0]
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 4096):
            return  # the service closed our stdin: it stopped
        if server in ready:
            conn, _ = server.accept()
            if os.fork() == 0:
                server.close()
                joiner(conn, {k: v for k, v in startup_env.items() if k != WARM_MODULES_VAR})
            conn.close()


if __name__ == "__main__":
    main()
