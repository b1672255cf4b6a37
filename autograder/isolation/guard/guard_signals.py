"""No student code inside the guard's frames: the collector off while they run, Python signal handlers from the library only.

Part of the kernel's guard (``guard.py``, whose docstring says what the guard is and keeps): its
functions run inside the guard's audit hook, or are installed by it, and only callables captured
when ``guard.install`` calls them run there. In the sandbox this file sits beside ``guard.py`` as a
plain module, removed from ``sys.modules`` before any student code exists.
"""
from __future__ import annotations

def collector():
    """``(off, back)``: the collector off from the first of the guard's frames to the last, in any
    thread, and then as it was. ``gc.enable`` and ``gc.disable`` are replaced for everyone else: while
    the guard's code runs they only change what the collector goes back to (a thread of the student's
    turning it on would let a collection, and its finalizers and callbacks, start in a guard frame)."""
    import gc

    isenabled, disable, enable = gc.isenabled, gc.disable, gc.enable
    held = {"depth": 0, "was": False}

    def off() -> None:  # nothing allocates before disable(): no collection starts in this frame
        if held["depth"] == 0:
            held["was"] = isenabled()
            disable()
        held["depth"] += 1

    def back() -> None:
        held["depth"] -= 1
        if held["depth"] == 0 and held["was"]:
            enable()

    def enable_() -> None:
        if held["depth"]:
            held["was"] = True
        else:
            enable()

    def disable_() -> None:
        if held["depth"]:
            held["was"] = False
        else:
            disable()

    gc.enable, gc.disable = enable_, disable_
    return off, back


def signal_handlers(refuse, student_on_stack, collector) -> None:
    """Python signal handlers only from the library: a handler runs wherever the main thread is when the
    signal comes, the guard's own code included, and is handed that frame (no audit event says so): a
    student's handler on a timer could read the guard's closure (its dispatcher libraries, its key) or
    raise in the middle of a change of its state. CPython raises no audit event for ``signal.signal``,
    so the function itself is replaced, in ``_signal`` and ``signal``, and so is the one way to a fresh
    copy of it (``_imp.create_builtin`` making a second ``_signal`` module). SIG_DFL and SIG_IGN stay free."""
    import _imp
    import _signal
    import signal
    import sys

    getframe, type_, str_, int_, type_error = sys._getframe, type, str, int, TypeError
    off, back = collector
    numbers, plain = (int, type(signal.SIGINT)), (int, type(signal.SIG_DFL))
    fresh_copy_refused = frozenset({"_signal", "_imp", "gc"})
    c_signal, original_create = _signal.signal, _imp.create_builtin
    spec_type = sys.modules["_frozen_importlib"].ModuleSpec
    spec_class = spec_type.__dict__

    def signal_(signalnum, handler):
        """``signal.signal`` on plain numbers only (``int.__int__``: no ``__index__`` of the student's
        runs in this frame), the collector off until the frame is left."""
        off()  # no collection in the guard's frames (module docstring)
        try:
            if type_(handler) not in plain and student_on_stack(getframe(1)):
                refuse("signal.signal", "", "a signal handler (it would run inside the grader's own code)")
            if type_(signalnum) not in numbers:
                raise type_error("signal number must be an int")
            return c_signal(int_.__int__(signalnum), int_.__int__(handler) if type_(handler) in plain else handler)
        finally:
            back()

    class Spec:  # what create_builtin reads of a spec (its name), read once, here
        __slots__ = ("name",)

        def __init__(self, name):
            self.name = name

    def create_builtin(spec):
        off()  # no collection in the guard's frames (module docstring)
        try:
            name = None  # the spec's name read only as data: no property or __getattr__ of the student's runs here
            if type_(spec) is spec_type and "name" not in spec_class and "__getattribute__" not in spec_class and "__getattr__" not in spec_class:
                name = spec.name
            if (type_(name) is not str_ or name in fresh_copy_refused) and student_on_stack(getframe(1)):
                refuse("_imp.create_builtin", name if type_(name) is str_ else "?", "a second copy of a built-in module")
            return original_create(Spec(name))
        finally:
            back()

    _signal.signal = signal.signal = signal_
    _imp.create_builtin = create_builtin
