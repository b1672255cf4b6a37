"""The device watch's events, as the guard judges them: its findings and whether it stayed on torch's mode stack.

Part of the kernel's guard (``guard.py``, whose docstring says what the guard is and keeps): its
functions run inside the guard's audit hook, or are installed by it, and only callables captured
when ``guard.install`` calls them run there. In the sandbox this file sits beside ``guard.py`` as a
plain module, removed from ``sys.modules`` before any student code exists.
"""
from __future__ import annotations

def devices_watch(emit, state: dict, student_on_stack, watch_class):
    """``devices(args, caller, refuse)``: the device watch's ``on``/``mixed``/``off`` events (see the module's
    docstring)."""
    import torch

    length, at = torch._C._len_torch_dispatch_stack, torch._C._get_dispatch_stack_at
    type_, str_, len_, range_, tuple_, id_, exception = type, str, len, range, tuple, id, Exception
    getattribute = object.__getattribute__
    state["watch"] = None

    def on_stack(mode) -> bool:
        try:
            for i in range_(length()):
                if at(i) is mode:
                    return True
        except exception:  # noqa: BLE001
            pass
        return False

    def print_of(cls):
        """What the watch computes with: its class's attributes and its module's globals (their identities)."""
        try:
            methods = tuple_((k, id_(v)) for k, v in getattribute(cls, "__dict__").items())
            module = tuple_((k, id_(v)) for k, v in getattribute(cls, "__dict__")["__torch_dispatch__"].__globals__.items())
            return (methods, module)
        except exception:  # noqa: BLE001
            return None

    reference = print_of(watch_class) if watch_class is not None else None

    def intact(mode) -> bool:
        return reference is not None and type_(mode) is watch_class and print_of(watch_class) == reference

    def own(mode):
        """The mode's own attributes, but its finding."""
        try:
            return tuple_((k, id_(v)) for k, v in getattribute(mode, "__dict__").items() if k != "mixed")
        except exception:  # noqa: BLE001
            return None

    def text(value) -> str:
        if type_(value) is not str_:
            return "?"
        return "".join([c if (c.isalnum() or c in " ._:-<>/(),") else "_" for c in value[:300]])

    def devices(args, caller, refuse) -> None:
        what = args[0] if len_(args) == 2 and type_(args[0]) is str_ else ""
        watch = state["watch"]
        if what == "mixed":
            if watch is not None and watch[2] < 16:
                state["watch"] = (watch[0], watch[1], watch[2] + 1)
                emit("mixed", detail=text(args[1]))
            return
        if what not in ("on", "off") or student_on_stack(caller):
            refuse("autograder.device", what, "changing the grader's device watch")
        if what == "on":
            state["watch"] = (args[1], own(args[1]), 0)
            emit("watch", on=1 if on_stack(args[1]) and intact(args[1]) else 0)
        elif watch is not None:
            state["watch"] = None
            mode = watch[0]
            kept = args[1] is mode and on_stack(mode) and intact(mode) and watch[1] is not None and own(mode) == watch[1]
            emit("watch", off=1, kept=1 if kept else 0)

    return devices
