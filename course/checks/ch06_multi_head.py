"""Hidden checks for 06-multi-head.

Ground truths: ``view`` + ``transpose`` for the head split and merge;
``torch.nn.MultiheadAttention`` (batch_first, per-head weights) loaded with the
weights read back from the student's module, evaluated in float64 on the CPU;
for masks with queries that may attend to nothing (where PyTorch's module gives
NaN), the closed form softmax(Q_h K_h^T / sqrt(D_h)) V_h -> concat -> W_O computed
here from the same weights; and properties (batch independence, rows summing to 1).
"""
import math

import torch
import torch.nn as nn

from autograder.checking import check, describe, expect_equal, expect_tensor

A = ASSIGNMENT = "06"
CONTRACT = ["split_heads", "merge_heads", "MultiHeadSelfAttention", "load_torch_weights"]
MHSA_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)


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
    """Head h of token n is x[b, n, h*Dh:(h+1)*Dh]; shapes incl. B, N, H or Dh = 1; dtype and device kept."""
    for B, N, H, Dh in SPLIT_SHAPES:
        x = ctx.randn(B, N, H * Dh)
        expect_tensor(ctx, ctx.call("split_heads", x.clone(), H), _split_truth(x, H), "split_heads gives (B, H, N, Dh), head h = features h*Dh:(h+1)*Dh", f"x {describe(x)}, num_heads {H}")
    x = ctx.randn(2, 3, 6, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("split_heads", x.clone(), 3), _split_truth(x, 3), "float64 input keeps float64", f"x {describe(x)}, num_heads 3")
    ids = ctx.randint(0, 100, (2, 4, 6))
    expect_tensor(ctx, ctx.call("split_heads", ids.clone(), 2), _split_truth(ids, 2), "integer input keeps its dtype", f"x {describe(ids)}, num_heads 2")


@check(f"{A}.split_heads.errors", "split_heads")
def split_heads_errors(ctx):
    """ValueError when the last dimension is not divisible by num_heads (or num_heads < 1)."""
    for shape, h in [((2, 3, 10), 4), ((1, 1, 6), 4), ((2, 2, 3), 2), ((1, 4, 5), 3), ((2, 3, 4), 0)]:
        ctx.expect_raises(ValueError, f"ValueError for last dimension {shape[-1]} and num_heads {h}", "split_heads", ctx.randn(*shape), h)


@check(f"{A}.merge_heads.values", "merge_heads")
def merge_heads_values(ctx):
    """Token n's features h*Dh:(h+1)*Dh come from head h; contiguous and non-contiguous inputs."""
    for B, N, H, Dh in SPLIT_SHAPES:
        y = ctx.randn(B, H, N, Dh)
        expect_tensor(ctx, ctx.call("merge_heads", y.clone()), _merge_truth(y), "merge_heads gives (B, N, H*Dh), head h -> features h*Dh:(h+1)*Dh", f"x {describe(y)}")
        z = ctx.randn(B, N, H, Dh).transpose(1, 2)  # (B, H, N, Dh), not contiguous, as split_heads returns it
        expect_tensor(ctx, ctx.call("merge_heads", z), _merge_truth(z), "merge_heads accepts a non-contiguous (transposed) input", f"x {describe(z)} (non-contiguous)")
    y = ctx.randn(2, 3, 4, 2, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("merge_heads", y.clone()), _merge_truth(y), "float64 input keeps float64", f"x {describe(y)}")


@check(f"{A}.merge_heads.inverse", ("split_heads", "merge_heads"))
def merge_heads_inverse(ctx):
    """merge_heads(split_heads(x, H)) == x and split_heads(merge_heads(y), H) == y."""
    for B, N, H, Dh in SPLIT_SHAPES[:4]:
        x = ctx.randn(B, N, H * Dh)
        split = ctx.call("split_heads", x.clone(), H)
        expect_tensor(ctx, ctx.call("merge_heads", split), x, "merge_heads undoes split_heads", f"x {describe(x)}, num_heads {H}")
        y = ctx.randn(B, H, N, Dh)
        merged = ctx.call("merge_heads", y.clone())
        expect_tensor(ctx, ctx.call("split_heads", merged, H), y, "split_heads undoes merge_heads", f"y {describe(y)}")


# ---------------------------------------------------------------- MultiHeadSelfAttention
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")


def _module(ctx, d_model, num_heads, bias=True, dtype=torch.float32):
    module = ctx.call("MultiHeadSelfAttention", d_model, num_heads, bias=bias)
    module = ctx.method(module, "to", str(ctx.device))
    return ctx.method(module, "double") if dtype == torch.float64 else module


