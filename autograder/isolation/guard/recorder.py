"""Which torch routines a block of code reaches, whatever name it used to reach them.

A forbidden routine is identified by what it *is*, not by how the student spelled it:
while the recorder is on, a torch function mode sees every call of the Python API
(``torch.softmax``, ``torch._softmax``, ``F.scaled_dot_product_attention``, a method
``x.softmax``, an alias ``s = torch.softmax`` made at any time) and a dispatch mode sees
every ATen operator the calls end in (``aten::_softmax``, ``aten::_log_softmax``,
``aten::_scaled_dot_product_flash_attention_for_cpu``, ``torch.ops.aten.*`` called
directly). A recorded name matches a forbidden dotted name when the words of the
forbidden routine's own name appear in it in order: ``softmax`` matches ``_softmax``,
``log_softmax``, ``special_softmax`` and ``_masked_softmax`` (the private twins);
``scaled_dot_product_attention`` matches ``_scaled_dot_product_attention_math`` and
``_scaled_dot_product_flash_attention_for_cpu``.

The dispatch mode also keeps ``largest``: the number of elements of the largest
floating-point tensor an operator returned (at most the memory it spans, so an ``expand``
counts as what it expands). A check can use it to see that an answer never formed a
tensor it was asked not to form (say, a whole score matrix).

Both modes sit on torch's mode stacks for the duration of a graded call. Code that pops
them or runs with torch functions disabled is found afterwards (the stacks no longer
hold the recorder) and reported as ``removed``, which the grader treats as tampering.

``Tripwire`` (the sandboxed kernel's, installed by its runner before any student code) wraps
each forbidden library function wherever the library exposes it, and records a call made by
any name while a graded call runs: a second record beside the guard's refusals at the dispatcher.

This module knows nothing of courses; it is used inside the sandboxed kernel
(``kernel_runner.py``) and by in-process checking (plain nbgrader, self-check).
"""
from __future__ import annotations

import functools
import re
import sys

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack
from torch.utils._pytree import tree_leaves

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def resolve_owner(dotted: str):
    """(the object holding it, attribute name) of a dotted library name: ``"torch.nn.functional.softmax"``
    -> (``torch.nn.functional``, ``"softmax"``); ``"torch.Tensor.softmax"`` -> (``torch.Tensor``, ``"softmax"``).
    Imports the longest importable module prefix, then follows attributes. ImportError when none imports."""
    import importlib

    module_name, _, attr = dotted.rpartition(".")
    parts = module_name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            owner = getattr(owner, p)
        return owner, attr
    raise ImportError(dotted)


