"""A class of submissions for chapter 1: honest students, and students who cheat or misbehave.

Every cheat is built on a *baseline*: the same notebook with the same wrong
answer and no cheat. A cheat that is contained scores no more than its
baseline. Cheats that try to get something from outside (files, network,
memory, environment) return the *right* answer when they succeed, so a leak
shows up as points.

``build_class(course, env)`` writes ``submitted/<student>/<assignment>/`` for
every student and returns the table of who is who. ``env`` holds what a cheat
needs to know about the grader's machine (paths, a port, a marker string).
"""
from __future__ import annotations

import copy
import json
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.notebooks.coursedir import nbgrader_meta, release_path
from tests.support.studentwork import mutant_submission, mutants, perfect_submission

ASSIGNMENT = "01-text-representations"

CORRECT_ONE_HOT = '''
def _reference_one_hot(ids, vocab_size):
    if ids.numel() > 0 and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError("id out of range")
    out = torch.zeros(*ids.shape, vocab_size, dtype=torch.float32, device=ids.device)
    out.scatter_(-1, ids.unsqueeze(-1), 1.0)
    return out
'''

WRONG_ONE_HOT = '''
def one_hot(ids, vocab_size):
    return torch.zeros(*ids.shape, vocab_size, device=ids.device)  # wrong: no ones, no validation
'''


def _rewarded(attack: str) -> str:
    """one_hot that returns the right answer only if ``attack`` (code setting `won`) succeeded."""
    body = textwrap.indent(textwrap.dedent(attack).strip("\n"), "        ")
    return CORRECT_ONE_HOT + f'''
def one_hot(ids, vocab_size):
    won = False
    try:
{body}
    except Exception:
        pass
    if won:
        return _reference_one_hot(ids, vocab_size)
    return torch.zeros(*ids.shape, vocab_size, device=ids.device)
'''


@dataclass
class Student:
    name: str
    kind: str  # honest, baseline, cheat, invalid
    threat: str = ""
    baseline: str | None = None
    notebook: object = None  # NotebookNode, or bytes for raw files, or ("symlink", target)
    extra: dict = field(default_factory=dict)  # relative path -> text


def _set_answer(nb, grade_id: str, source: str):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == grade_id:
            cell.source = source
            return nb
    raise KeyError(grade_id)


def _add_cell(nb, source: str, after: str | None = None, metadata: dict | None = None, cell_type: str = "code"):
    nb = copy.deepcopy(nb)
    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    cell = make(source, metadata=metadata or {})
    idx = len(nb.cells)
    if after:
        idx = next(i + 1 for i, c in enumerate(nb.cells) if nbgrader_meta(c).get("grade_id") == after)
    nb.cells.insert(idx, cell)
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i}"
    return nb


def _edit_cells(nb, fn):
    nb = copy.deepcopy(nb)
    fn(nb)
    for i, c in enumerate(nb.cells):
        c["id"] = f"c{i}"
    return nb