def read_weights(ctx, module, d_model, bias=True):
    """{name: (weight, bias)} read back from the student's module, float64 on the CPU."""
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
    """(output, per-head weights) from nn.MultiheadAttention; the mask must leave every query a key."""
    B, N, D = x.shape
    ref = torch_module(params, D, num_heads)
    attn_mask = None
    if mask is not None:  # torch's boolean attn_mask marks the positions that may NOT be attended
        attn_mask = ~mask.to("cpu").expand(B, num_heads, N, N).reshape(B * num_heads, N, N)
    x64 = x.detach().to("cpu", torch.float64)
    with torch.no_grad():
        out, weights = ref(x64, x64, x64, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
    return out, weights


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


def _forward(ctx, module, x, mask=None, return_weights=False, inputs=""):
    kwargs = {}
    if mask is not None:
        kwargs["mask"] = mask.clone()
    if return_weights:
        kwargs["return_weights"] = True
    got = ctx.method(module, "__call__", x.clone(), **kwargs)
    if return_weights and (not isinstance(got, tuple) or len(got) != 2):
        ctx.fail("return_weights=True returns the pair (output, weights)", f"got {type(got).__name__}", inputs)
    return got


def _expect_forward(ctx, module, params, x, num_heads, mask, prop, truth=torch_truth, atol=1e-5):
    inputs = f"d_model={x.shape[-1]}, num_heads={num_heads}, x {describe(x)}" + ("" if mask is None else f", mask {describe(mask)}")
    out, weights = _forward(ctx, module, x, mask, True, inputs)
    e_out, e_weights = truth(params, x, num_heads, mask)
    expect_tensor(ctx, weights, e_weights.to(x.device, x.dtype), f"{prop}: per-head weights (B, H, N, N)", inputs, atol=atol)
    expect_tensor(ctx, out, e_out.to(x.device, x.dtype), f"{prop}: output (B, N, d_model)", inputs, atol=atol)
    plain = _forward(ctx, module, x, mask, False, inputs)
    expect_tensor(ctx, plain, e_out.to(x.device, x.dtype), f"{prop}: output with return_weights=False", inputs, atol=atol)


CONFIGS = [(8, 2, 2, 5), (12, 3, 1, 4), (16, 4, 3, 1), (6, 1, 2, 3), (8, 8, 2, 4), (32, 4, 2, 7)]  # (D, H, B, N)


@check(f"{A}.MultiHeadSelfAttention.parameters", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_parameters(ctx):
    """q_proj, k_proj, v_proj, out_proj are nn.Linear(d_model, d_model), with or without bias."""
    for d_model, h, bias in [(8, 2, True), (12, 4, False), (6, 6, True)]:
        read_weights(ctx, ctx.call("MultiHeadSelfAttention", d_model, h, bias=bias), d_model, bias)
    read_weights(ctx, ctx.call("MultiHeadSelfAttention", 10, 5), 10, True)  # bias defaults to True


@check(f"{A}.MultiHeadSelfAttention.errors", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_errors(ctx):
    """ValueError when d_model is not divisible by num_heads."""
    for d_model, h in [(10, 4), (6, 4), (9, 2)]:
        ctx.expect_raises(ValueError, f"ValueError for d_model={d_model}, num_heads={h}", "MultiHeadSelfAttention", d_model, h)


@check(f"{A}.MultiHeadSelfAttention.matches_torch", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_matches_torch(ctx):
    """Same outputs and per-head weights as nn.MultiheadAttention with the module's own weights."""
    for d_model, h, B, N in CONFIGS:
        module = _module(ctx, d_model, h, dtype=torch.float64)
        params = read_weights(ctx, module, d_model)
        x = ctx.randn(B, N, d_model, dtype=torch.float64, scale=2.0)
        _expect_forward(ctx, module, params, x, h, None, "agrees with nn.MultiheadAttention (float64)", atol=1e-9)
    module = _module(ctx, 8, 4, bias=False, dtype=torch.float64)
    params = read_weights(ctx, module, 8, bias=False)
    _expect_forward(ctx, module, params, ctx.randn(2, 5, 8, dtype=torch.float64, scale=2.0), 4, None, "agrees with nn.MultiheadAttention without bias", atol=1e-9)
    module = _module(ctx, 16, 2)
    params = read_weights(ctx, module, 16)
    _expect_forward(ctx, module, params, ctx.randn(3, 6, 16, scale=2.0), 2, None, "agrees with nn.MultiheadAttention (float32)", atol=1e-4)


@check(f"{A}.MultiHeadSelfAttention.return_weights", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_return_weights(ctx):
    """forward(x) is a tensor (B, N, D); forward(x, return_weights=True) is (that tensor, weights (B, H, N, N))."""
    for d_model, h, B, N in [(8, 2, 3, 4), (6, 3, 1, 1), (4, 4, 2, 6)]:
        module = _module(ctx, d_model, h)
        x = ctx.randn(B, N, d_model)
        inputs = f"d_model={d_model}, num_heads={h}, x {describe(x)}"
        plain = ctx.method(module, "__call__", x.clone())
        if type(plain) is not torch.Tensor:
            ctx.fail("return_weights=False returns a tensor", f"got {type(plain).__name__}", inputs)
        out, weights = _forward(ctx, module, x, None, True, inputs)
        expect_tensor(ctx, out, torch.Tensor.detach(plain), "the output does not depend on return_weights", inputs)
        if type(weights) is not torch.Tensor or tuple(weights.shape) != (B, h, N, N):
            ctx.fail("weights have shape (B, H, N, N)", f"got {describe(weights) if isinstance(weights, torch.Tensor) else type(weights).__name__}", inputs)
        sums = torch.Tensor.detach(weights).sum(-1)
        expect_tensor(ctx, sums, torch.ones_like(sums), "every row of weights sums to 1", inputs)


@check(f"{A}.MultiHeadSelfAttention.batch_independent", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_batch_independent(ctx):
    """A sentence's output is the same alone, in a batch, and whatever the other sentences are."""
    for d_model, h, B, N in [(8, 2, 3, 4), (12, 4, 4, 5), (6, 3, 5, 2)]:
        module = _module(ctx, d_model, h)
        x = ctx.randn(B, N, d_model, scale=2.0)
        inputs = f"d_model={d_model}, num_heads={h}, x {describe(x)}"
        batch = ctx.method(module, "__call__", x.clone())
        if type(batch) is not torch.Tensor or tuple(batch.shape) != (B, N, d_model):
            ctx.fail("output has shape (B, N, d_model)", f"got {describe(batch)}", inputs)
        batch = torch.Tensor.detach(batch)
        for b in range(B):
            alone = ctx.method(module, "__call__", x[b : b + 1].clone())
            expect_tensor(ctx, alone, batch[b : b + 1], f"sentence {b} alone gives the same output as in the batch", inputs, atol=1e-5)
        other = x.clone()
        other[1:] = ctx.randn(B - 1, N, d_model, scale=2.0)
        changed = ctx.method(module, "__call__", other)
        if type(changed) is not torch.Tensor or tuple(changed.shape) != (B, N, d_model):
            ctx.fail("output has shape (B, N, d_model)", f"got {describe(changed)}", inputs)
        expect_tensor(ctx, changed[0], batch[0], "changing the other sentences leaves sentence 0 unchanged", inputs, atol=1e-5)
        perm = torch.randperm(B, generator=ctx.gen).to(ctx.device)
        permuted = ctx.method(module, "__call__", x[perm].clone())
        expect_tensor(ctx, permuted, batch[perm], "permuting the batch permutes the outputs", inputs, atol=1e-5)


def _rand_mask(ctx, shape, p=0.6):
    mask = torch.rand(*shape, generator=ctx.gen) < p
    cols = torch.randint(0, shape[-1], shape[:-1], generator=ctx.gen)
    mask.scatter_(-1, cols.unsqueeze(-1), True)  # every query keeps at least one key
    return mask.to(ctx.device)


@check(f"{A}.MultiHeadSelfAttention.mask", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_mask(ctx):
    """Masks (N, N), (B, 1, 1, N), (B, 1, N, N), (B, H, N, N), True = may attend; fully masked queries give no NaN."""
    d_model, h, B, N = 8, 2, 3, 5
    module = _module(ctx, d_model, h, dtype=torch.float64)
    params = read_weights(ctx, module, d_model)
    x = ctx.randn(B, N, d_model, dtype=torch.float64, scale=2.0)
    causal = torch.ones(N, N, dtype=torch.bool, device=ctx.device).tril()
    _expect_forward(ctx, module, params, x, h, causal, "causal mask (N, N) agrees with nn.MultiheadAttention", atol=1e-9)
    padding = torch.ones(B, 1, 1, N, dtype=torch.bool)
    padding[1, ..., 3:] = False
    padding[2, ..., 1:] = False
    _expect_forward(ctx, module, params, x, h, padding.to(ctx.device), "padding mask (B, 1, 1, N) agrees with nn.MultiheadAttention", atol=1e-9)
    _expect_forward(ctx, module, params, x, h, _rand_mask(ctx, (B, 1, N, N)), "per-sentence mask (B, 1, N, N) agrees with nn.MultiheadAttention", atol=1e-9)
    _expect_forward(ctx, module, params, x, h, _rand_mask(ctx, (B, h, N, N)), "per-head mask (B, H, N, N) agrees with nn.MultiheadAttention", atol=1e-9)
    # queries with nothing to attend: zero weights in that head, output = W_O applied to zeros
    mask = _rand_mask(ctx, (B, h, N, N))
    mask[0, :, 2] = False  # query 2 of sentence 0 sees nothing in any head
    mask[1, 1, 0] = False  # query 0 of sentence 1 sees nothing in head 1 only
    _expect_forward(ctx, module, params, x, h, mask, "fully masked queries get zero weights, no NaN", truth=closed_form_truth, atol=1e-9)
    _expect_forward(ctx, module, params, x, h, torch.zeros(N, N, dtype=torch.bool, device=ctx.device), "a mask with no True at all", truth=closed_form_truth, atol=1e-9)
    module32 = _module(ctx, 12, 3)
    params32 = read_weights(ctx, module32, 12)
    x32 = ctx.randn(2, 4, 12, scale=2.0)
    _expect_forward(ctx, module32, params32, x32, 3, _rand_mask(ctx, (2, 1, 1, 4)), "float32 with a padding mask", truth=closed_form_truth, atol=1e-4)


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


@check(f"{A}.load_torch_weights.parameters", ("load_torch_weights", "MultiHeadSelfAttention"))
def load_parameters(ctx):
    """After loading, q/k/v_proj hold the row blocks of in_proj_weight/bias and out_proj the reference's out_proj."""
    for d_model, h, bias in [(8, 2, True), (12, 3, True), (6, 1, False), (16, 8, True)]:
        module = _module(ctx, d_model, h, bias=bias)
        reference = _random_reference(ctx, d_model, h, bias)
        _load(ctx, module, reference)
        got = read_weights(ctx, module, d_model, bias)
        expected = _reference_params(reference)
        inputs = f"nn.MultiheadAttention({d_model}, {h}, bias={bias})"
        for name in PROJECTIONS:
            for part, g, e in (("weight", got[name][0], expected[name][0]), ("bias", got[name][1], expected[name][1])):
                if e is None:
                    continue
                expect_tensor(ctx, g, e, f"{name}.{part} holds the reference's {'in_proj' if name != 'out_proj' else 'out_proj'} {part} block", inputs, atol=1e-7)


@check(f"{A}.load_torch_weights.outputs", ("load_torch_weights", "MultiHeadSelfAttention"))
def load_outputs(ctx):
    """After loading, the module and nn.MultiheadAttention give the same outputs and weights, masked or not."""
    for d_model, h, B, N in [(8, 2, 2, 5), (12, 4, 3, 3), (6, 3, 1, 1)]:
        module = _module(ctx, d_model, h)
        reference = _random_reference(ctx, d_model, h)
        _load(ctx, module, reference)
        params = _reference_params(reference)
        x = ctx.randn(B, N, d_model)
        _expect_forward(ctx, module, params, x, h, None, "loaded module agrees with nn.MultiheadAttention", atol=1e-4)
        causal = torch.ones(N, N, dtype=torch.bool, device=ctx.device).tril()
        _expect_forward(ctx, module, params, x, h, causal, "loaded module agrees with nn.MultiheadAttention under a causal mask", atol=1e-4)


@check(f"{A}.load_torch_weights.errors", ("load_torch_weights", "MultiHeadSelfAttention"))
def load_errors(ctx):
    """ValueError when the reference has another d_model or another number of heads."""
    for (d_model, h), (rd, rh) in [((8, 2), (8, 4)), ((8, 2), (12, 2)), ((6, 3), (6, 1))]:
        module = _module(ctx, d_model, h)
        reference = _random_reference(ctx, rd, rh)
        raised = ctx.raised("load_torch_weights", module, reference)
        prop = f"ValueError when loading nn.MultiheadAttention({rd}, {rh}) into MultiHeadSelfAttention({d_model}, {h})"
        if raised != "ValueError":
            ctx.fail(prop, "returned" if raised is None else f"raised {raised}")
