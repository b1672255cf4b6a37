"""The kernel's guard: what student code in the kernel cannot undo, and records it cannot rewrite.

Installed by ``kernel_runner.py`` before any student code exists, as a CPython audit hook
(``sys.addaudithook``: a hook cannot be removed, replaced or listed from Python). Everything the
guard keeps lives in the closure of :func:`install`, which nothing else references: no module
attribute, no registry (``torch.library.Library`` is not used: its finaliser registry would hand
out the handle that removes the registrations). Its records go straight to the reply pipe as
frames of their own, each authenticated with a key drawn at start-up and sent to the grader
before any student code runs, and numbered: the grader (``guardlog.py``) decides from them, and
a record that is missing, forged, replayed or out of order is tampering.

What it does:

* **Forbidden routines, at torch's dispatcher.** While the guard is *up* for a forbidden dotted
  name, every ATen operator that computes it (its own name's words, e.g. ``aten::_softmax``,
  ``aten::_masked_softmax``; a fused twin such as ``aten::_native_multi_head_attention`` is
  forbidden by name beside its routine, see ``checking/forbidden.py``) has, at every dispatch key it has a kernel for, a kernel
  that records the call and raises instead of computing. Dispatcher registrations are global: every
  thread and every C++ caller that reaches the operator through the dispatcher is refused.
  The state changes only on an ``autograder.guard`` audit event raised with no student code on
  the stack; each change is acknowledged to the grader with the request id and the names up.
* **The ways into the machinery**, refused (and recorded) while student code is on the stack:
  frames asked for by student code (``sys._getframe``, ``inspect.currentframe()``, a traceback's
  ``tb_frame``, a generator's ``gi_frame``; the library's own readers, such as warnings, may), the garbage
  collector's object lists, tracing and profiling hooks, new audit hooks, code objects built or
  swapped in (``code.__new__``, ``function.__new__``, setting ``__code__``), code compiled under a
  library's file name, ``ctypes``, new processes (fork, exec, spawn, ``subprocess``; below the audit
  events, ``_posixsubprocess.fork_exec`` raises none: the seccomp filter ``install`` adds refuses ``execve``), ``marshal``
  outside the import system, unpickling that names code (``exec``, ``eval``, ``os.system``...), and
  compiled modules or native extensions from outside the library (code the static scan never read;
  importlib compiles the student's modules from their source instead of a cached ``.pyc``).

* **The device watch's findings** (``recorder.DeviceWatch``, a device probe without a GPU): the watch
  raises an ``autograder.device`` event at each operator that mixes the stand-in device with the CPU,
  which becomes a signed ``mixed`` record at once (resetting the watch's Python object afterwards
  changes nothing; code can only add findings against itself). The runner's ``on``/``off`` events
  around the call (refused from student code) give the guard the watch's mode: at ``off`` it checks,
  with torch's C functions captured at install, that the mode is still on the dispatch mode stack
  and that its object was not changed, nor its class and module since install (``watch`` record,
  ``kept``; a changed class is caught at the next watched call's start too). What it cannot see: code that takes the mode
  off the stack (or changes it) around one operator and puts it back before the call returns.
* **What a graded call changes in place.** The runner hands the guard the call's argument list and
  dict before it and asks again after it (``autograder.guard.args``); the guard keeps them and a
  picture of each in its closure and records, signed, which changed (``guard_arguments.py``). Rebinding
  anything in the runner changes nothing the grader reads; a call the guard did not see is tampering.

Only C-level callables captured at install time run inside the hook (student code may rebind
any module attribute or builtin); it never calls a method of an object the student made.

No student code runs inside the guard's frames. A Python signal handler runs wherever the main
thread happens to be, the hook included, and is handed that frame without an audit event: a
student's handler on a timer could read the guard's closure from it (the dispatcher libraries, whose
reset frees a forbidden routine without a record; the key) or raise in the middle of ``set_up``
(where a swallowed error would leave a kernel unregistered that the "state" record calls up). So
handlers come only from the library: ``signal.signal`` with a function, from student code, is
refused and recorded, as is a second copy of ``_signal`` (``_imp.create_builtin``), CPython raising
no audit event for either. The runner's own SIGINT handler raises only inside student code, never
in ``set_up`` (called with the interrupt blocked), and a record is numbered and written with it held
off, so an interrupt never leaves a gap in the numbering. The collector is off while the guard's
code runs in any thread (``hook``, the refusing kernels, the wrappers above; nothing in them
allocates before it is turned off; ``guard_signals.collector``): a collection starting in the guard's frames
would run the student's finalizers and ``gc.callbacks`` there, and a frame comes without an audit
event (``logging.currentframe()`` is the library's; CPython 3.11 audits no ``f_back``, ``f_locals``
or ``__closure__``) and leads to the guard's closure. A thread of the student's calling
``gc.enable`` meanwhile only changes what the collector goes back to afterwards. Nor does the guard
read a student value that could run code in its frames (a number's ``__index__``, a spec's property).
Trace and profile functions are refused whoever sets them (``threading.setprofile``'s is set by the
new thread's own bootstrap, with no student code on its stack): they see the guard's frames that run
outside the hook (the refusing kernels, the wrappers), which CPython does not hide from them. And a
refusal's traceback holds the guard's frames: one read from a traceback by a library (bdb, IPython,
the runner's traceback text; the student's own reads are refused) is handed out, with any guard frame
it leads back to, with its locals and closure cleared.
"""
from __future__ import annotations

