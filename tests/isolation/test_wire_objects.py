"""The two library objects a check may hand to student code in the sandbox travel as data
and arrive equivalent: a seeded torch.Generator and a plain nn.MultiheadAttention."""
from __future__ import annotations

import json

import pytest
import torch

from autograder.isolation import wire


def _roundtrip(value):
    return wire.decode(json.loads(json.dumps(wire.encode(value, torch=torch))), torch=torch)


def test_generator_arrives_in_the_same_state():
    gen = torch.Generator().manual_seed(1234)
    torch.randn(5, generator=gen)  # not a fresh state
    copy = _roundtrip(gen)
    assert type(copy) is torch.Generator
    assert torch.equal(torch.randn(7, generator=copy), torch.randn(7, generator=gen))


@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_arrives_with_its_weights(bias):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(8, 2, bias=bias, batch_first=True).double().eval()
    copy = _roundtrip(ref)
    assert type(copy) is torch.nn.MultiheadAttention and copy.batch_first and not copy.training
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    assert torch.equal(copy(x, x, x)[0], ref(x, x, x)[0])


def test_other_objects_still_refused():
    with pytest.raises(wire.WireError):
        wire.encode(torch.nn.Linear(2, 2), torch=torch)
    odd = torch.nn.MultiheadAttention(8, 2, add_bias_kv=True)
    with pytest.raises(wire.WireError):
        wire.encode(odd, torch=torch)
