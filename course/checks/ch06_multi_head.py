"""Hidden checks for 06-multi-head.

Ground truths: ``reshape`` + ``transpose`` for the head split and merge; the
per-head maps stacked by rows for ``stack_head_projections``;
``torch.nn.MultiheadAttention`` (batch_first, per-head weights, float64 on the CPU)
holding weights the grader chose. Truths never come from the student's state: every
check that runs the module first copies grader-drawn values into its ``q_proj``,
``k_proj``, ``v_proj`` and ``out_proj`` (in place, through ``ctx.method(param,
"copy_", ...)``), so a module that zeroes or otherwise rigs its own weights gains
nothing, and one that does not follow its weights fails. Masks are checked as
properties of the same module (masked keys get 0, the others keep their unmasked
proportions), so a wrong scale is reported once, by the clause about values.
"""
import math

import torch
import torch.nn as nn

from autograder.checking import Clause, check, describe, expect_equal, expect_tensor

A = ASSIGNMENT = "06"
CONTRACT = ["split_heads", "merge_heads", "MultiHeadSelfAttention", "load_torch_weights", "stack_head_projections"]
MHSA_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)

CLAUSES = [
    Clause(f"{A}.split_heads.values", "split_heads",
           "`split_heads(x, num_heads)` maps `(B, N, H*Dh)` to `(B, H, N, Dh)` with `[b, h, n]` equal to "
           "`x[b, n, h*Dh:(h+1)*Dh]`, for any sizes (also 1) and for contiguous or non-contiguous `x`, keeping its dtype."),
    Clause(f"{A}.split_heads.errors", "split_heads",
           "`split_heads` raises `ValueError` when `num_heads < 1` or the last dimension is not divisible by `num_heads`."),
    Clause(f"{A}.split_heads.device", "split_heads", "`split_heads` returns its result on the device of `x`."),
    Clause(f"{A}.merge_heads.values", "merge_heads",
           "`merge_heads(x)` maps `(B, H, N, Dh)` to `(B, N, H*Dh)`, the inverse of `split_heads` (token n's features "
           "`h*Dh:(h+1)*Dh` come from head h), for contiguous or non-contiguous (transposed) `x`, keeping its dtype."),
    Clause(f"{A}.merge_heads.device", "merge_heads", "`merge_heads` returns its result on the device of `x`."),
    Clause(f"{A}.MultiHeadSelfAttention.parameters", "MultiHeadSelfAttention",
           "`MultiHeadSelfAttention(d_model, num_heads, bias=True)` has `q_proj`, `k_proj`, `v_proj`, `out_proj`, each "
           "`nn.Linear(d_model, d_model, bias=bias)` (bias by default), and nothing else in its `state_dict()`."),
    Clause(f"{A}.MultiHeadSelfAttention.errors", "MultiHeadSelfAttention",
           "`MultiHeadSelfAttention` raises `ValueError` when `d_model` is not divisible by `num_heads`."),
    Clause(f"{A}.MultiHeadSelfAttention.values", "MultiHeadSelfAttention",
           "With weights the grader copies into its four projections, `forward(x)` returns the tensor "
           "`Concat(head_1, ..., head_H) W_O` of shape `(B, N, d_model)` with "
           "$\\operatorname{head}_h = \\operatorname{softmax}(Q_h K_h^\\top / \\sqrt{D_h}) V_h$, and "
           "`forward(x, return_weights=True)` the pair `(output, weights)` with every head's weights `(B, H, N, N)`, "
           "both as `nn.MultiheadAttention(..., average_attn_weights=False)` holding the same weights (with or without bias).",
           (f"{A}.MultiHeadSelfAttention.values", f"{A}.MultiHeadSelfAttention.weights")),
    Clause(f"{A}.MultiHeadSelfAttention.batch_independent", "MultiHeadSelfAttention",
           "A sentence's output is the same alone, in a batch, whatever the other sentences are, and wherever it sits in the batch."),
    Clause(f"{A}.MultiHeadSelfAttention.mask", "MultiHeadSelfAttention",
           "`mask` (`True` = may attend) of shape `(N, N)`, `(B, 1, 1, N)`, `(B, 1, N, N)` or `(B, H, N, N)` gives every "
           "masked key weight exactly 0 and leaves the other keys' weights in their unmasked proportions, in every head."),
    Clause(f"{A}.MultiHeadSelfAttention.fully_masked", "MultiHeadSelfAttention",
           "A query that may attend to nothing (in one head or in all) gets zero weights in that head, and no output or weight is `NaN`."),
    Clause(f"{A}.MultiHeadSelfAttention.dtype", "MultiHeadSelfAttention",
           "After `.double()`, a float64 `x` gives a float64 output and float64 weights (the module also works in float32)."),
    Clause(f"{A}.MultiHeadSelfAttention.gradients", "MultiHeadSelfAttention",
           "Backpropagating from the output reaches every weight and bias of `q_proj`, `k_proj`, `v_proj` and `out_proj`."),
    Clause(f"{A}.MultiHeadSelfAttention.unchanged", "MultiHeadSelfAttention",
           "`forward` leaves `x` and `mask` unchanged (no in-place operation on its inputs)."),
    Clause(f"{A}.load_torch_weights.values", "load_torch_weights",
           "`load_torch_weights(module, reference)` returns `None` and leaves `q_proj`, `k_proj`, `v_proj` holding the query, "
           "key and value row blocks of `in_proj_weight` (and `in_proj_bias`), `out_proj` the reference's `out_proj`, with or without bias."),
    Clause(f"{A}.load_torch_weights.in_place", "load_torch_weights",
           "`load_torch_weights` copies values into the module's existing parameters: the same `Parameter` objects, "
           "in their own memory (not replaced, not sharing memory with the reference)."),
    Clause(f"{A}.load_torch_weights.errors", "load_torch_weights",
           "`load_torch_weights` raises `ValueError` when the reference has another `d_model` (`embed_dim`) or another number of heads."),
    Clause(f"{A}.stack_head_projections.values", "stack_head_projections",
           "`stack_head_projections(per_head)` turns a list of H matrices `W_h` of shape `(d_model, d_head)` into the "
           "`nn.Linear` weight `W` of shape `(H*d_head, d_model)` with `split_heads(x @ W.T, H)[:, h] == x @ W_h` for every "
           "head h (also H = 1 or d_head = 1), keeping the dtype."),
    Clause(f"{A}.stack_head_projections.unchanged", "stack_head_projections",
           "`stack_head_projections` leaves the matrices in `per_head` unchanged."),
    Clause(f"{A}.stack_head_projections.device", "stack_head_projections",
           "`stack_head_projections` returns `W` on the device of the matrices in `per_head`."),
    Clause(f"{A}.stack_head_projections.errors", "stack_head_projections",
           "`stack_head_projections` raises `ValueError` for an empty list or matrices of different shapes."),
]


