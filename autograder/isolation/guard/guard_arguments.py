"""What a graded call changes in place, as the guard sees it: the arguments it holds and their pictures.

Part of the kernel's guard (``guard.py``, whose docstring says what the guard is and keeps): its
functions run inside the guard's audit hook, or are installed by it, and only callables captured
when ``guard.install`` calls them run there. In the sandbox this file sits beside ``guard.py`` as a
plain module, removed from ``sys.modules`` before any student code exists.
"""
from __future__ import annotations

CHUNK = 1 << 30  # bytes per raw read (ctypes reads at most 2 GiB at once)
MAX_LEAVES = 2048  # tensors, arrays and containers of one call's arguments the guard holds (the grader walks as many)


def _no_torch_stacks():
    """The context managers (captured now) under which the guard reads tensors: no ``__torch_function__``
    (subclass or mode) and no Python dispatch (a ``TorchDispatchMode``) the student left on torch's stacks."""
    import torch

    return torch._C.DisableTorchFunction, torch._C._DisableTorchDispatch


def _pictures():
    """``picture(value)``: (kind letter, picture) of an argument the guard holds (``_arguments``), or None;
    only callables captured here run (raw reads by ``ctypes``, a digest by OpenSSL's sha256)."""
    import ctypes

    import numpy
    import torch
    from _hashlib import openssl_sha256

    base, ndarray = torch._C.TensorBase, numpy.ndarray
    plain, strided = (torch.Tensor, torch.nn.Parameter), torch.strided
    data_ptr, size, stride, numel, element_size, to_cpu = base.data_ptr, base.size, base.stride, base.numel, base.element_size, base.cpu
    dtype_of, device_of, layout_of = base.dtype.__get__, base.device.__get__, base.layout.__get__
    device_type = type(torch.device("cpu")).type.__get__
    string_at, tobytes, array_dtype, array_shape = ctypes._string_at, ndarray.tobytes, ndarray.dtype.__get__, ndarray.shape.__get__
    type_, tuple_, list_, dict_, set_, len_, id_, sorted_, zip_ = type, tuple, list, dict, set, len, id, sorted, zip
    range_, min_, object_ = range, min, object
    dict_items, dtype_str, exception = dict.items, type(numpy.dtype("f4")).str.__get__, Exception

    def tensor_picture(t):
        shape, strides, kind = tuple_(size(t)), tuple_(stride(t)), device_type(device_of(t))
        if kind == "meta" or numel(t) == 0:
            return (dtype_of(t), shape, strides, kind)
        src = t if kind == "cpu" else to_cpu(t)
        extent = 1
        for d, s in zip_(tuple_(size(src)), tuple_(stride(src))):
            extent += (d - 1) * s
        digest, start, nbytes = openssl_sha256(), data_ptr(src), extent * element_size(src)
        for at in range_(0, nbytes, CHUNK):
            digest.update(string_at(start + at, min_(CHUNK, nbytes - at)))
        return (dtype_of(t), shape, strides, digest.digest())

    def picture(value):
        """(kind letter, picture) of an argument the guard holds, or None."""
        t = type_(value)
        try:
            if (t is plain[0] or t is plain[1]) and layout_of(value) is strided and device_type(device_of(value)) in ("cpu", "cuda", "meta"):
                return "t", tensor_picture(value)
            if t is ndarray:
                return "n", (dtype_str(array_dtype(value)), array_shape(value), openssl_sha256(tobytes(value)).digest())
        except exception:  # noqa: BLE001 - unreadable (e.g. too large for one read): a picture that matches nothing
            return "t" if t is not ndarray else "n", (id_(value), object_())
        if t is list_ or t is tuple_:
            return "c", (len_(value), tuple_([id_(v) for v in value]))
        if t is dict_:
            return "c", (len_(value), tuple_([id_(v) for kv in dict_items(value) for v in kv]))
        if t is set_:
            return "c", (len_(value), tuple_(sorted_([id_(v) for v in value])))
        return None

    return picture


def arguments_watch(emit):
    """``watch(event_args)`` for ``autograder.guard.args``, raised by the runner around a graded call:
    ``("before", request_id, args, kwargs)`` with the very list and dict the student's function is
    called with, then ``("after", request_id)``. Before, it holds each argument the grader sent (tensors,
    arrays, lists, tuples, dicts and sets, depth-first, into containers) and a picture of each: a tensor's
    dtype, shape, strides and a digest of the bytes it spans, read raw (``ctypes``: no torch operator, so
    no dispatch mode or ``__torch_function__`` the student left runs); a container's length and the identity
    of its elements. After, it takes the pictures again and records ``kinds`` (one letter per argument held:
    ``t`` tensor, ``n`` array, ``c`` container) and ``mutated`` (the indices whose picture changed: a value
    written, a storage swapped by ``set_`` or ``.data``, a shape or strides changed, an element replaced). A
    call that begins twice, or ends without beginning, is recorded with its ``problem``."""
    picture = _pictures()
    type_, tuple_, list_, dict_, set_, str_, int_, len_, enumerate_, join = type, tuple, list, dict, set, str, int, len, enumerate, ",".join
    dict_values, dict_items = dict.values, dict.items
    no_function, no_dispatch = _no_torch_stacks()
    held = {"id": None, "leaves": [], "problem": ""}

    def walk(value, depth, leaves, keep):
        found = picture(value) if len_(leaves) < MAX_LEAVES else None
        if found is None:
            return
        leaves.append((value, found[0], found[1]))
        t = type_(value)
        if t is list_ or t is tuple_ or t is dict_ or t is set_:
            inner = list_(dict_values(value)) if t is dict_ else list_(value)
            keep.append((value, list_(dict_items(value)) if t is dict_ else inner))  # alive: no id is reused
            if depth < 4 and t is not set_:
                for v in inner:
                    walk(v, depth + 1, leaves, keep)

    def watch(args) -> None:
        with no_function(), no_dispatch():
            phase = args[0] if len_(args) >= 2 and type_(args[0]) is str_ else ""
            request_id = args[1] if len_(args) >= 2 and type_(args[1]) is int_ else -1
            if phase == "before":
                problem = "a call began before the last one ended" if held["id"] is not None else ""
                leaves, keep = [], []
                if len_(args) == 4 and type_(args[2]) is list_ and type_(args[3]) is dict_:
                    for value in list_(args[2]) + list_(dict_values(args[3])):
                        walk(value, 0, leaves, keep)
                else:
                    problem = "arguments the runner did not pass as a list and a dict"
                held.update(id=request_id, leaves=leaves, keep=keep, problem=problem)
            elif phase == "after":
                if held["id"] != request_id:
                    emit("args", id=request_id, kinds="", mutated="", problem="a call ended that did not begin")
                    return
                kinds, mutated = "", []
                for i, (value, kind, before) in enumerate_(held["leaves"]):
                    now = picture(value)
                    kinds += kind
                    if now is None or now[1] != before:
                        mutated.append(str_(i))
                emit("args", id=request_id, kinds=kinds, mutated=join(mutated), problem=held["problem"])
                held.update(id=None, leaves=[], keep=[], problem="")

    return watch