try:  # the guard's other parts: in the package (in-process), or beside this file in the sandbox
    from . import guard_arguments, guard_devices, guard_signals
except ImportError:
    import guard_arguments
    import guard_devices
    import guard_signals


def install(fd: int, plan: dict, trusted: list, workdir: str, processes: bool = True, no_exec: str = "", watch_class=None) -> None:
    """Arm the guard. ``fd``: the reply pipe; ``plan``: forbidden dotted name -> [(namespace, operator,
    dispatch key)] to refuse while it is up; ``trusted``: folders whose code is the library's;
    ``processes``: refuse new processes and ctypes (off only to test the sandbox behind the guard);
    ``no_exec``: the grader's seccomp filter refusing ``execve`` (hex, ``seccomp.no_exec_program``),
    added to this process here: from then on no program starts, in the kernel or any process it makes;
    ``watch_class``: the device watch's mode class (``recorder._Devices``), whose class and module the guard
    takes a print of now, before any student code, and compares at each watched call."""
    import os
    import sys

    if no_exec:
        _forbid_exec(bytes.fromhex(no_exec))

    key = os.urandom(32)
    state = {"seq": 0, "up": frozenset(), "libs": {}, "armed": False, "told": 0}
    emit = _records(fd, key, state)
    trusted_file, student_on_stack = _context(trusted, workdir)
    collector = guard_signals.collector()
    set_up = _dispatcher(plan, emit, state, collector)
    devices = guard_devices.devices_watch(emit, state, student_on_stack, watch_class)
    state["arguments"] = guard_arguments.arguments_watch(emit)
    handle = _policy(emit, state, set_up, trusted_file, student_on_stack, key, processes, devices)
    guard_signals.signal_handlers(_refuse(emit, state), student_on_stack, collector)
    sys.addaudithook(_hook(handle, collector))


def _forbid_exec(program: bytes) -> None:
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(prog), 0, 0):  # NO_NEW_PRIVS, SET_SECCOMP
        raise OSError(ctypes.get_errno(), "the kernel could not refuse new programs (seccomp)")


