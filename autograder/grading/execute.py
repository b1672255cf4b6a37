"""Execute a (sanitised) student notebook in a sandboxed kernel and decide its test cells.

A test cell of the instructor's notebook has two parts (``cells.split_test_cell``). The
visible asserts run in the student's kernel, as in plain nbgrader. The hidden part is only
ever a list of ``run_check("NN.name.property", globals())`` lines: those checks run here, in
the grader (``autograder.grading.decide``), against the kernel. A test cell passes when both
parts pass, so an honest notebook scores what plain ``nbgrader autograde`` gives it.

The executed notebook carries the verdicts the way nbgrader reads them: a test cell that
failed, timed out, or never ran (the kernel died first) holds an error output, and nothing a
student prints can add one to a cell that passed or remove one from a cell that failed. Each
verdict also has a ``Kind`` (``outcome.py``), which the class's statuses are made from. What
the kernel sends back is cleaned and capped before it is stored (``OutputCaps``): only text
and PNG/JPEG images are kept (no HTML or scripts that formgrader would render in the
instructor's browser).

A test cell that fails because a name is not defined, where an earlier answer cell that would
have defined it did not compile, is blamed on that cell (``_Run.blame_uncompiled``): its error is
the answer cell's ``SyntaxError`` (or ``IndentationError``) with the cell and the line, which
every reader of results then shows (``check``, ``grade``'s table and reports, feedback, the
grading service), not the ``NameError`` the test cell met as a consequence.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from ..checking import CheckFailure, get_check, untested_note
from ..isolation import KernelError, KernelTimeout, Limits, make_kernel
from ..notebooks.cells import is_protected, is_test_cell, nbgrader_meta, split_test_cell
from .outcome import Kind, RunResult, Verdict
from .scan import StudentSource, importable_modules

if TYPE_CHECKING:  # decide imports torch: only a grader process that runs a notebook needs it
    from .decide import Session

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")
_UNDEFINED = re.compile(r"name '(\w+)' is not defined|`(\w+)` is not defined")  # a NameError; a hidden check's "not defined"
_DEFINES = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=\n]*)?=(?!=)", re.M)  # top-level names, read without compiling
_SYNTAX_WHERE = re.compile(r"\s*\(([^()]*), line (\d+)\)\s*$")
KEEP_MIME = ("text/plain", "image/png", "image/jpeg")
# what a KernelError's kind means for the cell and the run
_KERNEL_KINDS = {"timeout": Kind.TIMEOUT, "memory": Kind.MEMORY, "limit": Kind.LIMIT, "crash": Kind.CRASH,
                 "protocol": Kind.PROTOCOL, "startup": Kind.STARTUP, "grader": Kind.GRADER_ERROR}


@dataclass
class OutputCaps:
    """How much of what a kernel sends back is kept in the graded notebook."""

    per_cell: int = 100 * 1024  # characters of text kept per cell
    per_notebook: int = 2 * 1024 * 1024  # characters of text and images kept per notebook
    image: int = 2 * 1024 * 1024  # one image, base64 characters
    items_per_cell: int = 50
    message: int = 4000  # characters of an error's or a failed check's message
    unexpected_message: int = 2000  # ... of an error a check itself ran into
    traceback_lines: int = 100
    traceback_line: int = 2000
    error_name: int = 200
    result_text: int = 10_000  # characters of one text/plain display value


@dataclass
class _Step:
    cell: nbformat.NotebookNode
    code: str
    checks: list[str] | None  # the hidden checks of a test cell; None for any other code cell

    @property
    def grade_id(self) -> str:
        return nbgrader_meta(self.cell).get("grade_id", "")


def _plan(nb) -> tuple[list[_Step], set[str]]:
    """The code cells in order (test cells split into visible code and hidden checks), and every
    routine the hidden checks forbid (the kernel's recorder watches for them)."""
    plan, forbidden = [], set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        if is_test_cell(cell):
            visible, names = split_test_cell(cell.source)
            for name in names:
                forbidden |= set(get_check(name).forbidden)  # KeyError: an unknown check is our bug
            plan.append(_Step(cell, visible, names))
        else:
            plan.append(_Step(cell, cell.source, None))
    return plan, forbidden


def _student_source(nb, extra_modules: dict[str, str] | None) -> StudentSource:
    code = [c for c in nb.cells if c.cell_type == "code"]
    student_cells = [c.source for c in code if not is_protected(c)]
    return StudentSource(
        cells=student_cells,
        instructor_cells=[c.source for c in code if is_protected(c)],
        modules=importable_modules(student_cells, extra_modules or {}),  # only what the notebook can import
    )


class NotebookRunner:
    """Runs one notebook: visible code in the sandboxed kernel, hidden checks here."""

    def __init__(self, limits: Limits | None = None, caps: OutputCaps | None = None, unsafe: bool = False, device: str = "cpu", warm: bool = True):
        self.warm = warm  # a kernel forked by the warm zygote when the machine allows it (warmpool)
        self.limits = limits or Limits()
        self.caps = caps or OutputCaps()
        self.unsafe = unsafe
        self.device = device

    def run(self, nb, submission_dir: Path | None, extra_modules: dict[str, str] | None = None, label: str = "") -> RunResult:
        from ..checking import Context
        from .decide import Session

        start, probing = time.monotonic(), Context.probe_seconds
        nb = copy.deepcopy(nb)
        plan, forbidden = _plan(nb)
        source = _student_source(nb, extra_modules)
        kernel = make_kernel(submission_dir, self.limits, unsafe=self.unsafe, device=self.device, forbidden=sorted(forbidden), label=label, warm=self.warm)
        run = _Run(self, kernel, Session(kernel, source))
        try:
            with run.timed("sandbox start"):
                run.start()
            with one_thread():
                for number, step in enumerate(plan, 1):
                    run.cell(step, number)
        finally:
            with run.timed("sandbox stop"):
                kernel.stop()
        result = run.result
        result.stages["device probe"] = Context.probe_seconds - probing  # a part of "hidden checks"
        result.notebook = nbformat.writes(nb)
        result.notes.extend(run.budget.notes)
        result.untested = dict(run.untested)
        result.seconds = time.monotonic() - start
        return result


@contextlib.contextmanager
def one_thread():
    """The hidden checks compute on small tensors in this process with one torch thread, as a grading
    worker's process always does (``grader_process._worker_init``); ``check`` and an in-process
    ``selfcheck()`` get their own count back afterwards. (Issue 36: with two threads on a busy
    two-core machine, one float64 softmax of a 4 x 6 tensor waited 9-14 ms for the second thread,
    against 2 microseconds with one: 1.2 s of ch03's hidden checks.)"""
    import torch

    threads = torch.get_num_threads()
    if threads != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if threads != 1:
            torch.set_num_threads(threads)


class _Run:
    """One notebook's run: the kernel, its deadlines, and what has happened so far."""

    def __init__(self, runner: NotebookRunner, kernel, session: Session):
        self.limits, self.caps, self.kernel, self.session = runner.limits, runner.caps, kernel, session
        self.budget = _Budget(runner.caps)
        self.result = RunResult()
        self.untested: dict[str, str] = {}  # device clauses no GPU here could test (Context.untested)
        self.cell_untested: dict[str, str] = {}  # ... of the test cell that ran last
        self.stopped = ""  # why no further cell runs
        self.uncompiled: list[tuple[str, dict, set[str]]] = []  # answer cells that did not compile: (which, error, names they define)

    @contextlib.contextmanager
    def timed(self, stage: str):
        start = time.monotonic()
        try:
            yield
        finally:
            self.result.stages[stage] = self.result.stages.get(stage, 0.0) + time.monotonic() - start

    def start(self) -> None:
        try:
            self.kernel.start()
        except KernelError as exc:  # no student code has run yet: the grader's environment is at fault
            self._stop(f"the kernel did not start: {exc.reason}", Kind.STARTUP)
            return
        # limits in the kernel's CPU time, scaled by the machine's slowness, with wall-clock caps
        # for a kernel that computes nothing (Limits): the same verdicts on a busy machine
        self.notebook_deadline = time.monotonic() + self.limits.wall(self.limits.notebook_cpu())
        self.notebook_cpu_deadline = self.kernel.cpu_seconds() + self.limits.notebook_cpu()

    def _stop(self, reason: str, kind: Kind) -> None:
        self.stopped = reason
        self.result.problem, self.result.problem_kind = reason, kind

    def cell(self, step: _Step, number: int) -> None:
        if self.stopped:
            if step.checks is not None:
                reason = f"did not run: {self.stopped}"
                step.cell.outputs = [_error_output("NotRun", reason)]
                self.result.verdicts[step.grade_id] = Verdict(step.grade_id, Kind.NOT_RUN, reason)
            return
        step.cell.execution_count = number
        self.session.outputs = []
        self.session.deadline = min(time.monotonic() + self.limits.wall(self.limits.cell_cpu()), self.notebook_deadline)
        self.session.cpu_deadline = min(self.kernel.cpu_seconds() + self.limits.cell_cpu(), self.notebook_cpu_deadline)
        try:
            error, kind = self._execute(step)
        except KernelTimeout as exc:
            error, kind = self._timed_out(exc), Kind.TIMEOUT
        except KernelError as exc:
            self._stop(exc.reason, _KERNEL_KINDS.get(exc.kind, Kind.CRASH))
            error, kind = {"ename": "KernelDied", "evalue": exc.reason, "traceback": [f"KernelDied: {exc.reason}"]}, self.result.problem_kind
        step.cell.outputs = self.budget.clean(list(self.session.outputs), allow_result=step.checks is None)
        if error is not None and step.checks is None and error["ename"] in _COMPILE_ERRORS:
            which = f"cell {step.grade_id}" if step.grade_id else f"code cell {number}"
            self.uncompiled.append((which, error, {a or b for a, b in _DEFINES.findall(step.code)}))
        elif error is not None and step.checks is not None:
            blamed = self.blame_uncompiled(error, step.code)
            error, kind = (blamed, Kind.ERROR) if blamed is not error else (error, kind)
        if error is not None:
            step.cell.outputs.append(_error_output(error["ename"], error["evalue"], error["traceback"]))
        elif step.checks and self.cell_untested:  # the cell's own note: what the student reads in the feedback
            step.cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=f"note: {untested_note(self.cell_untested)}\n"))
        if step.checks is not None:
            self.result.verdicts[step.grade_id] = Verdict(step.grade_id, kind, "" if error is None else _reason(error),
                                                          (error or {}).get("check", ""))  # the check's name as data, not text

    def blame_uncompiled(self, error: dict, code: str) -> dict:
        """A test cell's error, or, when it says a name is not defined that an earlier answer cell which
        did not compile would have defined, that cell's compile error with where it is. A test cell
        that caught the NameError and says so (``must raise ValueError, not NameError``) is blamed
        on the broken cell whose names its code uses."""
        text = error.get("evalue", "")
        found = _UNDEFINED.search(text)
        for which, syntax, names in reversed(self.uncompiled):
            name = found and (found.group(1) or found.group(2))
            if not found and "NameError" in text:
                name = next((n for n in sorted(names) if re.search(rf"\b{re.escape(n)}\b", code)), None)
            if name in names:
                where = _SYNTAX_WHERE.search(syntax["evalue"])
                what = (syntax["evalue"][: where.start()] if where else syntax["evalue"]).strip() or "invalid syntax"
                if what == "incomplete input":  # IPython's word for a cell that ends inside a statement
                    what += ": a bracket, a string or a block is left open"
                line = f", line {where.group(2)}" if where else ""
                evalue = f"in {which}{line}: {what} (the cell did not run, so `{name}` is not defined here: fix it and run it again)"
                return {"ename": syntax["ename"], "evalue": evalue, "traceback": [f"{syntax['ename']}: {evalue}"] + error["traceback"]}
        return error

    def _execute(self, step: _Step) -> tuple[dict | None, Kind]:
        """The visible code in the kernel, then (when its asserts passed) the hidden checks here."""
        with self.timed("notebook code"):
            reply = self.session.request({"op": "run", "code": step.code, "interactive": step.checks is None})
        if reply.get("status") == "interrupted":
            raise KernelTimeout("timed out (interrupted)", alive=True)
        if reply.get("status") != "ok":
            error = _clean_error(reply.get("error"), self.caps)
            return error, Kind.FAILED if error["ename"] == "AssertionError" else Kind.ERROR
        with self.timed("hidden checks"):
            return self._checks(step)

    def _checks(self, step: _Step) -> tuple[dict | None, Kind]:
        """The cell's hidden checks, here against the kernel's definitions: the first failure is the cell's."""
        from .decide import run_remote_check

        self.cell_untested = {}
        for name in step.checks or []:
            try:
                found = run_remote_check(name, self.session)
                self.untested.update(found)
                self.cell_untested.update(found)
            except CheckFailure as exc:
                msg = clean_text(str(exc)[: self.caps.message])
                return {"ename": "CheckFailure", "evalue": msg, "traceback": [f"CheckFailure: {msg}"], "check": name}, Kind(exc.kind)
            except KernelError:
                raise
            except Exception as exc:  # noqa: BLE001 - e.g. a check tripping over an odd answer
                msg = clean_text(str(exc)[: self.caps.unexpected_message])
                return {"ename": type(exc).__name__, "evalue": msg, "traceback": [f"{type(exc).__name__}: {msg}"], "check": name}, Kind.ERROR
        return None, Kind.PASSED

    def _timed_out(self, exc: KernelTimeout) -> dict:
        """A cell over its limit: the cell fails; the notebook stops when the kernel is gone or the
        notebook's own limit is spent."""
        notebook_over = time.monotonic() >= self.notebook_deadline or (exc.alive and self.kernel.cpu_seconds() >= self.notebook_cpu_deadline)
        what = "notebook" if notebook_over else "cell"
        cpu = self.limits.notebook_cpu() if notebook_over else self.limits.cell_cpu()
        msg = (f"the {what} used more than its {cpu:g} s of CPU time, every process it started counted "
               f"(or {self.limits.wall(cpu):g} s of wall-clock time)"
               + ("" if exc.alive else " and ignored the interrupt; the kernel was stopped"))
        if not exc.alive or notebook_over:
            self._stop(msg, Kind.TIMEOUT)
            if exc.alive:
                self.kernel.kill(msg, "timeout")
        return {"ename": "CellTimeoutError", "evalue": msg, "traceback": [f"CellTimeoutError: {msg}"]}