# ---------------------------------------------------------------- split_heads / merge_heads
def _split_truth(x, h):
    B, N, D = x.shape
    return x.reshape(B, N, h, D // h).transpose(1, 2)  # (B, H, N, Dh)


def _merge_truth(x):
    B, H, N, Dh = x.shape
    return x.transpose(1, 2).reshape(B, N, H * Dh)


SPLIT_SHAPES = [(2, 3, 2, 4), (1, 1, 3, 2), (3, 5, 4, 1), (2, 4, 1, 6), (1, 7, 8, 4), (4, 2, 3, 3)]  # (B, N, H, Dh)


@check(f"{A}.split_heads.values", "split_heads")
def split_heads_values(ctx):
    """Head h of token n is x[b, n, h*Dh:(h+1)*Dh]; shapes incl. B, N, H or Dh = 1; non-contiguous x; dtype kept."""
    for B, N, H, Dh in SPLIT_SHAPES:
        x = ctx.randn(B, N, H * Dh)
        expect_tensor(ctx, ctx.call("split_heads", x.clone(), H), _split_truth(x, H), "split_heads gives (B, H, N, Dh), head h = features h*Dh:(h+1)*Dh", f"x {describe(x)}, num_heads {H}")
    for B, N, H, Dh in SPLIT_SHAPES[:3]:
        t = ctx.randn(B, H * Dh, N).transpose(1, 2)  # (B, N, H*Dh), not contiguous
        expect_tensor(ctx, ctx.call("split_heads", t, H), _split_truth(t, H), "split_heads accepts a non-contiguous x", f"x {describe(t)} (non-contiguous), num_heads {H}")
    x = ctx.randn(2, 3, 6, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("split_heads", x.clone(), 3), _split_truth(x, 3), "float64 input keeps float64", f"x {describe(x)}, num_heads 3")
    ids = ctx.randint(0, 100, (2, 4, 6))
    expect_tensor(ctx, ctx.call("split_heads", ids.clone(), 2), _split_truth(ids, 2), "integer input keeps its dtype", f"x {describe(ids)}, num_heads 2")


@check(f"{A}.split_heads.errors", "split_heads")
def split_heads_errors(ctx):
    """ValueError when the last dimension is not divisible by num_heads (or num_heads < 1)."""
    for shape, h in [((2, 3, 10), 4), ((1, 1, 6), 4), ((2, 2, 3), 2), ((1, 4, 5), 3), ((2, 3, 4), 0)]:
        ctx.expect_raises(ValueError, f"ValueError for last dimension {shape[-1]} and num_heads {h}", "split_heads", ctx.randn(*shape), h)


@check(f"{A}.split_heads.device", "split_heads")
def split_heads_device(ctx):
    """The result stays on x's device (probed with meta tensors standing in for a GPU)."""
    ctx.probe_device("split_heads", ctx.randn(2, 3, 6), 3, prop="split_heads returns its result on the device of x")


@check(f"{A}.merge_heads.values", "merge_heads")
def merge_heads_values(ctx):
    """Token n's features h*Dh:(h+1)*Dh come from head h; contiguous and non-contiguous inputs; dtype kept."""
    for B, N, H, Dh in SPLIT_SHAPES:
        y = ctx.randn(B, H, N, Dh)
        expect_tensor(ctx, ctx.call("merge_heads", y.clone()), _merge_truth(y), "merge_heads gives (B, N, H*Dh), head h -> features h*Dh:(h+1)*Dh", f"x {describe(y)}")
        z = ctx.randn(B, N, H, Dh).transpose(1, 2)  # (B, H, N, Dh), not contiguous, as split_heads returns it
        expect_tensor(ctx, ctx.call("merge_heads", z), _merge_truth(z), "merge_heads accepts a non-contiguous (transposed) input", f"x {describe(z)} (non-contiguous)")
    y = ctx.randn(2, 3, 4, 2, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("merge_heads", y.clone()), _merge_truth(y), "float64 input keeps float64", f"x {describe(y)}")


@check(f"{A}.merge_heads.device", "merge_heads")
def merge_heads_device(ctx):
    """The result stays on x's device (probed with meta tensors standing in for a GPU)."""
    ctx.probe_device("merge_heads", ctx.randn(2, 3, 4, 2), prop="merge_heads returns its result on the device of x")


# ---------------------------------------------------------------- MultiHeadSelfAttention
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")


def _module(ctx, d_model, num_heads, bias=True, dtype=torch.float32):
    module = ctx.call("MultiHeadSelfAttention", d_model, num_heads, bias=bias)
    module = ctx.method(module, "to", str(ctx.device))
    return ctx.method(module, "double") if dtype == torch.float64 else module


def grader_params(ctx, d_model, bias=True):
    """{name: (weight, bias)}: float64 values on the CPU drawn by the grader (weights ~ N(0, 1/d_model))."""
    return {
        name: (ctx.randn(d_model, d_model, dtype=torch.float64).cpu() / math.sqrt(d_model),
               ctx.randn(d_model, dtype=torch.float64).cpu() * 0.5 if bias else None)
        for name in PROJECTIONS
    }


def set_weights(ctx, module, params, inputs):
    """Copy the grader's values into the module's own q/k/v/out_proj parameters, in place."""
    for name, (weight, b) in params.items():
        for part, value in (("weight", weight), ("bias", b)):
            if value is None:
                continue
            try:
                target = ctx.attr(module, f"{name}.{part}")
            except AttributeError as exc:
                ctx.fail(f"the module has {name}.{part}", f"it could not be read ({exc})", inputs)
            if not isinstance(target, torch.Tensor) or tuple(target.shape) != tuple(value.shape):
                shown = describe(target) if isinstance(target, torch.Tensor) else type(target).__name__
                ctx.fail(f"{name}.{part} has shape {tuple(value.shape)}", f"got {shown}", inputs)
            with torch.no_grad():
                ctx.method(target, "copy_", value.to(ctx.device, target.dtype))


def _graded_module(ctx, d_model, num_heads, bias=True, dtype=torch.float32):
    """The student's module with grader-chosen weights, and those weights."""
    module = _module(ctx, d_model, num_heads, bias, dtype)
    params = grader_params(ctx, d_model, bias)
    set_weights(ctx, module, params, f"MultiHeadSelfAttention({d_model}, {num_heads}, bias={bias})")
    return module, params


def torch_module(params, d_model, num_heads):
    """nn.MultiheadAttention (float64, CPU) holding the given projections."""
    bias = params["q_proj"][1] is not None
    ref = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True).double().eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([params[n][0] for n in ("q_proj", "k_proj", "v_proj")]))
        ref.out_proj.weight.copy_(params["out_proj"][0])
        if bias:
            ref.in_proj_bias.copy_(torch.cat([params[n][1] for n in ("q_proj", "k_proj", "v_proj")]))
            ref.out_proj.bias.copy_(params["out_proj"][1])
    return ref


