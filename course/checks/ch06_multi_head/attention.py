"""ch06_multi_head: the checks of MultiHeadSelfAttention (one that calls the student's split_heads and
merge_heads and fails because one of them is wrong on what it handed it is told to fix it first: ``_heads_blamed``)."""
import math

import torch
import torch.nn as nn

from autograder.checking import check, describe, expect_tensor, expect_untouched

from ..ground_truth import blame_helpers, first_fault
from .shared import MHSA_FORBIDDEN, A
from .heads import _merge_truth, _split_truth

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


def _heads_blamed(ctx, params, x, h, mask=None):
    """On a failure inside the block, blame the student's split_heads (on q_proj(x), k_proj(x), v_proj(x) of the
    grader's weights) or merge_heads (on the heads' true outputs), whichever the module calls and is wrong there."""
    def project(name):
        w, b = params[name]
        y = x.detach().to("cpu", torch.float64) @ w.T
        return y if b is None else y + b

    def like_x(t):
        return t.to(x.device, x.dtype)

    def split():
        probes = [(f"{A}.split_heads.values", (like_x(project(n)), h), like_x(_split_truth(project(n), h)), f"{n}(x) {describe(like_x(project(n)))}, num_heads {h}", {})
                  for n in ("q_proj", "k_proj", "v_proj")]
        return first_fault(ctx, "split_heads", probes)

    def merge():
        heads = like_x(closed_form_truth(params, x, h, mask)[1] @ _split_truth(project("v_proj"), h))  # (B, H, N, Dh)
        return first_fault(ctx, "merge_heads", [(f"{A}.merge_heads.values", (heads,), _merge_truth(heads), f"the heads' outputs {describe(heads)}", {})])

    return blame_helpers(ctx, "MultiHeadSelfAttention", [("split_heads", split), ("merge_heads", merge)])


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
        with _heads_blamed(ctx, params, x, h):
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
        with _heads_blamed(ctx, params, x, h):
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


def _masked_weights(ctx, module, x, h, mask, prop, params):
    """The module's weights under mask must be its unmasked weights restricted to the mask and renormalised."""
    with _heads_blamed(ctx, params, x, h, mask):
        _expect_masked_weights(ctx, module, x, h, mask, prop)


def _expect_masked_weights(ctx, module, x, h, mask, prop):
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
    module, params = _graded_module(ctx, d_model, h)
    x = ctx.randn(B, N, d_model, scale=2.0)
    causal = torch.ones(N, N, dtype=torch.bool, device=ctx.device).tril()
    _masked_weights(ctx, module, x, h, causal, "causal mask (N, N)", params)
    padding = torch.ones(B, 1, 1, N, dtype=torch.bool)
    padding[1, ..., 3:] = False
    padding[2, ..., 1:] = False
    _masked_weights(ctx, module, x, h, padding.to(ctx.device), "padding mask (B, 1, 1, N)", params)
    _masked_weights(ctx, module, x, h, _rand_mask(ctx, (B, 1, N, N)), "per-sentence mask (B, 1, N, N)", params)
    _masked_weights(ctx, module, x, h, _rand_mask(ctx, (B, h, N, N)), "per-head mask (B, H, N, N)", params)


# how far a masked key's score sits above the allowed keys': far past float32's exp range (exp(-88) is its
# smallest normal number), so weights masked after the softmax have nothing left to renormalise
DOMINANCE = 1e4


def _rows_summing_to_zero(w):
    """w rounded to multiples of 1/64 with each row's last entry making the row sum exactly 0. W e = 0 then holds in
    float32 too, in any order of summation (every product with 2000 e and every partial sum is exact), so the loud
    token's query is b_q to the last bit whichever way the answer computes its projection."""
    w = torch.round(w * 64) / 64
    w[:, -1] = -w[:, :-1].sum(dim=1)
    return w


def _dominated_case(ctx, d_model, B, N, loud):
    """Grader weights and x for which key ``loud`` scores more than DOMINANCE above every other key, in every
    head and for every query, while every query (the loud token's included) stays of ordinary size."""
    params = grader_params(ctx, d_model)
    params["q_proj"] = (_rows_summing_to_zero(params["q_proj"][0]), torch.full((d_model,), 3.0, dtype=torch.float64))
    params["k_proj"] = (torch.eye(d_model, dtype=torch.float64), torch.zeros(d_model, dtype=torch.float64))
    x = 1.0 + 0.3 * ctx.randn(B, N, d_model)
    x[:, loud] = 2000.0  # k_loud = 2000 e: score about 2000 * 3 * D_h / sqrt(D_h) above 1e4, the others about 6
    return params, x


