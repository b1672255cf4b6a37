"""Execute a (sanitised) student notebook in a sandboxed kernel and decide its test cells.

A test cell of the instructor's notebook has two parts. The visible asserts run
in the student's kernel, as in plain nbgrader. The hidden part is only ever a
list of ``run_check("NN.name.property", globals())`` lines: those checks run
here, in the grader (``autograder.pipeline.decide``), against the kernel. A test cell
passes when both parts pass, so an honest notebook scores what plain
``nbgrader autograde`` gives it.

The executed notebook carries the verdicts the way nbgrader reads them: a test
cell that failed, timed out, or never ran (the kernel died first) holds an
error output, and nothing a student prints can add one to a cell that passed or
remove one from a cell that failed. What the kernel sends back is cleaned and
capped before it is stored: only text and PNG/JPEG images are kept (no HTML or
scripts that formgrader would render in the instructor's browser).
"""
from __future__ import annotations

import ast
import base64
import binascii
import copy
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..checking import CheckFailure, get_check
from ..isolation import KernelError, KernelTimeout, Limits, make_kernel
from .coursedir import nbgrader_meta
from .decide import Session, StudentSource, importable_modules, run_remote_check

_HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS[^\n]*(\n|$)", re.S | re.M)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
KEEP_MIME = ("text/plain", "image/png", "image/jpeg")
# where a hidden test cell may import ``run_check`` from
HIDDEN_TEST_MODULES = ("course.checks", "autograder.checking")


class GraderError(RuntimeError):
    """The instructor's material cannot be graded this way (a bug on our side, not the student's)."""


def split_test_cell(source: str) -> tuple[str, list[str]]:
    """(visible part, hidden check names) of an instructor test cell.

    The hidden part may only import ``run_check`` and call it with a literal
    check name and ``globals()``: anything else could only run inside the
    student's process, where it would be the student's to decide.
    """
    match = _HIDDEN.search(source)
    if not match:
        return source, []
    visible = (source[: match.start()] + source[match.end() :]).strip("\n")
    names = []
    try:
        tree = ast.parse(match.group(1))
    except SyntaxError as exc:
        raise GraderError(f"hidden tests do not parse: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in HIDDEN_TEST_MODULES and [a.name for a in node.names] == ["run_check"]:
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "run_check"
            and len(node.value.args) == 2
            and isinstance(node.value.args[0], ast.Constant)
            and isinstance(node.value.args[0].value, str)
            and isinstance(node.value.args[1], ast.Call)
            and getattr(node.value.args[1].func, "id", None) == "globals"
        ):
            names.append(node.value.args[0].value)
            continue
        raise GraderError(f"hidden tests may only call run_check(name, globals()); found: {ast.unparse(node)[:120]}")
    return visible, names


def is_test_cell(cell) -> bool:
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_protected(cell) -> bool:
    meta = nbgrader_meta(cell)
    return bool(meta.get("locked")) or is_test_cell(cell)


@dataclass
class OutputCaps:
    per_cell: int = 100 * 1024  # characters of text kept per cell
    per_notebook: int = 2 * 1024 * 1024  # characters of text and images kept per notebook
    image: int = 2 * 1024 * 1024  # one image, base64 characters
    items_per_cell: int = 50


@dataclass
class CellVerdict:
    grade_id: str
    passed: bool
    reason: str = ""