def torch_truth(params, x, num_heads, mask=None):
    """(output, per-head weights) from nn.MultiheadAttention in float64; the mask must leave every query a key."""
    B, N, D = x.shape
    ref = torch_module(params, D, num_heads)
    attn_mask = None
    if mask is not None:  # torch's boolean attn_mask marks the positions that may NOT be attended
        attn_mask = ~mask.to("cpu").expand(B, num_heads, N, N).reshape(B * num_heads, N, N)
    x64 = x.detach().to("cpu", torch.float64)
    with torch.no_grad():
        return ref(x64, x64, x64, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)


def closed_form_truth(params, x, num_heads, mask=None):
    """softmax(Q_h K_h^T / sqrt(D_h)) V_h per head, concatenated, times W_O; fully masked rows get zero weights."""
    B, N, D = x.shape
    x64 = x.detach().to("cpu", torch.float64)

    def project(name):
        w, b = params[name]
        y = x64 @ w.T
        return y if b is None else y + b

    q, k, v = (_split_truth(project(n), num_heads) for n in ("q_proj", "k_proj", "v_proj"))  # (B, H, N, Dh)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D // num_heads)
    if mask is not None:
        scores = scores.masked_fill(~mask.to("cpu"), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)  # (B, H, N, N)
    w_o, b_o = params["out_proj"]
    out = _merge_truth(weights @ v) @ w_o.T
    return (out if b_o is None else out + b_o), weights


