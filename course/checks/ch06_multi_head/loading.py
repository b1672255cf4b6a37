"""ch06_multi_head: the checks of load_torch_weights."""
import torch
import torch.nn as nn

from autograder.checking import check, expect_equal, expect_tensor

from .shared import A
from .attention import PROJECTIONS, _module


# ---------------------------------------------------------------- load_torch_weights
def _random_reference(ctx, d_model, num_heads, bias=True):
    """nn.MultiheadAttention on the device with random weights and (non-zero) biases."""
    ref = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True)
    with torch.no_grad():
        for p in ref.parameters():
            p.copy_(torch.randn(p.shape, generator=ctx.gen, dtype=torch.float64).to(p.dtype) * 0.5)
    return ref.to(ctx.device)


def _load(ctx, module, reference):
    """load_torch_weights(module, reference), which returns None (the sandbox rebuilds the reference from its weights)."""
    got = ctx.call("load_torch_weights", module, reference)
    expect_equal(ctx, got, None, "load_torch_weights returns None", f"d_model={reference.embed_dim}, num_heads={reference.num_heads}")


def _reference_params(reference):
    d = reference.embed_dim
    w = reference.in_proj_weight.detach().to("cpu", torch.float64)
    b = None if reference.in_proj_bias is None else reference.in_proj_bias.detach().to("cpu", torch.float64)
    params = {}
    for i, name in enumerate(("q_proj", "k_proj", "v_proj")):
        params[name] = (w[i * d : (i + 1) * d], None if b is None else b[i * d : (i + 1) * d])
    ob = reference.out_proj.bias
    params["out_proj"] = (reference.out_proj.weight.detach().to("cpu", torch.float64), None if ob is None else ob.detach().to("cpu", torch.float64))
    return params


def _module_tensor(ctx, module, path, inputs):
    try:
        t = ctx.attr(module, path)
    except AttributeError as exc:
        ctx.fail(f"the module has {path}", f"it could not be read ({exc})", inputs)
    return t


@check(f"{A}.load_torch_weights.values", "load_torch_weights")
def load_values(ctx):
    """After loading, q/k/v_proj hold the row blocks of in_proj_weight/bias and out_proj the reference's out_proj."""
    for d_model, h, bias in [(8, 2, True), (12, 3, True), (6, 1, False), (16, 8, True)]:
        module = _module(ctx, d_model, h, bias=bias)
        reference = _random_reference(ctx, d_model, h, bias)
        _load(ctx, module, reference)
        expected = _reference_params(reference)
        inputs = f"nn.MultiheadAttention({d_model}, {h}, bias={bias})"
        for name in PROJECTIONS:
            for part, e in (("weight", expected[name][0]), ("bias", expected[name][1])):
                if e is None:
                    continue
                g = _module_tensor(ctx, module, f"{name}.{part}", inputs)
                if isinstance(g, torch.Tensor):
                    g = torch.Tensor.detach(g)
                block = "in_proj" if name != "out_proj" else "out_proj"
                expect_tensor(ctx, g, e.to(ctx.device, torch.float32), f"{name}.{part} holds the reference's {block} {part} block", inputs, atol=1e-7, check_dtype=False)


@check(f"{A}.load_torch_weights.in_place", "load_torch_weights")
def load_in_place(ctx):
    """The module keeps its own Parameter objects and memory: values are copied, not replaced or aliased."""
    for d_model, h, bias in [(8, 2, True), (6, 3, False)]:
        module = _module(ctx, d_model, h, bias=bias)
        inputs = f"MultiHeadSelfAttention({d_model}, {h}, bias={bias}), nn.MultiheadAttention({d_model}, {h}, bias={bias})"
        parts = ("weight", "bias") if bias else ("weight",)
        before = {}
        for name in PROJECTIONS:
            for part in parts:
                p = _module_tensor(ctx, module, f"{name}.{part}", inputs)
                before[f"{name}.{part}"] = (p, ctx.method(p, "data_ptr"))
        reference = _random_reference(ctx, d_model, h, bias)
        _load(ctx, module, reference)
        for key, (p, ptr) in before.items():
            name, part = key.split(".")
            now = _module_tensor(ctx, module, key, inputs)
            now_ptr = ctx.method(now, "data_ptr")
            if now_ptr != ptr:
                ctx.fail(f"{key} keeps its own memory (copy values into the existing parameter with param.copy_)",
                         "after loading it points to other memory: the parameter or its .data was replaced (or now shares the reference's memory)", inputs)
            # the Parameter object the module had before loading is still the one it uses
            expect_tensor(ctx, ctx.method(p, "detach"), ctx.method(now, "detach"), f"the {key} Parameter object the module had before loading is the one it holds now (values copied in, not replaced)", inputs, atol=0.0, rtol=0.0)


@check(f"{A}.load_torch_weights.errors", "load_torch_weights")
def load_errors(ctx):
    """ValueError when the reference has another d_model or another number of heads."""
    for (d_model, h), (rd, rh) in [((8, 2), (8, 4)), ((8, 2), (12, 2)), ((6, 3), (6, 1))]:
        module = _module(ctx, d_model, h)
        reference = _random_reference(ctx, rd, rh)
        raised = ctx.raised("load_torch_weights", module, reference)
        prop = f"ValueError when loading nn.MultiheadAttention({rd}, {rh}) into MultiHeadSelfAttention({d_model}, {h})"
        if raised != "ValueError":
            ctx.fail(prop, "returned" if raised is None else f"raised {raised}")