def _records(fd: int, key: bytes, state: dict):
    """``emit(kind, **fields)``: one authenticated, numbered record on the reply pipe."""
    import os

    from _hashlib import hmac_digest

    import _signal

    write, fstat, exit_, type_, len_ = os.write, os.fstat, os._exit, type, len
    sigmask, block, setmask, interrupts = _signal.pthread_sigmask, _signal.SIG_BLOCK, _signal.SIG_SETMASK, {_signal.SIGINT}
    me = fstat(fd)
    pipe_id = (me.st_dev, me.st_ino)

    def emit(kind: str, **fields) -> None:
        # the grader's interrupt (SIGINT, a KeyboardInterrupt in student code) waits until the record is
        # numbered and written: one landing between the two would leave a gap the grader reads as tampering.
        # One already caught is handled after the first call below, before anything changes; from the
        # second on, the finally clause puts the mask back whatever happens.
        held = sigmask(block, ())
        try:
            sigmask(block, interrupts)
            _emit(kind, fields)
        finally:
            sigmask(setmask, held)

    def _emit(kind: str, fields: dict) -> None:
        st = fstat(fd)
        if (st.st_dev, st.st_ino) != pipe_id:
            exit_(70)  # the pipe was swapped: nothing the grader reads from here can be trusted
        seq = state["seq"] + 1
        parts = [f'"seq":{seq}', f'"kind":"{kind}"']
        for name, value in fields.items():
            if type_(value) is int:
                parts.append(f'"{name}":{value}')
            elif type_(value) is list:
                parts.append(f'"{name}":[' + ",".join(f'"{v}"' for v in value) + "]")
            else:
                parts.append(f'"{name}":"{value}"')
        body = ("{" + ",".join(parts) + "}").encode()
        mac = hmac_digest(key, body, "sha256").hex() if kind != "key" else "0" * 64
        data = b'{"guard":' + body + b',"mac":"' + mac.encode() + b'"}'
        frame = len_(data).to_bytes(8, "big") + data  # under PIPE_BUF: one atomic write
        state["seq"] = seq
        while frame:
            frame = frame[write(fd, frame):]

    return emit


def safe(text, type_=type, str_=str) -> str:
    """A name as it goes into a record: letters, digits and a few marks, at most 160 of them."""
    if type_(text) is not str_:
        return "?"
    return "".join([c if (c.isalnum() or c in "._:-<>/") else "_" for c in text[:160]])


def _context(trusted: list, workdir: str):
    """(trusted_file, student_on_stack): whether code is the library's, and whether any frame of
    the stack from ``frame`` outwards runs student code (a cell, a submission file, exec'd text)."""
    type_, str_ = type, str
    roots = tuple(str(r).rstrip("/") + "/" for r in trusted) + ("<frozen ",)
    student_root = str(workdir).rstrip("/") + "/"

    def trusted_file(filename) -> bool:
        return type_(filename) is str_ and filename.startswith(roots) and not filename.startswith(student_root)

    def student_on_stack(frame) -> bool:
        while frame is not None:
            if not trusted_file(frame.f_code.co_filename):
                return True
            frame = frame.f_back
        return False

    return trusted_file, student_on_stack


def _refuse(emit, state: dict):
    safe_, permission_error = safe, PermissionError  # bound now: a student may rebind module names and builtins

    def refuse(event: str, detail: str, what: str):
        if state["told"] < 64:  # a loop of refusals is one story: the grader needs the first ones
            state["told"] += 1
            emit("refused", event=safe_(event), detail=safe_(detail))
        raise permission_error(f"the grader refuses {what} in a submission ({event}): it reaches into the grading "
                              "machinery, and a correct answer needs none of it")
    return refuse


def _dispatcher(plan: dict, emit, state: dict, collector):
    """``set_up(request_id, names)``: the refusing kernels for exactly ``names``, acknowledged."""
    import warnings

    import torch

    library, impl, reset = torch._C._dispatch_library, torch._C._DispatchModule.impl, torch._C._DispatchModule.reset
    off, back = collector
    type_, str_, sorted_, frozenset_, list_ = type, str, sorted, frozenset, list
    safe_, permission_error, exception = safe, PermissionError, Exception

    def operator_kernel(dotted: str, op: str):
        def refused_operator(*args, **kwargs):
            off()  # no collection in the guard's frames (module docstring), the raise included
            try:
                if state["told"] < 64:
                    state["told"] += 1
                    emit("hit", routine=safe_(dotted), op=safe_(op))
                raise permission_error(f"{dotted} is not allowed in this exercise (the grader refused {op}, which computes "
                                      "it): write the computation from basic tensor operations, as the exercise asks")
            finally:
                back()
        return refused_operator

    def set_up(request_id, names) -> None:
        """Each forbidden name's kernels live in libraries of their own: only what changes is
        registered or taken down (nothing else can take them down: the libraries are only here)."""
        up = sorted_({n for n in names if type_(n) is str_ and n in plan})
        libs, count = state["libs"], 0
        state["told"] = 0  # the cap on records is per request: a cell's refusals do not use up a call's
        for dotted in [d for d in libs if d not in up]:
            for lib in libs.pop(dotted):
                reset(lib)
        for dotted in up:
            if dotted in libs:
                continue
            mine = {}
            for ns, op, dk in plan[dotted]:
                if ns not in mine:
                    mine[ns] = library("IMPL", ns, "", "autograder-guard", 0)
                try:
                    impl(mine[ns], op, dk, operator_kernel(dotted, f"{ns}::{op}"), False)
                    count += 1
                except exception:  # noqa: BLE001 - a key this operator takes no kernel at
                    pass
            libs[dotted] = list_(mine.values())
        state["up"] = frozenset_(up)
        emit("state", id=request_id if type_(request_id) is int else -1, up=[safe_(n) for n in up], kernels=count)

    # torch warns once per process when a kernel is overridden: have it warn now, not inside the hook
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe = library("IMPL", "aten", "", "autograder-guard", 0)
        try:
            impl(probe, "_softmax", "CPU", operator_kernel("", ""), False)  # overrides a kernel: the one warning
        except Exception:  # noqa: BLE001
            pass
        reset(probe)
    return set_up


