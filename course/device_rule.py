"""The course's one rule for choosing a device, written once.

Every chapter page (``course.pages.device``), every notebook's setup cell (its text is this
function's source) and the grader's checks use it: the checks package hands it to the check
framework (``course.checks.DEVICE_RULE``), which imports nothing of the course. It imports
nothing but torch, so the course edition (which ships this file without the grader) can use it.
"""
from __future__ import annotations

import os

import torch


def pick_device() -> torch.device:
    """$COURSE_DEVICE if set, else CUDA, then Apple's MPS, then the CPU."""
    if os.environ.get("COURSE_DEVICE"):
        return torch.device(os.environ["COURSE_DEVICE"])
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