def build_class(root: Path, env: dict) -> dict[str, Student]:
    """All students; ``env``: course, marker, port, unix_socket, secret, repo."""
    a = ASSIGNMENT
    perfect = perfect_submission(a, root)
    released = nbformat.read(str(release_path(a, root)), as_version=4)
    wrong = _set_answer(perfect, "one_hot", WRONG_ONE_HOT)
    students: list[Student] = []

    def honest(name, nb, extra=None):
        students.append(Student(name, "honest", notebook=nb, extra=extra or {}))

    def cheat(name, threat, source=None, nb=None, baseline="baseline-wrong", extra=None):
        if nb is None:
            nb = _set_answer(perfect, "one_hot", source)
        students.append(Student(name, "cheat", threat, baseline, nb, extra or {}))

    def invalid(name, threat, raw):
        students.append(Student(name, "invalid", threat, notebook=raw))

    # ---------------------------------------------------------------- honest students
    honest("honest-perfect", perfect)
    honest("honest-untouched", released)
    for stem in ("one_hot__no_validation", "cbow_examples__wraps_around", "window_features__wrong_order"):
        m = next(p for p in mutants(a) if p.stem == stem)
        honest(f"honest-{stem.replace('__', '-').replace('_', '-')}", mutant_submission(a, root, m))
    extras = _add_cell(perfect, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('scratch')\nplt.show()\nprint('scratch work')", after="one_hot")
    extras = _add_cell(extras, "from helpers import shout\nprint(shout('ok'))\nprint(open('data.txt').read())\nimport sys\nprint('a warning-free stderr line', file=sys.stderr)", after="build_vocab")
    honest("honest-extras", extras, {"helpers.py": "def shout(s):\n    return s.upper()\n", "data.txt": "some data\n"})

    # the wrong answer every one_hot cheat is compared with
    students.append(Student("baseline-wrong", "baseline", notebook=wrong))
    forbidden_direct = _set_answer(perfect, "one_hot", CORRECT_ONE_HOT + "\ndef one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    return F.one_hot(ids, vocab_size).float()\n")
    students.append(Student("baseline-forbidden", "baseline", notebook=forbidden_direct))

    # ---------------------------------------------------------------- comparisons patched / lying answers
    cheat("cheat-patch-comparisons", "comparisons patched by the student", WRONG_ONE_HOT + textwrap.dedent('''
        import math, numpy
        class _Yes(list):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
        torch.equal = lambda *a, **k: True
        torch.allclose = lambda *a, **k: True
        torch.testing.assert_close = lambda *a, **k: None
        torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)
        torch.Tensor.tolist = lambda self: _Yes()
        numpy.allclose = lambda *a, **k: True
        numpy.array_equal = lambda *a, **k: True
        math.isclose = lambda *a, **k: True
    '''))
    cheat("cheat-lying-tensor", "a tensor subclass that says yes to every comparison", textwrap.dedent('''
        class _Yes(list):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
        class Liar(torch.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                name = getattr(func, "__name__", "")
                if name in ("equal", "allclose", "__eq__", "eq", "isclose", "all", "any"):
                    return True
                if name == "tolist":
                    return _Yes()
                return super().__torch_function__(func, types, args, kwargs or {})
            def __eq__(self, other): return True
        def one_hot(ids, vocab_size):
            return torch.zeros(*ids.shape, vocab_size, device=ids.device).as_subclass(Liar)
    '''))
    cheat("cheat-always-equal", "an object whose __eq__ is always true", textwrap.dedent('''
        class Anything:
            shape = property(lambda self: self)
            dtype = property(lambda self: self)
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __hash__(self): return 0
            def tolist(self): return self
            def __getitem__(self, key): return self
            def __len__(self): return 1
            def __float__(self): return 1.0
        def one_hot(ids, vocab_size):
            return Anything()
    '''))
    cheat("cheat-torch-function-mode", "a global __torch_function__ mode", WRONG_ONE_HOT + textwrap.dedent('''
        from torch.overrides import TorchFunctionMode
        class Yes(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                if getattr(func, "__name__", "") in ("equal", "allclose"):
                    return True
                return func(*args, **(kwargs or {}))
        Yes().__enter__()
    '''))

    # ---------------------------------------------------------------- the test machinery subverted
    cheat("cheat-exception-hooks", "exception hooks and traceback display", WRONG_ONE_HOT + textwrap.dedent('''
        import sys
        sys.excepthook = lambda *a: None
        ip = get_ipython()
        ip.showtraceback = lambda *a, **k: None
        ip._showtraceback = lambda *a, **k: None
        ip.set_custom_exc((BaseException,), lambda *a, **k: None)
    '''))
    cheat("cheat-stdout-stderr", "stdout and stderr replaced", WRONG_ONE_HOT + textwrap.dedent('''
        import io, os, sys
        print("All tests passed!")
        sys.stdout = io.StringIO()
        sys.stderr = io.StringIO()
        _null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(_null, 1)
        os.dup2(_null, 2)
    '''))
    cheat("cheat-forge-protocol", "forged frames on the kernel's pipes", WRONG_ONE_HOT + textwrap.dedent('''
        import json, os, struct
        for _id in range(1, 40):
            _msg = json.dumps({"id": _id, "status": "ok", "error": None, "value": 1, "outputs": [], "dropped": 0,
                               "forbidden": [], "mutated": [], "defined": [True] * 5}).encode()
            for _fd in range(3, 40):
                try:
                    os.write(_fd, struct.pack(">Q", len(_msg)) + _msg)
                except OSError:
                    pass
    '''))

    # ---------------------------------------------------------------- files
    course = env["course"]
    targets = [
        f"{course}/solutions/{a}/{a}.ipynb",
        f"{env['repo']}/solutions/{a}/{a}.ipynb",
        f"{course}/submitted/honest-perfect/{a}/{a}.ipynb",
        f"{course}/gradebook.db",
        "/etc/shadow",
        "/root/.bash_history",
    ]
    cheat("cheat-read-files", "reading files outside the submission", _rewarded(f'''
        import os, re, json
        for path in {targets!r} + ["../../solutions/{a}/{a}.ipynb", "/opt/submission/../../solutions"]:
            try:
                text = open(path, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            won = True
    '''))
    cheat("cheat-write-files", "writing outside the scratch folder", _rewarded(f'''
        import os, sqlite3
        for path in ["{course}/pwned-{env['marker']}.txt", "/tmp/pwned-{env['marker']}.txt",
                     "{env['venv_site']}/sitecustomize.py", "/opt/submission/pwned.txt",
                     "/usr/pwned-{env['marker']}.txt", "/home/pwned-{env['marker']}.txt"]:
            try:
                with open(path, "w") as f:
                    f.write("import os  # {env['marker']}\\n")
                won = won or not path.startswith("/tmp")
            except OSError:
                pass
        try:
            db = sqlite3.connect("{course}/gradebook.db")
            db.execute("update grade set auto_score = 100")
            db.commit()
            won = True
        except Exception:
            pass
    '''))
    cheat("cheat-environment", "reading the grader's environment and processes", _rewarded(f'''
        import os
        if "{env['secret']}" in str(dict(os.environ)):
            won = True
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if b"{env['secret']}" in open(f"/proc/{{pid}}/environ", "rb").read():
                        won = True
                except OSError:
                    pass
    '''))

    # ---------------------------------------------------------------- time
    cheat("cheat-infinite-loop", "an infinite loop", "def one_hot(ids, vocab_size):\n    while True:\n        pass\n")
    cheat("cheat-ignore-interrupts", "an infinite loop that ignores interrupts", textwrap.dedent('''
        import signal
        def one_hot(ids, vocab_size):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
    '''))
    cheat("cheat-sleep", "sleeping forever", "import time\ndef one_hot(ids, vocab_size):\n    time.sleep(10**7)\n")
    cheat("cheat-exit", "the kernel exiting", "import os\ndef one_hot(ids, vocab_size):\n    os._exit(0)\n")

    # ---------------------------------------------------------------- memory and processes
    cheat("cheat-memory", "memory exhaustion", _rewarded('''
        blocks = []
        for _ in range(12):  # 3 GiB, 256 MiB at a time, every page touched
            blocks.append(torch.ones(64 * 1024 * 1024))
        won = True
    '''))
    cheat("cheat-fork-storm", "a fork storm", textwrap.dedent(f'''
        import os, time
        def one_hot(ids, vocab_size):
            for _ in range(5000):
                try:
                    if os.fork() == 0:
                        try:
                            os.fork()
                        except OSError:
                            pass
                        time.sleep(600)  # {env['marker']}-fork
                        os._exit(0)
                except OSError:
                    break
            return torch.zeros(*ids.shape, vocab_size, device=ids.device)
    '''))
    cheat("cheat-outlive", "processes that outlive grading", WRONG_ONE_HOT + textwrap.dedent(f'''
        import os, subprocess, sys, time
        subprocess.Popen(["sleep", "86421"], start_new_session=True)
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                sys.argv = ["{env['marker']}-daemon"]
                for _ in range(600):
                    try:
                        open("/tmp/daemon-{env['marker']}", "a").write("alive\\n")
                    except OSError:
                        pass
                    time.sleep(1)
            os._exit(0)
    '''))

    # ---------------------------------------------------------------- network
    cheat("cheat-network", "network access, loopback included", _rewarded(f'''
        import socket, urllib.request
        for family, addr in [(socket.AF_INET, ("127.0.0.1", {env['port']})), (socket.AF_INET6, ("::1", {env['port']}))]:
            try:
                s = socket.socket(family, socket.SOCK_STREAM)
                s.settimeout(3)
                s.connect(addr)
                s.sendall(b"hello from a sandbox")
                won = True
            except OSError:
                pass
        try:
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.sendto(b"udp", ("127.0.0.1", {env['port']}))
            won = True
        except OSError:
            pass
        try:
            urllib.request.urlopen("http://127.0.0.1:{env['port']}/", timeout=3)
            won = True
        except Exception:
            pass
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("{env['unix_socket']}")
            won = True
        except OSError:
            pass
    '''))

    # ---------------------------------------------------------------- output floods
    flood = _add_cell(wrong, textwrap.dedent('''
        import os, sys, base64
        for _ in range(200):
            print("x" * 100_000)
        for _ in range(200):
            os.write(1, b"y" * 100_000)
        from IPython.display import display, Image
        png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
        for _ in range(300):
            display(Image(png))
        display({"text/html": "<script>alert(1)</script>"}, raw=True)
    '''), after="one_hot")
    cheat("cheat-output-flood", "output floods", nb=flood)

    # ---------------------------------------------------------------- notebook tampering
    test_ids = ("test_one_hot_values", "test_one_hot_errors")

    def delete_tests(nb):
        nb.cells = [c for c in nb.cells if nbgrader_meta(c).get("grade_id") not in test_ids]

    def edit_tests(nb):
        for c in nb.cells:
            if nbgrader_meta(c).get("grade_id") in test_ids:
                c.source = "pass"

    def metadata(nb):
        for c in nb.cells:
            meta = nbgrader_meta(c)
            if meta.get("grade_id") == "test_one_hot_values":
                meta["points"] = 100
            if meta.get("grade_id") == "test_one_hot_errors":
                meta["grade"] = False
                meta["locked"] = False
                meta["solution"] = True
                c.source = "pass"
        nb.cells.append(nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {"grade": True, "grade_id": "bonus", "points": 50, "locked": True, "solution": False, "schema_version": 3}}))

    def to_markdown(nb):
        for i, c in enumerate(nb.cells):
            if nbgrader_meta(c).get("grade_id") in test_ids:
                nb.cells[i] = nbformat.v4.new_markdown_cell(c.source, metadata=c.metadata)

    def duplicate(nb):
        out = []
        for c in nb.cells:
            if nbgrader_meta(c).get("grade_id") in test_ids:
                fake = copy.deepcopy(c)
                fake.source = "pass"
                out.append(fake)  # the fake copy comes first
            out.append(c)
        nb.cells = out

    def kernelspec(nb):
        nb.metadata["kernelspec"] = {"name": "evil", "display_name": "evil", "language": "python"}
        nb.metadata["language_info"] = {"name": "bash"}

    def delete_answer(nb):
        nb.cells = [c for c in nb.cells if nbgrader_meta(c).get("grade_id") != "one_hot"]

    for name, fn in [("delete-tests", delete_tests), ("edit-tests", edit_tests), ("metadata", metadata), ("tests-to-markdown", to_markdown),
                     ("duplicate-tests", duplicate), ("kernelspec", kernelspec), ("delete-answer", delete_answer)]:
        cheat(f"cheat-{name}", "test cells or nbgrader metadata tampered with", nb=_edit_cells(wrong, fn))

    xss = _set_answer(wrong, "written_window", '<script>alert("xss")</script><img src=x onerror="alert(2)"> a < b')
    xss = _add_cell(xss, '<iframe src="javascript:alert(3)"></iframe>', cell_type="markdown")
    cheat("cheat-html", "HTML and scripts in markdown for formgrader and feedback pages", nb=xss)
    weird = _set_answer(wrong, "one_hot", WRONG_ONE_HOT + textwrap.dedent('''
        import sys
        print("\\ud800 lone surrogate \\x1b[2J\\x1b[H", "\\x00")
        sys.stderr.write("\\udfff")
        class Trick(Exception):
            pass
        Trick.__name__ = "Trick\\n\\x1b[32mhonest-perfect   12/12 ok\\x1b[0m"
        def one_hot(ids, vocab_size):
            raise Trick("\\nhonest-perfect   12/12  ok\\r\\x1b[31m\\ud83d")
    '''))
    text = nbformat.writes(_add_cell(weird, "surrogate: SURROGATE", cell_type="markdown")).replace("SURROGATE", "\\ud800")
    cheat("cheat-weird-text", "control characters and broken Unicode in outputs and messages", nb=text.encode())

    shadow_run_check = "def run_check(*args, **kwargs):\n    return None\n"
    cheat("cheat-shadow-modules", "files in the submission that shadow modules", nb=wrong, extra={
        "autograder/__init__.py": "",
        "autograder/checks/__init__.py": shadow_run_check,
        "autograder/checking.py": shadow_run_check,
        "course/__init__.py": "",
        "course/checks/__init__.py": shadow_run_check,
        "sitecustomize.py": "import torch\ntorch.equal = lambda *a, **k: True\n",
        "usercustomize.py": "import torch\ntorch.allclose = lambda *a, **k: True\n",
        "IPython.py": "raise SystemExit\n",
    })

    # ---------------------------------------------------------------- invalid notebooks
    invalid("invalid-not-json", "invalid notebook files", b"{this is not json")
    invalid("invalid-not-a-notebook", "invalid notebook files", json.dumps({"hello": "world"}).encode())
    invalid("invalid-nbformat3", "invalid notebook files", json.dumps({"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}).encode())
    invalid("invalid-binary", "invalid notebook files", os.urandom(4096))
    invalid("invalid-huge", "invalid notebook files", b'{"cells": [' + b" " * (21 * 1024 * 1024) + b"]}")
    invalid("invalid-symlink", "invalid notebook files", ("symlink", f"{course}/solutions/{a}/{a}.ipynb"))
    invalid("invalid-symlink-folder", "invalid notebook files", ("symlink-folder", f"{course}/solutions/{a}"))
    bad = json.loads(nbformat.writes(wrong))
    for c in bad["cells"]:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "test_one_hot_values":
            c["metadata"]["nbgrader"] = "not a dict"
    invalid("invalid-metadata", "invalid notebook files", json.dumps(bad).encode())

    # ---------------------------------------------------------------- forbidden library function
    def forbidden(name, source, extra=None):
        cheat(name, "calls to the exercise's forbidden library function", CORRECT_ONE_HOT + source, baseline="baseline-forbidden", extra=extra)

    forbidden("forbidden-alias", "from torch.nn.functional import one_hot as _oh\ndef one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    return _oh(ids, vocab_size).float()\n")
    forbidden("forbidden-getattr", "_oh = getattr(F, 'one_' + 'hot')\ndef one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    return _oh(ids, vocab_size).float()\n")
    forbidden("forbidden-aten", "def one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    return torch.ops.aten.one_hot(ids, vocab_size).float()\n")
    forbidden("forbidden-list-alias", "_mods = [F]\ndef one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    return _mods[0].one_hot(ids, vocab_size).float()\n")
    forbidden("forbidden-helper-file", "from onehot_helper import encode\ndef one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    return encode(ids, vocab_size)\n",
              extra={"onehot_helper.py": "import torch.nn.functional as F\n\ndef encode(ids, n):\n    return F.one_hot(ids, n).float()\n"})
    forbidden("forbidden-untraced", "_fns = [F]\ndef one_hot(ids, vocab_size):\n    _reference_one_hot(ids, vocab_size)\n    import sys\n    sys.setprofile(None)\n    return _fns[0].one_hot(ids, vocab_size).float()\n")
    return {s.name: s for s in students}


def write_class(course: Path, students: dict[str, Student]) -> None:
    for s in students.values():
        folder = course / "submitted" / s.name / ASSIGNMENT
        if isinstance(s.notebook, tuple) and s.notebook[0] == "symlink-folder":
            folder.parent.mkdir(parents=True)
            folder.symlink_to(s.notebook[1], target_is_directory=True)
            continue
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-01-01 12:00:00.000000 UTC")
        path = folder / f"{ASSIGNMENT}.ipynb"
        if isinstance(s.notebook, tuple) and s.notebook[0] == "symlink":
            path.symlink_to(s.notebook[1])
        elif isinstance(s.notebook, bytes):
            path.write_bytes(s.notebook)
        else:
            nbformat.write(s.notebook, str(path))
        for rel, text in s.extra.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