def read_weights(ctx, module, d_model, bias=True):
    """{name: (weight, bias)} read back from a module, float64 on the CPU. Used by 09's checks (on a module
    whose weights 09 set or trained); 06's own checks never build a truth from the student's weights."""
    params = {}
    for name in PROJECTIONS:
        weight, b = ctx.attr(module, f"{name}.weight"), ctx.attr(module, f"{name}.bias")
        inputs = f"MultiHeadSelfAttention(d_model={d_model}, ..., bias={bias})"
        if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != (d_model, d_model):
            shown = tuple(weight.shape) if isinstance(weight, torch.Tensor) else type(weight).__name__
            ctx.fail(f"{name} is nn.Linear(d_model, d_model)", f"{name}.weight is {shown}, expected {(d_model, d_model)}", inputs)
        if bias and (not isinstance(b, torch.Tensor) or tuple(b.shape) != (d_model,)):
            ctx.fail(f"{name} has a bias of shape (d_model,) when bias=True", f"{name}.bias is {describe(b) if isinstance(b, torch.Tensor) else repr(b)}", inputs)
        if not bias and b is not None:
            ctx.fail(f"{name} has no bias when bias=False", f"{name}.bias is {describe(b) if isinstance(b, torch.Tensor) else repr(b)}", inputs)
        params[name] = (weight.detach().to("cpu", torch.float64), None if b is None else b.detach().to("cpu", torch.float64))
    return params


def _inputs(x, num_heads, mask=None):
    return f"d_model={x.shape[-1]}, num_heads={num_heads}, x {describe(x)}" + ("" if mask is None else f", mask {describe(mask)}")


def _call(ctx, module, x, inputs, **kwargs):
    got = ctx.method(module, "__call__", x.clone(), **kwargs)
    if kwargs.get("return_weights"):
        if not isinstance(got, tuple) or len(got) != 2:
            ctx.fail("return_weights=True returns the pair (output, weights)", f"got {type(got).__name__}", inputs)
    elif type(got) is not torch.Tensor:
        ctx.fail("forward(x) returns the output tensor", f"got {type(got).__name__}", inputs)
    return got


