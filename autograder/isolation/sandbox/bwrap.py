"""Bubblewrap: is it usable here, and the bind mounts every sandbox starts from."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from .leftovers import scratch_prefix

class SandboxUnavailable(RuntimeError):
    """No working sandbox on this machine (and --unsafe was not given)."""



# --------------------------------------------------------------------------- availability
_AVAILABLE: dict[str, str | None] = {}


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def sandbox_problem() -> str | None:
    """None when bubblewrap works here; else why not (cached)."""
    if "bwrap" in _AVAILABLE:
        return _AVAILABLE["bwrap"]
    bwrap = bwrap_path()
    if bwrap is None:
        problem = "bubblewrap (bwrap) is not installed: run `make sandbox` or `apt-get install bubblewrap`"
    else:
        with tempfile.TemporaryDirectory(prefix=scratch_prefix("probe")) as tmp:
            cmd = [bwrap, *base_args(), "--", sys.executable, "-I", "-c", "print('ok')"]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp)
                ok = done.returncode == 0 and done.stdout.strip() == "ok"
                problem = None if ok else f"bubblewrap cannot create a sandbox here: {done.stderr.strip()[:300]}"
            except (OSError, subprocess.TimeoutExpired) as exc:
                problem = f"bubblewrap cannot create a sandbox here: {exc}"
    _AVAILABLE["bwrap"] = problem
    return problem


def python_roots() -> list[str]:
    """Read-only directories the kernel's Python needs: installation and environment, and the
    site-packages folders a ``.pth`` file of the environment adds (a venv layered on a shared one)."""
    roots = []
    for p in (sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable))):
        real = os.path.realpath(p)
        if real.endswith("/bin"):
            real = os.path.dirname(real)
        roots.append(p)
        roots.append(real)
    # an environment may extend another's through a .pth file in its site-packages (a venv
    # layered on a shared one): that environment's site-packages is needed too
    roots += [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
    out = []
    for r in roots:
        if r and os.path.isdir(r) and r not in out and not any(r == o or r.startswith(o + "/") for o in ("/usr",)):
            out.append(r)
    return out


def base_args() -> list[str]:
    args = []
    for d in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/alternatives", "/etc/fonts"):
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    for root in python_roots():
        args += ["--ro-bind", root, root]
    args += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--hostname", "sandbox",
        "--clearenv",
    ]
    return args
