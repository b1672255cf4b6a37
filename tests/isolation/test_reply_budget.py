"""What a kernel sends is bounded by the grader's work, not only by its bytes: each attack
below is built small but real, and the grader's cost (CPU time of this process, peak
Python memory) must stay within a stated budget while the student gets a reason.

Budgets are generous (seconds, tens of MB) so that a loaded 2-core CI machine passes; the
attacks they stand for cost minutes and gigabytes without the limits."""
from __future__ import annotations

import collections
import json
import time

import pytest
import torch

from autograder.isolation import Kernel, KernelError, Limits, sandbox_problem, wire
from tests.support.cost import assert_within_budget, grader_cost

CPU_BUDGET_S = 2.0
MEMORY_BUDGET_MB = 64


def _within_budget(cost, what):
    assert_within_budget(cost, what, CPU_BUDGET_S, MEMORY_BUDGET_MB)


def _frame_of_empty_dicts(n: int, reply_id: int = 1) -> bytes:
    return b'{"id":%d,"status":"ok","value":[' % reply_id + b"{}," * (n - 1) + b"{}]}"


# --------------------------------------------------------------------------- the scan, alone
def test_many_values_are_refused_before_parsing():
    frame = _frame_of_empty_dicts(200_000)
    with grader_cost() as cost, pytest.raises(wire.WireError, match="more than 100000 values"):
        wire.scan_frame(frame, max_objects=100_000, max_depth=200)
    _within_budget(cost, "a frame of 200,000 empty dicts")


def test_deep_nesting_is_refused_before_parsing():
    frame = b'{"id":1,"value":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with grader_cost() as cost, pytest.raises(wire.WireError, match="nests 100001 levels deep"):
        wire.scan_frame(frame, max_objects=1_000_000, max_depth=200)
    _within_budget(cost, "a 100,000-deep nesting")


def test_brackets_inside_strings_are_not_structure():
    """Text full of brackets and commas (a printed tensor, an escaped quote) counts as one value."""
    text = 'tensor([[1., 2.], [3., 4.]]) \\" [[[{{{' * 10_000
    frame = json.dumps({"id": 1, "outputs": [{"text": text}]}).encode()
    assert wire.scan_frame(frame, max_objects=20, max_depth=4) <= 20


def test_honest_replies_pass_the_default_limits():
    """A reply with tensors, a vocabulary, a state dict and a value nested to the wire's
    own depth limit is under the default limits, and counted without an error."""
    limits = Limits()
    nested = 0
    for _ in range(wire.MAX_DEPTH // 2 - 2):
        nested = {"k": (nested,)}  # a dict holding a tuple: the deepest JSON per wire level
    value = {
        "vocab": {f"w{i}": i for i in range(20_000)},
        "weights": collections.OrderedDict((f"layer{i}.weight", torch.randn(16, 16).t()) for i in range(8)),
        "nested": nested,
    }
    frame = json.dumps({"id": 1, "status": "ok", "value": wire.encode(value, torch=torch)}).encode()
    assert wire.scan_frame(frame, limits.reply_values, limits.reply_depth) < limits.reply_values


def test_a_reply_out_of_turn_is_refused_unparsed():
    frame = _frame_of_empty_dicts(20_000_000, reply_id=7)  # 60 MB
    with grader_cost() as cost:
        assert not wire.reply_id_matches(frame, 1)
    assert cost["cpu"] < 0.5, f"checking the id of a 60 MB frame took {cost['cpu']:.2f} s"
    assert wire.reply_id_matches(b'{"id":12,"x":1}', 12) and not wire.reply_id_matches(b'{"id":12,"x":1}', 1)
    assert not wire.reply_id_matches(b'{"status":"ok","id":1}', 1), "the id must come first"


# --------------------------------------------------------------------------- decoding without hashing
P = (1 << 61) - 1  # every multiple of the hash modulus hashes to 0


def test_a_set_of_colliding_hashes_is_not_built():
    """200,000 integers that all hash to 0: built into a set they cost minutes (quadratic,
    holding the GIL); decoded, they come back as a list that no hash table ever saw."""
    items = [k * P for k in range(1, 200_001)]
    with grader_cost() as cost:
        got = wire.decode({"$": "set", "items": items})
    _within_budget(cost, "a set of 200,000 colliding hashes")
    assert type(got) is wire.Unhashed and got.kind == "set" and len(got) == 200_000
    keys = wire.decode({"$": "dict", "items": [[{"$": "tuple", "items": [k]}, 0] for k in items[:1000]]})
    assert type(keys) is wire.Unhashed and keys.kind == "dict" and keys.items[0] == ((P,), 0)


def test_sets_and_dicts_of_strings_and_small_ints_are_rebuilt():
    """What honest answers return (vocabularies, sets of words or ids) keeps its type."""
    value = {"vocab": {"a": 0, "b": 1}, "ids": {1, 2, -3}, "words": frozenset({"x"}), "flags": {True: None}}
    back = wire.decode(json.loads(json.dumps(wire.encode(value))))
    assert back == value and type(back["ids"]) is set and type(back["words"]) is frozenset


def test_the_kernel_side_still_builds_what_the_grader_sends():
    back = wire.decode(wire.encode({(1, 2): {2.5, (3,)}}), hashing=True)
    assert back == {(1, 2): {2.5, (3,)}}


def test_decoding_stops_at_its_deadline():
    with pytest.raises(wire.WireError, match="deadline"):
        wire.decode([[{"$": "tuple", "items": []}]] * 10, deadline=time.monotonic() - 1)


# --------------------------------------------------------------------------- a real kernel
@pytest.fixture
def kernel():
    assert sandbox_problem() is None, sandbox_problem()
    k = Kernel(None, Limits(cell_timeout=60, reply_values=100_000))
    k.start()
    yield k
    k.stop()


FORGE = """
import os, struct
body = b'{"id":%d,"status":"ok","outputs":[' % REPLY_ID + b"{}," * 199_999 + b"{}]}"
for fd in range(3, 64):
    try:
        os.write(fd, struct.pack(">Q", len(body)) + body)
    except OSError:
        pass
"""


def test_a_forged_reply_over_the_limits_stops_that_kernel_cheaply(kernel):
    code = FORGE.replace("REPLY_ID", str(kernel._next_id + 1))  # the id the grader expects
    with grader_cost() as cost, pytest.raises(KernelError) as info:
        kernel.request({"op": "run", "code": code}, 60)
    _within_budget(cost, "a forged reply of 200,000 empty dicts")
    assert info.value.kind == "protocol" and "more than 100000 values" in info.value.reason, info.value.reason


def test_display_of_many_empty_dicts_is_dropped_by_size_and_the_kernel_goes_on(kernel):
    code = "from IPython.display import display\ndisplay({'application/json': [{}] * 1_000_000}, raw=True)\nprint('after')"
    with grader_cost() as cost:
        reply = kernel.request({"op": "run", "code": code}, 60)
    _within_budget(cost, "display() of 1,000,000 empty dicts")
    assert reply["status"] == "ok" and reply["dropped"] >= 1
    assert [o["output_type"] for o in reply["outputs"]] == ["stream"], "the oversized display data was kept"
    assert kernel.request({"op": "run", "code": "1 + 1"}, 30)["status"] == "ok"
