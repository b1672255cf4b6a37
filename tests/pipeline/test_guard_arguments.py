"""The guard's picture of a graded call's arguments (``guard_arguments.arguments_watch``, issue 34, item 3), tried
in this process without a kernel: what counts as changed in place, and that taking the picture runs
nothing of the student's (no dispatch mode, no ``__torch_function__``), on the CPU and, where there is
one, on a GPU. The kernel-level attacks are in test_guard_attacks.py (``UNCHANGED``)."""
from __future__ import annotations

import numpy
import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.isolation.guard.guard_arguments import arguments_watch as _arguments

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _changed(args: list, kwargs: dict, change) -> tuple[str, list[int]]:
    """(kinds, mutated) the guard records for a call whose body is ``change(args, kwargs)``."""
    records = []
    watch = _arguments(lambda kind, **fields: records.append(fields))
    watch(("before", 7, args, kwargs))
    change(args, kwargs)
    watch(("after", 7))
    assert len(records) == 1 and records[0]["id"] == 7 and records[0]["problem"] == "", records
    return records[0]["kinds"], [int(i) for i in records[0]["mutated"].split(",") if i]


IN_PLACE = {  # each changes the first argument, a (3, 4) tensor, in place
    "a value written": lambda t: t[1, 2].add_(1),
    "the same values, another storage (set_)": lambda t: t.set_(t.clone().mul_(2)),
    "another tensor's data (.data)": lambda t: setattr(t, "data", t + 1),
    "resized past its storage": lambda t: t.resize_(5, 4),
    "transposed in place": lambda t: t.t_(),
    "a dimension added in place": lambda t: t.unsqueeze_(0),
    "its last bit flipped": lambda t: t.view(torch.int32)[2, 3].bitwise_xor_(1),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("how", list(IN_PLACE))
def test_a_tensor_changed_in_place_is_recorded(device, how):
    x, y = torch.randn(3, 4, device=device), torch.randn(2, device=device)
    kinds, mutated = _changed([x], {"y": y}, lambda a, k: IN_PLACE[how](a[0]))
    assert kinds == "tt" and mutated == [0]


@pytest.mark.parametrize("device", DEVICES)
def test_what_a_correct_answer_does_is_not_a_change(device):
    x = torch.randn(3, 4, device=device).t()  # not contiguous: the bytes it spans are read
    w = torch.nn.Parameter(torch.randn(4, device=device))

    def honest(args, kwargs):
        y = args[0].clone().add_(1)
        args[0].unsqueeze_(0).squeeze_(0)  # shape and strides as they were
        (kwargs["w"] @ y).sum().backward()  # a gradient on a parameter is not a change of its values
        return y

    assert _changed([x], {"w": w}, honest) == ("tt", [])


def test_arrays_and_containers():
    a, K = numpy.arange(6.0), torch.zeros(2)
    kinds, mutated = _changed([[K, 3], {"n": a}, {1, 2}, (K,)], {}, lambda args, kw: args[1]["n"].__setitem__(0, 9.0))
    assert kinds == "ctcncct" and mutated == [3]  # list, K, dict, array, set, tuple, K: the array changed
    assert _changed([[1, 2]], {}, lambda args, kw: args[0].append(3))[1] == [0]
    assert _changed([{"a": 1}], {}, lambda args, kw: args[0].__setitem__("a", 1000))[1] == [0]
    assert _changed([{1, 2}], {}, lambda args, kw: args[0].discard(2))[1] == [0]
    assert _changed([[torch.zeros(2)]], {}, lambda args, kw: args[0][0].add_(1))[1] == [1]  # the tensor, not its list
    assert _changed([[torch.zeros(2)], 5, "s"], {}, lambda args, kw: None) == ("ct", [])


class _Seen(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


class _SeenFunctions(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("device", DEVICES)
def test_the_picture_runs_nothing_the_student_left_on_torchs_stacks(device):
    """A dispatch mode or a function mode left on torch's stacks (which could rewrite what the guard
    reads) sees nothing of the picture: it reads raw memory, and copies from a GPU with both off."""
    x = torch.randn(3, 4, device=device)
    records = []
    watch = _arguments(lambda kind, **fields: records.append(fields))
    with _Seen() as dispatch, _SeenFunctions() as functions:
        watch(("before", 1, [x], {}))
        x.mul_(2)
        seen = (list(dispatch.ops), list(functions.calls))
        watch(("after", 1))
        assert (dispatch.ops, functions.calls) == seen  # the student's own mul_ only
    assert records[0]["mutated"] == "0"


def test_a_call_that_begins_twice_or_ends_unbegun_is_recorded():
    records = []
    watch = _arguments(lambda kind, **fields: records.append(fields))
    watch(("after", 3))
    watch(("before", 4, [], {}))
    watch(("before", 4, [], {}))
    watch(("after", 4))
    assert [r["problem"] for r in records] == ["a call ended that did not begin", "a call began before the last one ended"]
