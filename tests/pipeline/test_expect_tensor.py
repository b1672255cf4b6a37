"""``expect_tensor`` compares a non-finite expected value as such (issue 25): an infinite
expected value used to accept any finite one (its tolerance, ``rtol * inf``, is infinite), so
a masked log-probability of -1e9 passed where -inf is the answer."""
from __future__ import annotations

import math

import pytest
import torch

from autograder.checking import Check, CheckFailure, LocalContext, expect_tensor

INF, NAN = math.inf, math.nan
CASES = [  # (expected, got, passes)
    ([0.5, -INF], [0.5, -INF], True),
    ([0.5, -INF], [0.5, -1e9], False),
    ([INF], [1e30], False),
    ([INF], [3.0], False),
    ([INF], [INF], True),
    ([-INF], [INF], False),
    ([NAN], [NAN], True),
    ([NAN], [0.0], False),
    ([1.0], [INF], False),
    ([1.0], [1.0 + 1e-6], True),
]


def _compare(expected, got):
    ctx = LocalContext(Check("00.x.values", lambda ctx: None, ("x",)), {})
    expect_tensor(ctx, torch.tensor(got), torch.tensor(expected), "log-probabilities", "x (2,)")


@pytest.mark.parametrize("expected, got, passes", CASES, ids=[f"{e}-{g}" for e, g, _ in CASES])
def test_non_finite_expected_values_compare_as_such(expected, got, passes):
    if passes:
        _compare(expected, got)
        return
    with pytest.raises(CheckFailure) as failure:
        _compare(expected, got)
    assert "log-probabilities failed on input x (2,)" in str(failure.value)


def test_the_message_says_what_matches_an_infinity():
    with pytest.raises(CheckFailure) as failure:
        _compare([0.5, -INF], [0.5, -1e9])
    text = str(failure.value)
    assert "value at (1,) is -1e+09, expected -inf" in text and "matched only by the same value" in text, text
