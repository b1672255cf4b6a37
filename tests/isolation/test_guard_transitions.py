"""What the kernel's guard (guard.py) changes at torch's dispatcher between requests, read from its own
signed state records as the grader receives them: the calls of one check register no dispatcher kernel
(the runner leaves the call's routines up after the reply, issue 36: raising the notebook's whole list
after each call re-registered hundreds of kernels per call, most of a graded call's cost), and a call
after a cell, which left the guard down, still starts with its routines up and refuses them."""
from __future__ import annotations

import json

import numpy
import pytest
import torch

from autograder.isolation import Kernel, Limits, sandbox_problem, wire
from autograder.isolation.guard import guardlog

NOTEBOOK = ["torch.softmax", "torch.Tensor.backward"]  # the notebook's whole list (the kernel's GUARDED)
CHECK = ["torch.softmax"]  # one check's


@pytest.fixture
def kernel():
    assert sandbox_problem() is None, sandbox_problem()
    k = Kernel(None, Limits(cell_timeout=30), forbidden=NOTEBOOK)
    k.start()
    states: list[dict] = []
    feed = k.guard.feed

    def reading(payload: bytes) -> None:  # the grader's own copy of each state record, then GuardLog as ever
        record = json.loads(payload[len(guardlog.HEAD):-guardlog._TAIL])
        if record.get("kind") == "state":
            states.append(record)
        feed(payload)

    k.guard.feed = reading
    k.states = states
    yield k
    k.stop()


def _request(kernel, message: dict) -> tuple[dict, list[dict]]:
    kernel.states.clear()
    reply = kernel.request(message, 30)
    assert reply["guard"]["problems"] == [], reply["guard"]
    return reply, list(kernel.states)


def _call(name: str, *values) -> dict:
    return {"op": "call", "name": name, "args": wire.encode(list(values), torch=torch, numpy=numpy),
            "kwargs": wire.encode({}, torch=torch, numpy=numpy), "forbidden": CHECK, "grad": True}


def test_the_calls_of_one_check_register_nothing(kernel):
    _request(kernel, {"op": "run", "code": "def f(n):\n    return n + 1\n", "interactive": False})
    reply, first = _request(kernel, _call("f", 1))
    assert reply["status"] == "ok" and reply["value"] == 2, reply
    assert [(s["id"], s["up"]) for s in first] == [(kernel._next_id, CHECK)], first  # the call's acknowledgement only
    for n in (2, 3):
        reply, states = _request(kernel, _call("f", n))
        assert reply["value"] == n + 1, reply
        assert [(s["id"], s["up"], s["kernels"]) for s in states] == [(kernel._next_id, CHECK, 0)], states


def test_a_call_after_a_cell_starts_with_its_routines_up(kernel):
    code = "import torch\ndef g(x):\n    return torch.ops.aten._softmax.default(x, -1, False)\ny = torch.softmax(torch.ones(3), 0)\n"
    reply, states = _request(kernel, {"op": "run", "code": code, "interactive": False})
    assert reply["status"] == "ok", reply  # a cell may use any routine ...
    assert [s["up"] for s in states] == [[]], states  # ... and leaves the guard down
    reply, states = _request(kernel, _call("g", torch.ones(3)))
    assert states[0]["up"] == CHECK and states[0]["kernels"] > 0, states
    assert reply["guard"]["hits"] == ["torch.softmax (reached as aten::_softmax)"], reply["guard"]