CONFIGS = [(8, 2, 5), (12, 3, 4), (16, 4, 1), (6, 1, 3), (8, 8, 4), (32, 4, 7)]  # (D, H, N), one sentence each


@check(f"{A}.MultiHeadSelfAttention.parameters", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_parameters(ctx):
    """q_proj, k_proj, v_proj, out_proj are nn.Linear(d_model, d_model), with or without bias, and nothing else."""
    for d_model, h, bias in [(8, 2, True), (12, 4, False), (6, 6, True), (10, 5, None)]:
        module = ctx.call("MultiHeadSelfAttention", d_model, h) if bias is None else ctx.call("MultiHeadSelfAttention", d_model, h, bias=bias)
        bias = True if bias is None else bias
        inputs = f"MultiHeadSelfAttention(d_model={d_model}, num_heads={h}" + (")" if bias is None else f", bias={bias})")
        state = ctx.method(module, "state_dict")
        if not isinstance(state, dict):
            ctx.fail("state_dict() is a dict of tensors", f"got {type(state).__name__}", inputs)
        expected = {f"{n}.{p}": ((d_model, d_model) if p == "weight" else (d_model,)) for n in PROJECTIONS for p in (("weight", "bias") if bias else ("weight",))}
        got = {k: tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__ for k, v in state.items()}
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        if missing or extra:
            ctx.fail("the state_dict holds exactly q_proj, k_proj, v_proj, out_proj (weight" + (" and bias)" if bias else ", no bias)"),
                     f"missing {missing}, unexpected {extra}", inputs)
        for k, shape in expected.items():
            if got[k] != shape:
                ctx.fail(f"{k} has shape {shape}", f"got {got[k]}", inputs)


@check(f"{A}.MultiHeadSelfAttention.errors", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_errors(ctx):
    """ValueError when d_model is not divisible by num_heads."""
    for d_model, h in [(10, 4), (6, 4), (9, 2)]:
        ctx.expect_raises(ValueError, f"ValueError for d_model={d_model}, num_heads={h}", "MultiHeadSelfAttention", d_model, h)


@check(f"{A}.MultiHeadSelfAttention.values", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_values(ctx):
    """forward(x) with grader-chosen weights equals nn.MultiheadAttention holding them (one sentence at a time)."""
    for (d_model, h, N), bias in zip(CONFIGS + [(8, 4, 5)], [True] * len(CONFIGS) + [False]):
        module, params = _graded_module(ctx, d_model, h, bias)
        x = ctx.randn(1, N, d_model, scale=2.0)
        inputs = _inputs(x, h) + f", bias={bias}"
        out = _call(ctx, module, x, inputs)
        expected, _ = torch_truth(params, x, h)
        expect_tensor(ctx, out, expected.to(x.device, x.dtype), "output (B, N, d_model) agrees with nn.MultiheadAttention holding the same weights", inputs, atol=1e-4)


@check(f"{A}.MultiHeadSelfAttention.weights", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_weights(ctx):
    """forward(x, return_weights=True) is (the output, per-head weights (B, H, N, N)) as nn.MultiheadAttention gives them."""
    for d_model, h, N in CONFIGS[:4]:
        module, params = _graded_module(ctx, d_model, h)
        x = ctx.randn(1, N, d_model, scale=2.0)
        inputs = _inputs(x, h)
        plain = _call(ctx, module, x, inputs)
        out, weights = _call(ctx, module, x, inputs, return_weights=True)
        expect_tensor(ctx, out, torch.Tensor.detach(plain), "the output does not depend on return_weights", inputs)
        _, expected = torch_truth(params, x, h)
        expect_tensor(ctx, weights, expected.to(x.device, x.dtype), "per-head weights (B, H, N, N) agree with nn.MultiheadAttention(average_attn_weights=False)", inputs, atol=1e-5)


@check(f"{A}.MultiHeadSelfAttention.batch_independent", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_batch_independent(ctx):
    """A sentence's output is the same alone, in a batch, and whatever the other sentences are."""
    for d_model, h, B, N in [(8, 2, 3, 4), (12, 4, 4, 5), (6, 3, 5, 2)]:
        module, _ = _graded_module(ctx, d_model, h)
        x = ctx.randn(B, N, d_model, scale=2.0)
        inputs = _inputs(x, h)
        batch = _call(ctx, module, x, inputs)
        if tuple(batch.shape) != (B, N, d_model):
            ctx.fail("output has shape (B, N, d_model)", f"got {describe(batch)}", inputs)
        batch = torch.Tensor.detach(batch)
        for b in range(B):
            alone = _call(ctx, module, x[b : b + 1], inputs)
            expect_tensor(ctx, alone, batch[b : b + 1], f"sentence {b} alone gives the same output as in the batch", inputs, atol=1e-5)
        other = x.clone()
        other[1:] = ctx.randn(B - 1, N, d_model, scale=2.0)
        changed = _call(ctx, module, other, inputs)
        expect_tensor(ctx, changed[0], batch[0], "changing the other sentences leaves sentence 0 unchanged", inputs, atol=1e-5)
        perm = torch.randperm(B, generator=ctx.gen).to(ctx.device)
        permuted = _call(ctx, module, x[perm], inputs)
        expect_tensor(ctx, permuted, batch[perm], "permuting the batch permutes the outputs", inputs, atol=1e-5)


def _rand_mask(ctx, shape, p=0.6):
    mask = torch.rand(*shape, generator=ctx.gen) < p
    cols = torch.randint(0, shape[-1], shape[:-1], generator=ctx.gen)
    mask.scatter_(-1, cols.unsqueeze(-1), True)  # every query keeps at least one key
    return mask.to(ctx.device)


def _masked_weights(ctx, module, x, h, mask, prop):
    """The module's weights under mask must be its unmasked weights restricted to the mask and renormalised."""
    B, N, _ = x.shape
    inputs = _inputs(x, h, mask)
    _, free = _call(ctx, module, x, inputs, return_weights=True)
    out, weights = _call(ctx, module, x, inputs, return_weights=True, mask=mask.clone())
    if type(out) is not torch.Tensor or tuple(out.shape) != tuple(x.shape):
        ctx.fail(f"{prop}: output keeps the shape (B, N, d_model)", f"got {describe(out) if isinstance(out, torch.Tensor) else type(out).__name__}", inputs)
    if type(weights) is not torch.Tensor or type(free) is not torch.Tensor or tuple(weights.shape) != (B, h, N, N):
        ctx.fail(f"{prop}: weights have shape (B, H, N, N)", f"got {describe(weights) if isinstance(weights, torch.Tensor) else type(weights).__name__}", inputs)
    full = mask.expand(B, h, N, N).cpu()
    allowed = full.any(-1, keepdim=True)
    free = torch.Tensor.detach(free).to("cpu", torch.float64)
    expected = torch.where(full, free, torch.zeros_like(free))
    expected = torch.where(allowed, expected / expected.sum(-1, keepdim=True).clamp_min(1e-300), torch.zeros_like(expected))
    expect_tensor(ctx, weights, expected.to(x.device, x.dtype), f"{prop}: masked keys get weight 0, the others keep their unmasked proportions", inputs, atol=1e-5)


@check(f"{A}.MultiHeadSelfAttention.mask", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_mask(ctx):
    """Masks (N, N), (B, 1, 1, N), (B, 1, N, N), (B, H, N, N), True = may attend."""
    d_model, h, B, N = 8, 2, 3, 5
    module, _ = _graded_module(ctx, d_model, h)
    x = ctx.randn(B, N, d_model, scale=2.0)
    causal = torch.ones(N, N, dtype=torch.bool, device=ctx.device).tril()
    _masked_weights(ctx, module, x, h, causal, "causal mask (N, N)")
    padding = torch.ones(B, 1, 1, N, dtype=torch.bool)
    padding[1, ..., 3:] = False
    padding[2, ..., 1:] = False
    _masked_weights(ctx, module, x, h, padding.to(ctx.device), "padding mask (B, 1, 1, N)")
    _masked_weights(ctx, module, x, h, _rand_mask(ctx, (B, 1, N, N)), "per-sentence mask (B, 1, N, N)")
    _masked_weights(ctx, module, x, h, _rand_mask(ctx, (B, h, N, N)), "per-head mask (B, H, N, N)")


@check(f"{A}.MultiHeadSelfAttention.fully_masked", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_fully_masked(ctx):
    """A query with nothing to attend gets zero weights in that head; no NaN anywhere."""
    d_model, h, B, N = 8, 2, 3, 5
    module, _ = _graded_module(ctx, d_model, h)
    x = ctx.randn(B, N, d_model, scale=2.0)
    mask = _rand_mask(ctx, (B, h, N, N))
    mask[0, :, 2] = False  # query 2 of sentence 0 sees nothing in any head
    mask[1, 1, 0] = False  # query 0 of sentence 1 sees nothing in head 1 only
    for m, what in ((mask, "queries with nothing to attend"), (torch.zeros(N, N, dtype=torch.bool, device=ctx.device), "a mask with no True at all")):
        inputs = _inputs(x, h, m)
        out, weights = _call(ctx, module, x, inputs, return_weights=True, mask=m.clone())
        if type(out) is not torch.Tensor or type(weights) is not torch.Tensor or tuple(weights.shape) != (B, h, N, N):
            ctx.fail(f"{what}: (output, weights (B, H, N, N))", f"got {type(out).__name__}, {describe(weights) if isinstance(weights, torch.Tensor) else type(weights).__name__}", inputs)
        if bool(torch.isnan(torch.Tensor.detach(out)).any()):
            ctx.fail(f"{what}: no NaN in the output", "the output has NaN", inputs)
        dead = ~m.expand(B, h, N, N).any(-1)  # (B, H, N): queries that see nothing in that head
        got = torch.Tensor.detach(weights)[dead]
        expect_tensor(ctx, got, torch.zeros_like(got), f"{what}: zero weights in the heads where the query sees nothing (no NaN)", inputs, atol=0.0, rtol=0.0)


@check(f"{A}.MultiHeadSelfAttention.dtype", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_dtype(ctx):
    """module.double() with a float64 x gives float64 output and weights (values as nn.MultiheadAttention)."""
    for d_model, h, N in CONFIGS[:3]:
        module, params = _graded_module(ctx, d_model, h, dtype=torch.float64)
        x = ctx.randn(1, N, d_model, dtype=torch.float64, scale=2.0)
        inputs = _inputs(x, h)
        out, weights = _call(ctx, module, x, inputs, return_weights=True)
        for name, t in (("output", out), ("weights", weights)):
            if type(t) is not torch.Tensor or t.dtype != torch.float64:
                ctx.fail(f"a float64 module and x give a float64 {name}", f"got {describe(t) if isinstance(t, torch.Tensor) else type(t).__name__}", inputs)


@check(f"{A}.MultiHeadSelfAttention.gradients", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_gradients(ctx):
    """loss = (output * r).sum(): backward reaches every weight and bias of the four projections."""
    for d_model, h, B, N in [(8, 2, 2, 4), (6, 3, 1, 5)]:
        module, _ = _graded_module(ctx, d_model, h)
        x = ctx.randn(B, N, d_model, scale=2.0)
        inputs = _inputs(x, h)
        with torch.enable_grad():
            out = _call(ctx, module, x, inputs)
            loss = ctx.method(out, "mul", ctx.randn(B, N, d_model))
            loss = ctx.method(loss, "sum")
            ctx.method(loss, "backward")
        for name in PROJECTIONS:
            for part in ("weight", "bias"):
                grad = ctx.attr(module, f"{name}.{part}.grad")
                if not isinstance(grad, torch.Tensor) or not bool(torch.isfinite(grad).all()) or float(grad.abs().sum()) == 0.0:
                    ctx.fail("the gradient reaches every parameter", f"{name}.{part}.grad is {describe(grad) if isinstance(grad, torch.Tensor) and float(grad.abs().sum()) else ('zero' if isinstance(grad, torch.Tensor) else grad)}", inputs)


@check(f"{A}.MultiHeadSelfAttention.unchanged", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_unchanged(ctx):
    """forward leaves x and mask as they were."""
    d_model, h, B, N = 8, 2, 2, 4
    module, _ = _graded_module(ctx, d_model, h)
    for mask in (None, torch.ones(N, N, dtype=torch.bool, device=ctx.device).tril(), _rand_mask(ctx, (B, 1, 1, N))):
        x = ctx.randn(B, N, d_model)
        x_before = x.clone()
        inputs = _inputs(x, h, mask)
        if mask is None:
            ctx.method(module, "__call__", x)
        else:
            mask_before = mask.clone()
            ctx.method(module, "__call__", x, mask=mask, return_weights=True)
            expect_tensor(ctx, mask, mask_before, "forward leaves mask unchanged", inputs)
        expect_tensor(ctx, x, x_before, "forward leaves x unchanged", inputs, atol=0.0, rtol=0.0)


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
        expected = _reference_params(reference)
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


# ---------------------------------------------------------------- stack_head_projections
STACK_SHAPES = [(8, 2, 4), (6, 3, 2), (5, 1, 3), (4, 4, 1), (12, 4, 3), (3, 6, 2)]  # (d_model, H, d_head)


def _stack_truth(per_head):
    return torch.cat([w.T for w in per_head], dim=0)  # (H*d_head, d_model): head h's rows h*d_head:(h+1)*d_head


def _per_head(ctx, d_model, H, d_head, dtype=torch.float32):
    return [ctx.randn(d_model, d_head, dtype=dtype) for _ in range(H)]


def _stack_inputs(per_head):
    return f"per_head = {len(per_head)} matrices {describe(per_head[0])}" if per_head else "per_head = []"


@check(f"{A}.stack_head_projections.values", "stack_head_projections")
def stack_values(ctx):
    """W of shape (H*d_head, d_model) with rows h*d_head:(h+1)*d_head = W_h^T; split_heads(x @ W.T)[:, h] == x @ W_h."""
    for d_model, H, d_head in STACK_SHAPES:
        per_head = _per_head(ctx, d_model, H, d_head)
        inputs = _stack_inputs(per_head)
        got = ctx.call("stack_head_projections", [w.clone() for w in per_head])
        expected = _stack_truth(per_head)
        if type(got) is not torch.Tensor or tuple(got.shape) != tuple(expected.shape):
            ctx.fail("the result is the nn.Linear weight (H*d_head, d_model)", f"got {describe(got) if isinstance(got, torch.Tensor) else type(got).__name__}, expected {tuple(expected.shape)}", inputs)
        x = ctx.randn(2, 3, d_model)
        heads = _split_truth(x @ torch.Tensor.detach(got).T, H)  # (2, H, 3, d_head) from the student's stacked weight
        for h in range(H):
            expect_tensor(ctx, heads[:, h], x @ per_head[h], f"head {h} of split_heads(x @ W.T, H) is x @ per_head[{h}]", inputs + f", x {describe(x)}", atol=1e-5)
        expect_tensor(ctx, got, expected, "rows h*d_head:(h+1)*d_head of W are per_head[h] transposed", inputs, atol=1e-6)
    per_head = _per_head(ctx, 6, 3, 2, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("stack_head_projections", [w.clone() for w in per_head]), _stack_truth(per_head), "float64 matrices give a float64 weight", _stack_inputs(per_head), atol=1e-12)


@check(f"{A}.stack_head_projections.unchanged", "stack_head_projections")
def stack_unchanged(ctx):
    """The matrices of per_head are left as they were."""
    for d_model, H, d_head in STACK_SHAPES[:3]:
        per_head = _per_head(ctx, d_model, H, d_head)
        before = [w.clone() for w in per_head]
        inputs = _stack_inputs(per_head)
        ctx.call("stack_head_projections", per_head)
        if len(per_head) != len(before):
            ctx.fail("stack_head_projections leaves the list per_head unchanged", f"it now has {len(per_head)} entries, expected {len(before)}", inputs)
        for h, (w, b) in enumerate(zip(per_head, before)):
            expect_tensor(ctx, w, b, f"per_head[{h}] is unchanged", inputs, atol=0.0, rtol=0.0)


@check(f"{A}.stack_head_projections.errors", "stack_head_projections")
def stack_errors(ctx):
    """ValueError for an empty list or matrices of different shapes."""
    cases = [[], [ctx.randn(6, 2), ctx.randn(6, 3)], [ctx.randn(6, 2), ctx.randn(4, 2)], [ctx.randn(4, 2), ctx.randn(4, 2), ctx.randn(4, 1)]]
    for per_head in cases:
        shapes = [tuple(w.shape) for w in per_head]
        ctx.expect_raises(ValueError, f"ValueError for per_head of shapes {shapes}", "stack_head_projections", per_head)


@check(f"{A}.stack_head_projections.device", "stack_head_projections")
def stack_device(ctx):
    """W stays on the matrices' device (probed with meta tensors standing in for a GPU)."""
    ctx.probe_device("stack_head_projections", _per_head(ctx, 6, 3, 2), prop="stack_head_projections returns W on the device of per_head")
