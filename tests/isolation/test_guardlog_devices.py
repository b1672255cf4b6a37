"""The device watch in the guard's records (issue 34, item 4; guard_devices.py ``devices_watch``, guardlog.py ``_watch``): a
probe's call is framed by the guard's ``watch`` records (on, then off with ``kept``), and each mixing operator the
watch found is a signed ``mixed`` record, which the grader reads instead of anything the kernel's reply says."""
from __future__ import annotations

from tests.isolation.test_guardlog import CALL, _frame, _started


def _watched(*records):
    log = _started()
    log.begin(dict(CALL, id=2, devices="meta"))
    log.feed(_frame(3, "state", id=2, up=["torch.softmax"], kernels=0))  # the call's acknowledgement (guardlog: required)
    for seq, (kind, fields) in enumerate(records, start=4):
        log.feed(_frame(seq, kind, **fields))
    return log.end()


def test_a_finding_is_the_guards_record():
    report = _watched(("watch", {"on": 1}), ("mixed", {"detail": "aten::mm.default with a tensor on the CPU"}),
                      ("watch", {"off": 1, "kept": 1}))
    assert report["problems"] == [] and report["watched"] is True
    assert report["mixed"] == ["aten::mm.default with a tensor on the CPU"]


def test_a_watch_removed_or_changed_is_tampering():
    report = _watched(("watch", {"on": 1}), ("watch", {"off": 1, "kept": 0}))
    assert report["problems"] == ["the code removed or changed the grader's watch on the devices of the tensors it computes with"]
    report = _watched(("watch", {"on": 0}), ("watch", {"off": 1, "kept": 1}))
    assert report["problems"] == ["the grader's device watch was changed, or not on torch's mode stack, when the call began"]


def test_a_watch_that_never_ends_is_tampering_and_a_finding_outside_a_watch_counts_for_nothing():
    report = _watched(("watch", {"on": 1}), ("mixed", {"detail": "x"}))
    assert report["problems"] == ["the grader's device watch never reported the end of the call"]
    assert report["watched"] is False
    report = _watched(("mixed", {"detail": "x"}))
    assert "mixed" not in report and "watched" not in report, report  # decide.py: a probe without the watch's records is untrusted
