"""The grader's reading of the kernel's guard (autograder/isolation/guard/guardlog.py), fed frames as the
guard writes them: a key first, then numbered records authenticated with it. Whatever the record
stream lacks or adds (a late key, a bad MAC, a replay, the guard down around a graded call) is a
problem the grader reports as tampering; hits and refusals belong to the request they came in."""
from __future__ import annotations

import hashlib
import hmac

from autograder.isolation.guard.guardlog import GuardLog, is_record

KEY = bytes(range(32))
CALL = {"op": "call", "forbidden": ["torch.softmax"]}


def _frame(seq: int, kind: str, mac_key: bytes | None = KEY, **fields) -> bytes:
    parts = [f'"seq":{seq}', f'"kind":"{kind}"']
    for name, value in fields.items():
        if isinstance(value, int):
            parts.append(f'"{name}":{value}')
        elif isinstance(value, list):
            parts.append(f'"{name}":[' + ",".join(f'"{v}"' for v in value) + "]")
        else:
            parts.append(f'"{name}":"{value}"')
    body = ("{" + ",".join(parts) + "}").encode()
    mac = hmac.new(mac_key, body, hashlib.sha256).hexdigest() if mac_key is not None and kind != "key" else "0" * 64
    return b'{"guard":' + body + b',"mac":"' + mac.encode() + b'"}'


def _started() -> GuardLog:
    log = GuardLog()
    log.begin({"op": "hello"})
    log.feed(_frame(1, "key", mac_key=None, key=KEY.hex()))
    log.feed(_frame(2, "state", id=0, up=["torch.softmax"], kernels=3))
    assert log.end() == {"problems": [], "hits": [], "refused": []}
    return log


def test_an_honest_call_has_nothing_to_report():
    log = _started()
    log.begin(dict(CALL, id=2))
    log.feed(_frame(3, "state", id=2, up=["torch.softmax"], kernels=3))
    log.feed(_frame(4, "hit", routine="torch.softmax", op="aten::_softmax"))
    log.feed(_frame(5, "args", id=2, kinds="tt", mutated="1", problem=""))
    log.feed(_frame(6, "state", id=2, up=["torch.softmax"], kernels=3))
    assert log.end() == {"problems": [], "hits": ["torch.softmax (reached as aten::_softmax)"], "refused": [],
                         "arguments": {"kinds": "tt", "mutated": [1]}}
    assert is_record(_frame(3, "hit")) and not is_record(b'{"id":3}')


def test_a_calls_arguments_are_recorded_once_for_that_call():
    """The guard's record of what a call changed in place (guard_arguments.arguments_watch): exactly one, for this
    request; none (the call never began) is None, which the grader takes as tampering for an answered
    call; two, another request's, or one the guard flagged is tampering here."""
    log = _started()
    log.begin(dict(CALL, op="call", forbidden=[], id=2))
    assert log.end() == {"problems": [], "hits": [], "refused": [], "arguments": None}
    seq = 3
    cases = [  # (the records' request ids and problems, the request's own id, the grader's reading)
        ([(10, ""), (10, "")], 10, "the guard saw the call's arguments 2 times"),
        ([(10, "")], 11, "the guard recorded another call's arguments"),
        ([(12, "a call ended that did not begin")], 12, "the guard's record of the call's arguments says: a call ended that did not begin"),
    ]
    for records, request, problem in cases:
        log.begin(dict(CALL, forbidden=[], id=request))
        for record_id, flagged in records:
            log.feed(_frame(seq, "args", id=record_id, kinds="t", mutated="", problem=flagged))
            seq += 1
        report = log.end()
        assert report["problems"] == [problem] and report["arguments"] is None, report


def test_a_record_with_a_mac_from_another_key_is_forged():
    log = _started()
    log.begin(dict(CALL, id=2))
    log.feed(_frame(3, "state", mac_key=b"\x01" * 32, id=2, up=[], kernels=0))
    report = log.end()
    assert report["problems"] == ["a guard record the guard did not write (forged)"], report
    assert log.up == frozenset({"torch.softmax"}), "a forged record changes nothing"


def test_a_replayed_or_skipped_record_is_out_of_order():
    log = _started()
    log.begin(dict(CALL, id=2))
    log.feed(_frame(2, "state", id=0, up=["torch.softmax"], kernels=3))  # the same bytes again
    assert log.end()["problems"] == ["guard records out of order or replayed"]


def test_a_late_key_is_refused():
    log = _started()
    log.begin(dict(CALL, id=2))
    log.feed(_frame(3, "key", mac_key=None, key=(b"\x02" * 32).hex()))
    assert "late guard key" in log.end()["problems"][0]


def test_the_guard_down_when_the_call_began_or_lowered_during_it():
    log = _started()
    log.begin({"op": "run", "id": 2})
    log.feed(_frame(3, "state", id=2, up=[], kernels=0))  # a cell: the runner lowers the guard ...
    assert log.end()["problems"] == []  # (allowed for cells) ... and leaves it down: the next call raises it
    log.begin(dict(CALL, id=3))
    log.feed(_frame(4, "state", id=3, up=[], kernels=0))  # the call's own acknowledgement, without its routine
    assert log.end()["problems"] == ["the grader's guard on torch.softmax was down when the call began"]
    log = _started()
    log.begin(dict(CALL, id=2))
    log.feed(_frame(3, "state", id=2, up=["torch.softmax"], kernels=3))
    log.feed(_frame(4, "state", id=2, up=[], kernels=0))
    assert log.end()["problems"] == ["the grader's guard on torch.softmax was down during the call"]


def test_a_call_the_guard_never_acknowledged_is_tampering():
    """The runner raises the call's routines before it reads the call (kernel_runner.op_call); a reply
    without that acknowledgement, numbered with the call's id, came from code that skipped it. The guard
    being up already (from an earlier call) is not enough, nor is a record numbered for another request."""
    log = _started()
    log.begin(dict(CALL, id=2))
    assert log.end()["problems"] == ["the grader's guard never took up torch.softmax for the call"]
    log.begin(dict(CALL, id=3))
    log.feed(_frame(3, "state", id=2, up=["torch.softmax"], kernels=0))
    assert log.end()["problems"] == ["the grader's guard never took up torch.softmax for the call"]
    log.begin({"op": "has", "id": 4})  # requests that call nothing need no acknowledgement
    assert log.end()["problems"] == []


def test_a_kernel_without_a_key_has_no_guard():
    log = GuardLog()
    log.begin({"op": "hello"})
    log.end()
    log.begin(dict(CALL, id=2))
    assert log.end()["problems"] == ["the kernel's guard never started"]


def test_refusals_belong_to_their_request():
    log = _started()
    log.begin(dict(CALL, id=2))
    log.feed(_frame(3, "refused", event="sys._getframe", detail=""))
    assert log.end()["refused"] == ["sys._getframe"]
    log.begin(dict(CALL, id=3))
    assert log.end()["refused"] == []