@functools.lru_cache(maxsize=4096)
def words(name: str) -> tuple[str, ...]:
    """``"aten::_scaled_dot_product_flash_attention_for_cpu.default"`` -> its lower-case words. Kept: every graded
    call's ``hits`` asks for the words of each routine it recorded against each forbidden name (issue 36:
    splitting them again took 2-7 ms of a call)."""
    return tuple(w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", name).lower()) if w and w not in ("aten", "default", "int", "tensor"))


def routine_words(dotted: str) -> tuple[str, ...]:
    """The words of a forbidden routine's own name: ``torch.nn.functional.one_hot`` -> one, hot."""
    return words(dotted.rpartition(".")[2])


def reaches(name: str, dotted: str) -> bool:
    """Whether a recorded routine ``name`` is (a twin of) the forbidden ``dotted`` routine."""
    want = routine_words(dotted)
    if not want:
        return False
    low = name.lower()  # each word lies within the lower-cased name: most names are refused here, unsplit
    for w in want:
        if w not in low:
            return False
    have = words(name)
    it = iter(have)
    return all(any(w == h for h in it) for w in want)


# a graded call's hits ask again about the same few routines: kept (the guard's plan, once per kernel
# over every operator, calls reaches itself: a cache there would only be filled and emptied)
_reaches_kept = functools.lru_cache(maxsize=4096)(reaches)


def _name(func) -> str:
    for attr in ("__qualname__", "__name__"):
        value = getattr(func, attr, None)
        if type(value) is str:
            return value
    return type(func).__name__


class _Functions(TorchFunctionMode):
    def __init__(self, seen: set):
        super().__init__()
        self.seen = seen

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.add(_name(func))
        return func(*args, **(kwargs or {}))


def _float_elements(value, largest: int) -> int:
    """``largest``, or more: the elements of a floating-point tensor in an operator's result, counted as
    the memory it spans (an ``expand`` counts as what it expands). Cheap when nothing is larger."""
    for t in (value,) if type(value) is torch.Tensor else tree_leaves(value):  # most operators return one tensor
        if isinstance(t, torch.Tensor) and t.numel() > largest and (t.is_floating_point() or t.is_complex()):
            try:
                n = min(t.numel(), t.untyped_storage().nbytes() // max(t.element_size(), 1))
            except Exception:  # noqa: BLE001 - a tensor without a plain storage (sparse, nested)
                n = t.numel()
            largest = max(largest, n)
    return largest


class _Operators(TorchDispatchMode):
    def __init__(self, seen: set):
        super().__init__()
        self.seen = seen
        self.functions_off = False
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.add(str(getattr(func, "_name", None) or func))
        # torch functions switched off around this call (DisableTorchFunction) while the function
        # mode is still on its stack: the code hid the names it calls from the recorder
        if not torch._C._is_torch_function_enabled() and torch._C._len_torch_function_stack() > 0:
            self.functions_off = True
        out = func(*args, **(kwargs or {}))
        self.largest = _float_elements(out, self.largest)
        return out


class Recorder:
    """``with Recorder() as r: ...`` then ``r.hits(forbidden)``, ``r.removed`` and ``r.largest``."""

    def __init__(self):
        self.seen: set[str] = set()
        self.removed = ""
        self._functions = _Functions(self.seen)
        self._operators = _Operators(self.seen)

    def __enter__(self):
        self.seen.clear()
        self.removed = ""
        self._operators.functions_off = False
        self._operators.largest = 0
        self._functions.__enter__()
        self._operators.__enter__()
        return self

    def __exit__(self, *exc):
        if not self._on_stacks() or self._operators.functions_off:
            self.removed = "the code removed the grader's record of the torch routines it calls"
        # leave the stacks as they were before __enter__, whatever the code did to them
        try:
            self._operators.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - already popped by the code
            pass
        try:
            self._functions.__exit__(None, None, None)
        except Exception:  # noqa: BLE001
            pass
        return False

    @property
    def largest(self) -> int:
        """Elements of the largest floating-point tensor an operator returned inside the block."""
        return self._operators.largest

    def _on_stacks(self) -> bool:
        try:
            dispatch_ok = any(m is self._operators for m in _get_current_dispatch_mode_stack())
            n = torch._C._len_torch_function_stack()
            function_ok = any(torch._C._get_function_stack_at(i) is self._functions for i in range(n))
            return dispatch_ok and function_ok and torch._C._is_torch_function_enabled()
        except Exception:  # noqa: BLE001 - an internal API this torch lacks: do not guess
            return True

    def hits(self, forbidden) -> list[str]:
        """The forbidden dotted names the recorded calls reach, each once, as
        ``"torch.softmax (reached as aten::_softmax)"`` where the names differ."""
        out = []
        for dotted in forbidden:
            found = sorted(n for n in self.seen if _reaches_kept(n, dotted))
            if found:
                plain = dotted.rpartition(".")[2]
                shown = next((n for n in found if n == plain), found[0])
                out.append(dotted if shown == plain else f"{dotted} (reached as {shown})")
        return out


# operators that take a tensor on another device than the others on a GPU too: copies and moves,
# and indexing with CPU indices (PyTorch moves them); every other operator raises there ("Expected
# all tensors to be on the same device") when one of its tensors is on the CPU and holds more than
# one value (a 0-dimensional CPU tensor is a scalar, accepted beside tensors of any device)
CROSS_DEVICE_OK = frozenset({
    "copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "to", "lift_fresh", "lift_fresh_copy", "set_",
    "index", "_unsafe_index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index_put",
})


# of those, the indexing operators whose first tensor is the one indexed: a CPU tensor indexed with indices on
# the device raises on a GPU ("indices should be either on cpu or on the same device as the indexed tensor")
INDEXING = frozenset({"index", "_unsafe_index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index_put"})
DEVICE_EVENT = "autograder.device"  # the kernel's guard (guard.py) turns a finding into a signed record
_audit = sys.audit  # bound here: code that rebinds sys.audit does not silence the watch (the guard checks this module)


class _Devices(TorchDispatchMode):
    def __init__(self, device: str):
        super().__init__()
        self.device = device
        self.mixed = ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        found = _mixes(func, args, kwargs, self.device)  # every operator: nothing of the mode's says "already found"
        if found:
            _audit(DEVICE_EVENT, "mixed", found)  # sealed at once (a guard, where one is armed)
            self.mixed = self.mixed or found
        return func(*args, **(kwargs or {}))


def _mixes(func, args, kwargs, device: str) -> str:
    """What an operator mixes: a tensor on ``device`` beside a CPU tensor of more than one value where a GPU raises; ""."""
    name = str(getattr(func, "_name", None) or func)
    op = name.split("::")[-1].split(".")[0]
    tensors = [t for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
    here = next((t for t in tensors if t.device.type == device), None)
    if here is None:
        return ""
    if op in CROSS_DEVICE_OK:
        indexed = tensors[0] if op in INDEXING else None
        cpu = indexed if indexed is not None and indexed.device.type == "cpu" and indexed.dim() > 0 else None
    else:
        cpu = next((t for t in tensors if t.device.type == "cpu" and t.dim() > 0), None)
    if cpu is None:
        return ""
    return (f"{name} with a tensor on the CPU ({tuple(cpu.shape)} {str(cpu.dtype).replace('torch.', '')}) "
            f"beside one on {device} ({tuple(here.shape)})")


class DeviceWatch:
    """``with DeviceWatch("meta") as w: ...`` then ``w.mixed``: the first operator that took a tensor on
    ``device`` (the stand-in for a GPU) beside a CPU tensor of more than one value, where a GPU
    raises; "" when none did. ``w.removed`` as the Recorder's (the code took the watch off torch's
    mode stack). In the sandboxed kernel neither decides: each finding is also an ``autograder.device``
    audit event, which the kernel's guard (``guard.py``) writes as a signed record at once, and the
    ``on``/``off`` events around the block let the guard check the watch itself (CONTRIBUTING, "Where a
    verdict comes from")."""

    def __init__(self, device: str = "meta"):
        self._mode = _Devices(device)
        self.removed = ""

    @property
    def mixed(self) -> str:
        return self._mode.mixed

    def __enter__(self):
        self._mode.mixed, self.removed = "", ""
        self._mode.__enter__()
        _audit(DEVICE_EVENT, "on", self._mode)  # the guard keeps the mode and checks it is still on the stack at "off"
        return self

    def __exit__(self, *exc):
        _audit(DEVICE_EVENT, "off", self._mode)
        try:
            on_stack = any(m is self._mode for m in _get_current_dispatch_mode_stack())
        except Exception:  # noqa: BLE001 - an internal API this torch lacks: do not guess
            on_stack = True
        if not on_stack:
            self.removed = "the code removed the grader's watch on the devices of the tensors it computes with"
        try:
            self._mode.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - already popped by the code
            pass
        return False


class Tripwire:
    """Records calls to forbidden library functions, whatever name they are reached by.

    Installed at start-up, before any student code exists: every place the
    library exposes a forbidden function (``F.one_hot``, ``torch._C._nn.one_hot``,
    ``torch.ops.aten.one_hot``, ``torch.Tensor.softmax``...) gets a thin wrapper,
    and a forbidden class records its construction. An alias the student makes
    later is an alias of the wrapper. Calls are recorded only while the grader's
    check is calling the student's code (as plain nbgrader's tripwire does);
    otherwise the wrappers just pass through, at the cost of one Python call.
    """

    def __init__(self, dotted_names):
        self.active = False
        self.hits: list[str] = []
        for dotted in dotted_names:
            try:
                self._install(dotted)
            except Exception:  # noqa: BLE001 - a name this torch does not have
                pass

    def _record(self, dotted: str) -> None:
        if self.active:
            self.hits.append(dotted)

    def _wrap(self, original, dotted: str):
        record = self._record

        def wrapper(*args, **kwargs):
            record(dotted)
            return original(*args, **kwargs)

        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            try:
                setattr(wrapper, name, getattr(original, name))
            except (AttributeError, TypeError):
                pass
        return wrapper

    def _install(self, dotted: str) -> None:
        owner, attr = resolve_owner(dotted)
        original = getattr(owner, attr)
        if isinstance(original, type):  # a class: its construction is the call
            init = original.__init__
            record = self._record

            def __init__(self_, *args, **kwargs):
                record(dotted)
                return init(self_, *args, **kwargs)

            original.__init__ = __init__
            return
        wrapper = self._wrap(original, dotted)
        holders = [owner, torch, torch.nn.functional, torch.special, torch.Tensor, torch.linalg]
        for extra in ("_nn", "_VariableFunctions", "_special", "_linalg", "TensorBase"):
            if hasattr(torch._C, extra):
                holders.append(getattr(torch._C, extra))
        for holder in holders:
            if getattr(holder, attr, None) is original:
                try:
                    setattr(holder, attr, wrapper)
                except (AttributeError, TypeError):
                    pass
        # torch.ops.aten.<name> stays as it is (library code reads its overloads, e.g. `.input`):
        # a direct ATen call is seen by the recorder (recorder.py), which sees every operator

    def __enter__(self):
        self.hits = []
        self.active = True
        return self

    def __exit__(self, *exc):
        self.active = False
        return False
