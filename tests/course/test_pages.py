"""The page helpers the chapters import: ``from course import device`` is the device (a
``torch.device`` chosen by the course's one rule), not a module of the same name."""
from __future__ import annotations

import torch

import course
from course.device_rule import pick_device


def test_course_device_is_the_chosen_device():
    from course import device, pick_device as exported

    assert isinstance(device, torch.device) and device == pick_device()
    assert exported is pick_device and isinstance(course.device, torch.device)