@dataclass
class RunResult:
    notebook: nbformat.NotebookNode
    verdicts: dict[str, CellVerdict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problem: str = ""  # the whole run failed early (kernel did not start, notebook timeout...)
    problem_kind: str = ""  # timeout, memory, crash, protocol, limit
    seconds: float = 0.0


class NotebookRunner:
    """Runs one notebook: visible code in the sandboxed kernel, hidden checks here."""

    def __init__(self, limits: Limits | None = None, caps: OutputCaps | None = None, unsafe: bool = False, device: str = "cpu", warm: bool = True):
        self.warm = warm  # a kernel forked by the warm zygote when the machine allows it (warmpool)
        self.limits = limits or Limits()
        self.caps = caps or OutputCaps()
        self.unsafe = unsafe
        self.device = device

    def run(self, nb, submission_dir: Path | None, extra_modules: dict[str, str] | None = None, label: str = "") -> RunResult:
        nb = copy.deepcopy(nb)
        start = time.monotonic()
        result = RunResult(nb)
        plan = []
        forbidden: set[str] = set()
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = [], None
            if is_test_cell(cell):
                visible, names = split_test_cell(cell.source)
                for name in names:
                    forbidden |= set(get_check(name).forbidden)  # KeyError: an unknown check is our bug
                plan.append((cell, visible, names))
            else:
                plan.append((cell, cell.source, None))
        student_cells = [c.source for c in nb.cells if c.cell_type == "code" and not is_protected(c)]
        source = StudentSource(
            cells=student_cells,
            instructor_cells=[c.source for c in nb.cells if c.cell_type == "code" and is_protected(c)],
            modules=importable_modules(student_cells, extra_modules or {}),  # only what the notebook can import
        )
        budget = _Budget(self.caps)
        kernel = make_kernel(submission_dir, self.limits, unsafe=self.unsafe, device=self.device, forbidden=sorted(forbidden), label=label, warm=self.warm)
        stopped = ""
        try:
            try:
                kernel.start()
            except KernelError as exc:  # no student code has run yet: the grader's environment is at fault
                stopped = f"the kernel did not start: {exc.reason}"
                result.problem_kind = "startup"
            session = Session(kernel, source)
            # limits in the kernel's CPU time, scaled by the machine's slowness, with wall-clock caps
            # for a kernel that computes nothing (Limits): the same verdicts on a busy machine
            notebook_deadline = time.monotonic() + self.limits.wall(self.limits.notebook_cpu())
            notebook_cpu_deadline = kernel.cpu_seconds() + self.limits.notebook_cpu() if not stopped else 0.0
            count = 0
            for cell, code, checks in plan:
                gid = nbgrader_meta(cell).get("grade_id", "")
                if stopped:
                    if checks is not None:
                        self._fail(cell, "NotRun", f"did not run: {stopped}", budget)
                        result.verdicts[gid] = CellVerdict(gid, False, f"did not run: {stopped}")
                    continue
                count += 1
                cell.execution_count = count
                session.outputs = []
                session.deadline = min(time.monotonic() + self.limits.wall(self.limits.cell_cpu()), notebook_deadline)
                session.cpu_deadline = min(kernel.cpu_seconds() + self.limits.cell_cpu(), notebook_cpu_deadline)
                error = None
                try:
                    reply = session.request({"op": "run", "code": code, "interactive": checks is None})
                    if reply.get("status") == "interrupted":
                        raise KernelTimeout("timed out (interrupted)", alive=True)
                    if reply.get("status") != "ok":
                        error = _clean_error(reply.get("error"))
                    if checks and error is None:  # the visible asserts passed: now the hidden checks
                        for name in checks:
                            try:
                                run_remote_check(name, session)
                            except CheckFailure as exc:
                                msg = clean_text(str(exc)[:4000])
                                error = {"ename": "CheckFailure", "evalue": msg, "traceback": [f"CheckFailure: {msg}"]}
                                break
                            except KernelError:
                                raise
                            except Exception as exc:  # noqa: BLE001 - e.g. a check tripping over an odd answer
                                msg = clean_text(str(exc)[:2000])
                                error = {"ename": type(exc).__name__, "evalue": msg, "traceback": [f"{type(exc).__name__}: {msg}"]}
                                break
                except KernelTimeout as exc:
                    notebook_over = time.monotonic() >= notebook_deadline or (exc.alive and kernel.cpu_seconds() >= notebook_cpu_deadline)
                    what = "notebook" if notebook_over else "cell"
                    cpu = self.limits.notebook_cpu() if notebook_over else self.limits.cell_cpu()
                    msg = (f"the {what} used more than its {cpu:g} s of CPU time (or {self.limits.wall(cpu):g} s of wall-clock time)"
                           + ("" if exc.alive else " and ignored the interrupt; the kernel was stopped"))
                    error = {"ename": "CellTimeoutError", "evalue": msg, "traceback": [f"CellTimeoutError: {msg}"]}
                    if not exc.alive or what == "notebook":
                        stopped = msg
                        result.problem_kind = "timeout"
                        if exc.alive:
                            kernel._die(msg, "timeout")
                except KernelError as exc:
                    stopped = exc.reason
                    result.problem_kind = exc.kind
                    error = {"ename": "KernelDied", "evalue": exc.reason, "traceback": [f"KernelDied: {exc.reason}"]}
                outputs = list(session.outputs)
                cell.outputs = budget.clean(outputs, allow_result=checks is None)
                if error is not None:
                    cell.outputs.append(nbformat.v4.new_output("error", ename=error["ename"], evalue=error["evalue"], traceback=error["traceback"]))
                if checks is not None:
                    result.verdicts[gid] = CellVerdict(gid, error is None, "" if error is None else _reason(error))
        finally:
            kernel.stop()
        if stopped:
            result.problem = stopped
        result.notes.extend(budget.notes)
        result.seconds = time.monotonic() - start
        return result

    def _fail(self, cell, ename: str, evalue: str, budget) -> None:
        cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])]


