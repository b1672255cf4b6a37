"""What a check hands to student code in the sandbox arrives as the check made it: tensors
keep their layout (strides, non-contiguous views, expanded dimensions), dtype and device;
the two library objects a check may send travel as data and arrive equivalent (a seeded
torch.Generator and a plain nn.MultiheadAttention)."""
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


LAYOUTS = {
    "transposed": lambda: torch.randn(2, 3, 4).transpose(1, 2),  # as split_heads returns it
    "permuted": lambda: torch.randn(2, 3, 4, 5).permute(0, 2, 1, 3),
    "sliced": lambda: torch.randn(6, 8)[::2, 1::3],
    "expanded": lambda: torch.randn(3)[None].expand(4, 3),
    "offset": lambda: torch.arange(12).view(3, 4)[1:, 2:],
    "empty transposed": lambda: torch.empty(0, 3).t(),
    "scalar": lambda: torch.tensor(2.5),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_tensor_layout_travels(name):
    """Shape, strides, contiguity and values arrive as sent (a check's non-contiguous input
    must reach the student's code non-contiguous, as under plain nbgrader)."""
    x = LAYOUTS[name]()
    y = _roundtrip(x)
    assert type(y) is torch.Tensor
    assert (y.shape, y.stride(), y.is_contiguous()) == (x.shape, x.stride(), x.is_contiguous()), f"{name}: layout changed on the wire"
    assert torch.equal(y, x), f"{name}: values changed on the wire"


def test_sparse_slice_is_compacted_in_dimension_order():
    """A view that spans far more memory than it holds is not sent whole: it arrives dense,
    keeping the order of its dimensions (a transposed slice stays non-contiguous)."""
    x = torch.randn(400, 400)[::100, ::50].t()  # 8 x 4 elements spanning 120,000
    payload = wire.encode(x, torch=torch)
    assert len(payload["data"]) < 4 * 8 * 4 * 2, "the sparse slice's whole span was sent"
    y = _roundtrip(x)
    assert torch.equal(y, x) and not y.is_contiguous() and y.stride() == (1, 8)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.bool, torch.complex64])
def test_dtype_travels_with_layout(dtype):
    x = (torch.randn(3, 5) * 3).to(dtype).t()
    y = _roundtrip(x)
    assert y.dtype == dtype and y.stride() == x.stride() and torch.equal(y, x)


def test_grad_and_parameter_travel():
    p = torch.nn.Parameter(torch.randn(3, 4, dtype=torch.float64))
    y = _roundtrip(p.t())
    assert y.requires_grad and y.is_leaf and y.stride() == (1, 4)
    q = _roundtrip(p)
    assert type(q) is torch.nn.Parameter and q.requires_grad


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_device_travels_with_layout():
    x = torch.randn(4, 6, device="cuda").t()
    payload = json.loads(json.dumps(wire.encode(x, torch=torch)))
    y = wire.decode(payload, torch=torch, device_ok=lambda d: True)
    assert y.device.type == "cuda" and y.stride() == x.stride() and torch.equal(y, x)


@pytest.mark.parametrize("change", [
    {"stride": [1, 1 << 40]},  # a span the data does not cover
    {"stride": [1]},  # fewer strides than dimensions
    {"stride": [-1, 2]},  # negative stride
    {"stride": [1 << 63, 1]},  # out of range
    {"shape": [2, 1 << 62], "stride": [0, 0]},
])
def test_lying_layout_is_refused(change):
    """Strides are checked against the bytes that came before anything is allocated."""
    payload = json.loads(json.dumps(wire.encode(torch.randn(2, 3).t(), torch=torch)))
    payload.update(change)
    with pytest.raises(wire.WireError):
        wire.decode(payload, torch=torch)