# the guard's own files: a frame of one of them, read from a traceback by a library, is cleared (_policy)
OWN_FILES = frozenset(f.__code__.co_filename for f in (_context, guard_arguments.arguments_watch, guard_devices.devices_watch,
                                                       guard_signals.collector))


def _traceback():
    try:
        raise ValueError
    except ValueError as exc:
        return exc.__traceback__


FRAME_EVENTS = frozenset({"sys._getframe", "sys._getframemodulename"})
# refused whoever sets them (a thread's bootstrap sets threading.setprofile's function with no student code on
# its stack): a trace or profile function is handed every frame the guard runs outside its hook, where
# CPython does not trace (the refusing kernels, the wrappers of signal.signal and gc.enable)
TRACING = frozenset({"sys.settrace", "sys.setprofile"})
FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
# standard modules whose functions hand their caller a frame (the library's other readers of frames keep them)
FRAME_GIVERS = ("/inspect.py", "/traceback.py")
PROCESSES = frozenset({"os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system", "subprocess.Popen", "pty.spawn"})
ALWAYS = PROCESSES | frozenset({
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames", "sys._current_exceptions",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "code.__new__", "function.__new__",
})
# what each refused event is, in the student's words
WHAT = {"gc": "listing the interpreter's objects", "sys._current": "reading other threads' frames", "sys.settrace": "tracing",
        "sys.setprofile": "profiling hooks", "sys.addaudithook": "a second audit hook", "code.": "building code objects",
        "function.": "building functions from code objects", "ctypes.": "ctypes (raw memory and C calls)"}
WATCHED = FRAME_EVENTS | ALWAYS | frozenset({
    "object.__getattr__", "object.__setattr__", "marshal.loads", "marshal.load", "pickle.find_class",
    "import", "compile", "exec", "open", "autograder.guard", "autograder.device", "autograder.guard.args",
})
NO_IMPORT = frozenset({"_posixsubprocess", "_ctypes", "ctypes", "_testcapi", "_testinternalcapi", "_xxsubinterpreters"})
# what an unpickled reference may not name: modules whose objects run code (builtins but for plain types)
CODE_MODULES = frozenset({
    "os", "posix", "nt", "subprocess", "sys", "importlib", "types", "marshal", "pickle", "_pickle", "code", "codeop",
    "runpy", "ctypes", "_ctypes", "gc", "inspect", "threading", "_thread", "multiprocessing", "operator", "functools",
    "shutil", "socket", "pty", "signal", "io", "_io", "builtins", "__builtin__", "pdb", "bdb", "_posixsubprocess",
    "weakref", "contextlib", "unittest", "timeit", "trace", "cProfile", "profile",
})
SAFE_BUILTINS = frozenset({"set", "frozenset", "dict", "list", "tuple", "int", "float", "complex", "bytes", "bytearray",
                           "str", "slice", "range", "bool", "object"})