def _error_output(ename: str, evalue: str, traceback: list[str] | None = None):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=traceback or [f"{ename}: {evalue}"])


def _reason(error: dict) -> str:
    value = _ANSI.sub("", error.get("evalue", "")).strip()
    return f"{error.get('ename')}: {value}" if value else error.get("ename", "error")


def clean_text(text: str) -> str:
    """Text from a kernel as storable UTF-8: lone surrogates and NULs replaced."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")


def _clean_error(error, caps: OutputCaps) -> dict:
    if not isinstance(error, dict):
        return {"ename": "Error", "evalue": "the cell failed", "traceback": []}
    ename = error.get("ename") if type(error.get("ename")) is str else "Error"
    evalue = error.get("evalue") if type(error.get("evalue")) is str else ""
    tb = error.get("traceback") if type(error.get("traceback")) is list else []
    tb = [clean_text(line[: caps.traceback_line]) for line in tb[: caps.traceback_lines] if type(line) is str]
    return {"ename": clean_text(ename[: caps.error_name]) or "Error", "evalue": clean_text(evalue[: caps.message]), "traceback": tb}


class _Budget:
    """Cleans and caps what the kernel printed, per cell and per notebook."""

    def __init__(self, caps: OutputCaps):
        self.caps = caps
        self.used = 0
        self.notes: list[str] = []
        self.exhausted = False

    def clean(self, outputs: list, allow_result: bool) -> list:
        kept: list = []
        self.cell_text = 0
        for out in outputs:
            if not isinstance(out, dict) or len(kept) >= self.caps.items_per_cell:
                continue
            kind = out.get("output_type")
            if kind == "stream":
                self._stream(out, kept)
            elif kind in ("display_data", "execute_result"):
                if kind == "execute_result" and not allow_result:
                    continue  # a test cell's verdict never depends on a value the kernel shows
                data = self._data(out.get("data") if isinstance(out.get("data"), dict) else {})
                if data and kind == "execute_result":
                    kept.append(nbformat.v4.new_output("execute_result", data=data, execution_count=None))
                elif data:
                    kept.append(nbformat.v4.new_output("display_data", data=data))
        return kept

    def _stream(self, out: dict, kept: list) -> None:
        name = out.get("name") if out.get("name") in ("stdout", "stderr") else "stdout"
        text = clean_text(out.get("text")) if type(out.get("text")) is str else ""
        room = min(self.caps.per_cell - self.cell_text, self.caps.per_notebook - self.used)
        if room <= 0:
            self._note_exhausted()
            return
        if len(text) > room:
            text = text[:room] + f"\n[... output truncated: more than {self.caps.per_cell} characters in this cell ...]\n"
        self.cell_text += len(text)
        self.used += len(text)
        if kept and kept[-1].output_type == "stream" and kept[-1].name == name:
            kept[-1].text += text
        else:
            kept.append(nbformat.v4.new_output("stream", name=name, text=text))

    def _data(self, data: dict) -> dict:
        clean = {}
        for mime in KEEP_MIME:
            value = data.get(mime)
            if type(value) is not str:
                continue
            if mime.startswith("image/"):
                if len(value) > self.caps.image or not _is_base64(value):
                    continue
            else:
                value = clean_text(value[: self.caps.result_text])
            if self.used + len(value) > self.caps.per_notebook:
                self._note_exhausted()
                continue
            self.used += len(value)
            clean[mime] = value
        return clean

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
