"""JupyterLab's settings for a student's copy of the course: its terminal finds the course's tools.

``make lab`` copies this file into ``.venv/etc/jupyter/``, so it holds for the JupyterLab of this
``.venv`` alone. A terminal opened in that JupyterLab (File ▸ New ▸ Terminal) is the student's own
shell, started as usual (its profile and rc files read), and then ``.venv/bin`` put first on its PATH,
so that ``python -m whole_transformer.train`` and ``nbgrader validate ...`` work there as the guide
writes them, even when an rc file puts pyenv's or conda's python in front.
"""

import os
import shlex
import shutil
import sys

c = get_config()  # noqa: F821 - provided by traitlets when it loads this file

BIN = os.path.dirname(sys.executable)  # .venv/bin: JupyterLab runs on the .venv's Python
VENV = os.path.dirname(BIN)
SHELL = os.environ.get("SHELL") or shutil.which("bash") or shutil.which("sh") or "/bin/sh"
RC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "terminal")  # .venv/etc/jupyter/terminal
LAST = f'export PATH={shlex.quote(BIN)}:"$PATH" VIRTUAL_ENV={shlex.quote(VENV)}\n'
# what each shell reads, the student's own files first and the course's PATH last
FILES = {
    "bash": {
        "bashrc": "[ -r /etc/profile ] && . /etc/profile\n"
        'for f in ~/.bash_profile ~/.bash_login ~/.profile; do [ -r "$f" ] && { . "$f"; break; }; done\n'
        "[ -r ~/.bashrc ] && . ~/.bashrc\n" + LAST
    },
    "zsh": {
        ".zshenv": "[ -r ~/.zshenv ] && . ~/.zshenv\n",
        ".zprofile": "[ -r ~/.zprofile ] && . ~/.zprofile\n",
        ".zshrc": "ZDOTDIR=~\n[ -r ~/.zshrc ] && . ~/.zshrc\n" + LAST,
    },
}


def _command(shell: str) -> list[str]:
    name = os.path.basename(shell)
    if name in FILES:
        folder = os.path.join(RC, name)
        os.makedirs(folder, exist_ok=True)
        for file, text in FILES[name].items():
            with open(os.path.join(folder, file), "w") as out:
                out.write(text)
        if name == "bash":
            return [shell, "--rcfile", os.path.join(folder, "bashrc"), "-i"]
        return [shell, "-c", f"ZDOTDIR={shlex.quote(folder)} exec {shlex.quote(shell)} -l -i"]
    # another shell: a login shell, then .venv/bin first and the student's interactive shell in its place
    return [shell, "-l", "-c", LAST.strip() + f"; exec {shlex.quote(shell)} -i"]


c.ServerApp.terminado_settings = {"shell_command": _command(SHELL)}