def _frames(refuse, trusted_file):
    """``frames(event, name, args, caller)``: a frame asked for (``sys._getframe``, a traceback's or a
    generator's frame) is refused to student code; a guard frame read from a traceback by a library is
    handed out cleared (the module's docstring)."""
    import sys

    type_ = type
    frame_givers, own_files, traceback_type = FRAME_GIVERS, OWN_FILES, type(_traceback())
    clear, runtime_error = type(sys._getframe(0)).clear, RuntimeError

    def frames(event: str, name, args, caller) -> None:
        asker = caller
        while asker is not None and trusted_file(asker.f_code.co_filename) and asker.f_code.co_filename.endswith(frame_givers):
            asker = asker.f_back  # inspect.currentframe(), traceback.walk_stack(): asked for by their caller
        if asker is not None and not trusted_file(asker.f_code.co_filename):
            refuse(event, name or "", "reading the interpreter's frames")
        if name == "tb_frame" and caller is not None and caller.f_code.co_filename not in own_files and type_(args[0]) is traceback_type:
            frame = args[0].tb_frame  # (read here by the guard: an event it lets pass)
            # a frame from a traceback, asked for by a library (bdb, IPython, the runner's traceback text): the
            # guard frames it is or leads back to (a refusal's, or an interrupt's raised in the guard's code,
            # whose handler frame leads to it) are handed out with their locals and closure cleared
            while frame is not None:
                if frame.f_code.co_filename in own_files:
                    try:
                        clear(frame)
                    except runtime_error:  # still running
                        refuse(event, "the guard's frame", "reading the grader's own frames")
                frame = frame.f_back

    return frames


def _policy(emit, state, set_up, trusted_file, student_on_stack, key: bytes, processes: bool, devices):
    """``handle(event, args)``: the guard's state events, and what is refused with student code on the stack."""
    import sys

    getframe, type_, str_, tuple_, len_ = sys._getframe, type, str, tuple, len
    code_type = type(_policy.__code__)
    refuse = _refuse(emit, state)
    permission_error = PermissionError

    def name_of_file(args):
        return args[0] if len_(args) >= 1 and type_(args[0]) is str_ else None
    frame_events, frame_attrs, frames = FRAME_EVENTS, FRAME_ATTRS, _frames(refuse, trusted_file)
    always = ALWAYS if processes else ALWAYS - PROCESSES
    ctypes_prefix = "ctypes." if processes else "\0"
    code_modules, safe_builtins, no_import = CODE_MODULES, SAFE_BUILTINS, NO_IMPORT
    processes, what_is = PROCESSES, tuple(WHAT.items())
    tracing = TRACING

    def handle(event: str, args) -> None:
        caller = getframe(0).f_back.f_back  # handle <- hook <- the code that raised the event
        if event == "autograder.guard":
            if state["armed"] and student_on_stack(caller):
                refuse(event, "", "changing the grader's guard")
            if not state["armed"]:
                state["armed"] = True
                emit("key", key=key.hex())
            ok = len_(args) == 2 and type_(args[0]) is int and type_(args[1]) is tuple_
            set_up(args[0] if ok else -1, args[1] if ok else ())
            return
        if event == "autograder.guard.args":  # a graded call's arguments, before and after it (guard_arguments.py)
            if state["armed"]:
                refuse(event, "", "changing the grader's guard") if student_on_stack(caller) else state["arguments"](args)
            return
        if not state["armed"]:
            return
        if event == "autograder.device":
            devices(args, caller, refuse)
            return
        name = args[1] if len_(args) >= 2 and type_(args[1]) is str_ else None
        if event in frame_events or (event == "object.__getattr__" and name in frame_attrs):
            frames(event, name, args, caller)
        elif event in tracing:  # whoever calls: a trace or profile function sees the guard's frames outside the hook
            refuse(event, "", "tracing")
        elif event.startswith(ctypes_prefix) or event in always:
            if student_on_stack(caller):
                what = "starting a process" if event in processes else next((w for k, w in what_is if event.startswith(k)), "this")
                refuse(event, "", what)
        elif event == "object.__setattr__":
            if name == "__code__" and student_on_stack(caller):
                refuse(event, name, "replacing a function's code")
        elif event in ("marshal.loads", "marshal.load"):
            if not trusted_file(caller.f_code.co_filename):
                refuse(event, "", "loading serialized code (marshal)")
        elif event == "pickle.find_class":
            module = args[0] if len_(args) == 2 and type_(args[0]) is str_ else ""
            if name is not None and module.split(".")[0] in code_modules and not (module == "builtins" and name in safe_builtins):
                if student_on_stack(caller):
                    refuse(event, f"{module}.{name}", "unpickling that runs code")
        elif event == "import":
            module = args[0] if len_(args) >= 1 and type_(args[0]) is str_ else ""
            if module in no_import and student_on_stack(caller):
                refuse(event, module, "importing this module")
            if len_(args) >= 2 and type_(args[1]) is str_ and not trusted_file(args[1]):
                refuse(event, args[1], "loading a native extension the grader never read")  # only extensions name a file
        elif event == "open":  # a compiled module outside the library: code with no source the scan read
            if not trusted_file(name_of_file(args)):
                if "/__pycache__/" in args[0]:
                    raise permission_error("the grader compiles your modules from their source")  # importlib reads the source
                refuse(event, args[0], "importing compiled code the grader never read")
        elif event == "compile":
            if name is not None and trusted_file(name) and student_on_stack(caller):
                refuse(event, name, "code compiled under a library's file name")
        elif event == "exec":
            code = args[0] if len_(args) >= 1 and type_(args[0]) is code_type else None
            if code is not None and trusted_file(code.co_filename) and not trusted_file(caller.f_code.co_filename):
                refuse(event, code.co_filename, "running a library's code object")

    return handle