@check(f"{A}.MultiHeadSelfAttention.mask_dominated", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_mask_dominated(ctx):
    """A masked key whose score dominates by 1e4: each row still sums to 1, and every weight and output is that of
    the same sentences with the loud token made ordinary (a masked key changes nothing)."""
    d_model, h, B, N = 8, 2, 3, 5
    what = f"a masked key whose score is over {DOMINANCE:g} above the allowed keys' (far past float32's exp range) must not change their weights"
    loud = ctx.randrange(0, N)
    padding = torch.ones(B, 1, 1, N, dtype=torch.bool)
    padding[..., loud] = False
    per_sentence = _rand_mask(ctx, (B, 1, N, N)).cpu()
    per_sentence[..., loud] = False
    per_sentence[..., (loud + 1) % N] = True
    shared = _rand_mask(ctx, (N, N)).cpu()
    shared[:, 0] = False
    shared[:, 1] = True
    for mask, key, form in ((padding, loud, "padding mask (B, 1, 1, N)"), (per_sentence, loud, "per-sentence mask (B, 1, N, N)"),
                            (shared, 0, "one (N, N) mask for the batch, the first key loud")):
        module = _module(ctx, d_model, h)
        params, x = _dominated_case(ctx, d_model, B, N, key)
        inputs = _inputs(x, h, mask) + f" ({form}, key {key} loud)"
        set_weights(ctx, module, params, inputs)
        mask = mask.to(ctx.device)
        out, weights = _call(ctx, module, x, inputs, return_weights=True, mask=mask.clone())
        if type(weights) is not torch.Tensor or tuple(weights.shape) != (B, h, N, N):
            ctx.fail(f"{what}: weights (B, H, N, N)", f"got {describe(weights) if isinstance(weights, torch.Tensor) else type(weights).__name__}", inputs)
        sums = torch.Tensor.detach(weights).to("cpu", torch.float64).sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-5):
            worst = int((sums - 1).abs().flatten().argmax())
            ctx.fail(what, f"a query's weights in one head sum to {float(sums.flatten()[worst]):.6g}, not 1: the allowed keys' weights "
                     "underflowed (a correct answer masks the scores before the softmax, so a masked key never enters it)", inputs)
        # the same sentences with the loud token made ordinary (x = 1: the same query b_q, a key of ordinary size):
        # the masked key can change nothing, so every weight and every output stays as it is
        quiet = x.clone()
        quiet[:, key] = 1.0
        q_out, q_weights = _call(ctx, module, quiet, inputs, return_weights=True, mask=mask.clone())
        prop = f"{what}: the weights and outputs are those of the same sentences with that key's token made ordinary"
        expect_tensor(ctx, weights, torch.Tensor.detach(q_weights), prop + " (weights)", inputs, atol=1e-5)
        expect_tensor(ctx, out, torch.Tensor.detach(q_out), prop + " (outputs)", inputs, atol=1e-4)


@check(f"{A}.MultiHeadSelfAttention.fully_masked", "MultiHeadSelfAttention", MHSA_FORBIDDEN)
def mhsa_fully_masked(ctx):
    """A query with nothing to attend gets zero weights in that head; no NaN anywhere."""
    d_model, h, B, N = 8, 2, 3, 5
    module, params = _graded_module(ctx, d_model, h)
    x = ctx.randn(B, N, d_model, scale=2.0)
    mask = _rand_mask(ctx, (B, h, N, N))
    mask[0, :, 2] = False  # query 2 of sentence 0 sees nothing in any head
    mask[1, 1, 0] = False  # query 0 of sentence 1 sees nothing in head 1 only
    for m, what in ((mask, "queries with nothing to attend"), (torch.zeros(N, N, dtype=torch.bool, device=ctx.device), "a mask with no True at all")):
        with _heads_blamed(ctx, params, x, h, m):
            _expect_dead_rows(ctx, module, x, h, m, what)


def _expect_dead_rows(ctx, module, x, h, m, what):
    """Zero weights, and no NaN, for the queries that see nothing under m."""
    B, N, _ = x.shape
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
        with _heads_blamed(ctx, params, x, h):
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
            expect_untouched(ctx, [("mask", mask)], "forward leaves mask unchanged", inputs, who="MultiHeadSelfAttention.forward")
        expect_tensor(ctx, x, x_before, "forward leaves x unchanged", inputs, atol=0.0, rtol=0.0)
        expect_untouched(ctx, [("x", x)], "forward leaves x unchanged", inputs, who="MultiHeadSelfAttention.forward")