def _reason(error: dict) -> str:
    value = _ANSI.sub("", error.get("evalue", "")).strip()
    return f"{error.get('ename')}: {value}" if value else error.get("ename", "error")


def clean_text(text: str) -> str:
    """Text from a kernel as storable UTF-8: lone surrogates and NULs replaced."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")


def _clean_error(error) -> dict:
    if not isinstance(error, dict):
        return {"ename": "Error", "evalue": "the cell failed", "traceback": []}
    ename = error.get("ename") if type(error.get("ename")) is str else "Error"
    evalue = error.get("evalue") if type(error.get("evalue")) is str else ""
    tb = error.get("traceback") if type(error.get("traceback")) is list else []
    tb = [clean_text(line[:2000]) for line in tb[:100] if type(line) is str]
    return {"ename": clean_text(ename[:200]) or "Error", "evalue": clean_text(evalue[:4000]), "traceback": tb}


class _Budget:
    """Cleans and caps what the kernel printed, per cell and per notebook."""

    def __init__(self, caps: OutputCaps):
        self.caps = caps
        self.used = 0
        self.notes: list[str] = []
        self.exhausted = False

    def clean(self, outputs: list, allow_result: bool) -> list:
        kept: list = []
        cell_text = 0
        for out in outputs:
            if not isinstance(out, dict) or len(kept) >= self.caps.items_per_cell:
                continue
            kind = out.get("output_type")
            if kind == "stream":
                name = out.get("name") if out.get("name") in ("stdout", "stderr") else "stdout"
                text = clean_text(out.get("text")) if type(out.get("text")) is str else ""
                room = min(self.caps.per_cell - cell_text, self.caps.per_notebook - self.used)
                if room <= 0:
                    self._note_exhausted()
                    continue
                if len(text) > room:
                    text = text[:room] + f"\n[... output truncated: more than {self.caps.per_cell} characters in this cell ...]\n"
                cell_text += len(text)
                self.used += len(text)
                if kept and kept[-1].output_type == "stream" and kept[-1].name == name:
                    kept[-1].text += text
                else:
                    kept.append(nbformat.v4.new_output("stream", name=name, text=text))
            elif kind in ("display_data", "execute_result"):
                if kind == "execute_result" and not allow_result:
                    continue  # a test cell's verdict never depends on a value the kernel shows
                data = out.get("data") if isinstance(out.get("data"), dict) else {}
                clean = {}
                for mime in KEEP_MIME:
                    value = data.get(mime)
                    if type(value) is not str:
                        continue
                    if mime.startswith("image/"):
                        if len(value) > self.caps.image or not _is_base64(value):
                            continue
                    else:
                        value = clean_text(value[:10000])
                    if self.used + len(value) > self.caps.per_notebook:
                        self._note_exhausted()
                        continue
                    self.used += len(value)
                    clean[mime] = value
                if not clean:
                    continue
                if kind == "execute_result":
                    kept.append(nbformat.v4.new_output("execute_result", data=clean, execution_count=None))
                else:
                    kept.append(nbformat.v4.new_output("display_data", data=clean))
        return kept

    def _note_exhausted(self) -> None:
        if not self.exhausted:
            self.exhausted = True
            self.notes.append(f"output over the limit ({self.caps.per_notebook} characters per notebook) was not kept")


def _is_base64(text: str) -> bool:
    try:
        base64.b64decode(text.replace("\n", ""), validate=True)
        return True
    except (binascii.Error, ValueError):
        return False