def _hook(handle, collector):
    """The audit hook: a fast pass for the events the guard does not watch (reading a frame's
    ``f_code`` is an event too); its own frame lookup (``sys._getframe(0)`` from ``handle``,
    known by its code) is not an event to judge."""
    import sys

    type_, str_, len_ = type, str, len
    off, back = collector  # no collection in the guard's frames (module docstring)
    frame_type = type(sys._getframe(0))
    handle_code = handle.__code__
    watched, frame_attrs, compiled = WATCHED, FRAME_ATTRS, (".pyc", ".pyo")

    def hook(event, args) -> None:
        if type_(event) is not str_ or (event not in watched and not event.startswith("ctypes.")):
            return  # (nothing above allocates: no collection can start in this frame before the collector is off)
        off()
        try:
            if event == "object.__getattr__" and not (len_(args) == 2 and type_(args[1]) is str_ and args[1] in frame_attrs):
                return  # e.g. a frame's f_code, which the guard itself reads
            if event == "open" and not (len_(args) >= 2 and type_(args[0]) is str_ and args[0].endswith(compiled)
                                        and type_(args[1]) is str_ and "r" in args[1] and "+" not in args[1]):
                return  # every file the kernel opens: only reading a compiled module is judged
            if event == "sys._getframe" and len_(args) == 1 and type_(args[0]) is frame_type and args[0].f_code is handle_code:
                return
            handle(event, args)
        finally:
            back()

    return hook


# dispatch keys whose kernels only pass a call on to a lower key (autograd, functorch, functionalisation,
# views, autocast, tracing...): the operator computes at a backend or composite key below them, which
# is where the guard's kernels go, whichever keys a student's code excludes on the way
_PASSING_KEYS = ("Autograd", "FuncTorch", "Functionalize", "ADInplaceOrView", "Python", "PreDispatch", "Batched",
                 "Vmap", "Autocast", "Tracer", "Conjugate", "Negative", "ZeroTensor", "EndOf", "StartOf")


def plan_for(forbidden, reaches) -> dict:
    """Forbidden dotted name -> every (namespace, operator, dispatch key) to refuse while it is up:
    the operators whose names carry the routine's words (``reaches``; a fused twin is a forbidden name
    of its own, added by the checks: ``autograder.checking.forbidden.with_fused_twins``)."""
    import torch

    keys = [k for k in torch._C.DispatchKey.__members__ if not k.startswith(_PASSING_KEYS)]
    names = torch._C._dispatch_get_all_op_names()
    plan = {}
    for dotted in forbidden:
        ops = [n for n in names if reaches(n, dotted)]
        entries = []
        for full in ops:
            ns, _, op = full.partition("::")
            for k in keys:
                try:
                    if torch._C._dispatch_has_kernel_for_dispatch_key(full, getattr(torch._C.DispatchKey, k)):
                        entries.append((ns, op, k))
                except Exception:  # noqa: BLE001
                    pass
        plan[dotted] = entries
    return plan
