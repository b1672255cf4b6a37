"""ch05_scaling: the checks of scaled_dot_product_attention, SelfAttention (a SelfAttention that calls the
student's scaled_dot_product_attention and fails because it is wrong on the layer's own Q, K, V and mask is
told to fix it first: ``_sdpa_blamed``)."""
import itertools
import math

import torch
import torch.nn.functional as F

from autograder.checking import check, describe, expect_tensor, expect_untouched

from ..ground_truth import blame_helper, cpu64, dependency_fault
from .shared import SDPA_FORBIDDEN, A


# ---------------------------------------------------------------- scaled_dot_product_attention
def attention_truth(Q, K, V, mask=None):
    """(output, weights) in float64 on the CPU, fully masked rows set to zero."""
    Q, K, V = (t.detach().to("cpu", torch.float64) for t in (Q, K, V))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])  # (..., Nq, Nk)
    if mask is not None:
        scores = scores.masked_fill(~mask.to("cpu"), float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights


def _call_attention(ctx, Q, K, V, mask=None, inputs=""):
    args = (Q.clone(), K.clone(), V.clone()) + (() if mask is None else (mask.clone(),))
    got = ctx.call("scaled_dot_product_attention", *args)
    if not isinstance(got, tuple) or len(got) != 2:
        ctx.fail("returns the pair (output, weights)", f"got {type(got).__name__}{'' if not isinstance(got, (tuple, list)) else f' of length {len(got)}'}", inputs)
    return got


def _expect_attention(ctx, Q, K, V, mask, prop, atol=1e-5):
    inputs = f"Q {describe(Q)}, K {describe(K)}, V {describe(V)}" + ("" if mask is None else f", mask {describe(mask)}")
    out, weights = _call_attention(ctx, Q, K, V, mask, inputs)
    e_out, e_weights = attention_truth(Q, K, V, mask)
    expect_tensor(ctx, weights, e_weights.to(Q.device, Q.dtype), f"{prop}: weights = softmax(Q K^T / sqrt(d_k))", inputs, atol=atol)
    expect_tensor(ctx, out, e_out.to(Q.device, Q.dtype), f"{prop}: output = weights @ V", inputs, atol=atol)
    return out, weights


def _qkv(ctx, lead, nq, nk, dk, dv, scale=2.0, dtype=torch.float32):
    return (ctx.randn(*lead, nq, dk, scale=scale, dtype=dtype), ctx.randn(*lead, nk, dk, scale=scale, dtype=dtype), ctx.randn(*lead, nk, dv, dtype=dtype))


def _rand_mask(ctx, shape, p=0.6, every_row=True):
    mask = torch.rand(*shape, generator=ctx.gen) < p
    if every_row:  # at least one key per query
        cols = torch.randint(0, shape[-1], shape[:-1], generator=ctx.gen)
        mask.scatter_(-1, cols.unsqueeze(-1), True)
    return mask.to(ctx.device)


@check(f"{A}.scaled_dot_product_attention.values", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_values(ctx):
    """Unmasked attention on several shapes (unbatched, batched, heads, Nq != Nk, d_k != d_v, length 1)."""
    shapes = [((), 3, 3, 4, 4), ((), 2, 5, 3, 7), ((2,), 4, 6, 8, 3), ((3,), 1, 1, 5, 2), ((2, 3), 5, 4, 16, 6), ((1,), 7, 1, 2, 9)]
    for lead, nq, nk, dk, dv in shapes:
        Q, K, V = _qkv(ctx, lead, nq, nk, dk, dv)
        out, _ = _expect_attention(ctx, Q, K, V, None, "unmasked attention")
        # independent built-in on the same inputs (float64, CPU)
        builtin = F.scaled_dot_product_attention(*(t.to("cpu", torch.float64) for t in (Q, K, V)))
        expect_tensor(ctx, out, builtin.to(Q.device, Q.dtype), "agrees with torch's scaled_dot_product_attention", f"Q {describe(Q)}", atol=1e-5)


@check(f"{A}.scaled_dot_product_attention.dtype_device", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_dtype_device(ctx):
    """float64 inputs give float64 output and weights, on the device of the inputs."""
    ctx.probe_device("scaled_dot_product_attention", *_qkv(ctx, (2,), 3, 4, 5, 2))
    Q, K, V = _qkv(ctx, (2,), 4, 5, 6, 3, dtype=torch.float64)
    inputs = f"Q {describe(Q)}, K {describe(K)}, V {describe(V)}"
    out, weights = _call_attention(ctx, Q, K, V, None, inputs)
    for what, t in (("output", out), ("weights", weights)):
        if type(t) is not torch.Tensor:
            ctx.fail(f"float64 inputs give a float64 {what}", f"the {what} is {type(t).__name__}", inputs)
        if t.dtype != torch.float64:
            ctx.fail(f"float64 inputs give a float64 {what}", f"dtype {t.dtype}, expected torch.float64 (keep the input's dtype)", inputs)
        if t.device.type != ctx.device.type:
            ctx.fail(f"the {what} is on the inputs' device", f"{t.device}, expected {ctx.device}", inputs)


@check(f"{A}.scaled_dot_product_attention.stable", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_stable(ctx):
    """Scores in the thousands: finite weights and output (no overflow in the softmax)."""
    Q, K, V = _qkv(ctx, (2,), 3, 4, 8, 2, scale=60.0)
    inputs = f"Q {describe(Q)}, K {describe(K)} with entries around 60 (scores in the thousands), V {describe(V)}"
    out, weights = _call_attention(ctx, Q, K, V, None, inputs)
    for what, t in (("output", out), ("weights", weights)):
        if type(t) is not torch.Tensor or not bool(torch.isfinite(torch.Tensor.detach(t)).all()):
            ctx.fail("scores in the thousands give finite weights and output (a stable softmax)", f"the {what} contain NaN or inf (exp of a large score overflowed?)", inputs)


@check(f"{A}.scaled_dot_product_attention.unchanged", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_unchanged(ctx):
    """Q, K, V and the mask are left unchanged."""
    Q, K, V = _qkv(ctx, (3,), 4, 4, 4, 4)
    mask = _rand_mask(ctx, (3, 4, 4))
    mask[0, 1] = False
    args = (Q, K, V, mask)
    copies = [t.clone() for t in args]
    ctx.raised("scaled_dot_product_attention", *args)
    for name, t, c in zip(("Q", "K", "V", "mask"), args, copies):
        if tuple(t.shape) != tuple(c.shape) or t.dtype != c.dtype or not torch.equal(t.cpu(), c.cpu()):
            ctx.fail("Q, K, V and mask are left unchanged", f"the input {name} was modified in place", f"Q {describe(Q)}, mask {describe(mask)}")
        expect_untouched(ctx, [(name, t)], "Q, K, V and mask are left unchanged", f"Q {describe(Q)}, mask {describe(mask)}",
                         who="scaled_dot_product_attention")


def _expect_mask_relational(ctx, Q, K, V, mask, what):
    """Masked attention of query i = unmasked attention of query i over its allowed keys only, weight 0 elsewhere.

    Compares the student's masked call with the student's own unmasked calls on the sub-problems, so the
    clause is about the mask, whatever the scale or the softmax (those are the values clause).
    """
    inputs = f"Q {describe(Q)}, K {describe(K)}, V {describe(V)}, mask {describe(mask)}: {what}"
    prop = f"{what}: query i attends exactly as without a mask over its allowed keys (True = may attend), weight 0 on the others"
    out, weights = _call_attention(ctx, Q, K, V, mask, inputs)
    lead, nq, nk = Q.shape[:-2], Q.shape[-2], K.shape[-2]
    full = mask.expand(*lead, nq, nk).cpu()
    for t, name in ((out, "output"), (weights, "weights")):
        if type(t) is not torch.Tensor:
            ctx.fail(prop, f"the {name} is {type(t).__name__}", inputs)
    if tuple(weights.shape) != (*lead, nq, nk) or tuple(out.shape) != (*lead, nq, V.shape[-1]):
        ctx.fail(prop, f"weights {tuple(weights.shape)} and output {tuple(out.shape)}, expected {(*lead, nq, nk)} and {(*lead, nq, V.shape[-1])}", inputs)
    w_all, o_all = cpu64(weights), cpu64(out)
    for idx in itertools.product(*(range(s) for s in lead)):
        for i in range(nq):
            allowed = full[idx + (i,)].nonzero().flatten()
            if len(allowed) == 0:
                continue
            where = f"batch index {idx}, query {i}, allowed keys {allowed.tolist()}"
            blocked = ~full[idx + (i,)]
            if bool((w_all[idx + (i,)][blocked] != 0).any()):
                ctx.fail(prop, f"{where}: a masked key got weight {float(w_all[idx + (i,)][blocked].abs().max()):.8g}", inputs)
            sub_out, sub_w = _call_attention(ctx, Q[idx][i : i + 1], K[idx][allowed.to(K.device)], V[idx][allowed.to(V.device)], None, inputs)
            sub_w, sub_out = cpu64(sub_w).reshape(-1), cpu64(sub_out).reshape(-1)
            got_w = w_all[idx + (i,)][allowed]
            if got_w.shape != sub_w.shape or not torch.allclose(got_w, sub_w, atol=1e-5, rtol=1e-4):
                ctx.fail(prop, f"{where}: weights {_fmt(got_w)} with the mask, {_fmt(sub_w)} without it on the allowed keys alone", inputs)
            if o_all[idx + (i,)].shape != sub_out.shape or not torch.allclose(o_all[idx + (i,)], sub_out, atol=1e-5, rtol=1e-4):
                ctx.fail(prop, f"{where}: output {_fmt(o_all[idx + (i,)])} with the mask, {_fmt(sub_out)} without it on the allowed keys alone", inputs)


def _fmt(t) -> str:
    return "[" + ", ".join(f"{v:.8g}" for v in t.tolist()[:6]) + (", ...]" if t.numel() > 6 else "]")


@check(f"{A}.scaled_dot_product_attention.mask", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_mask(ctx):
    """Boolean masks that broadcast: causal (N, N), padding (B, 1, Nk), one row (1, Nk), full (B, H, Nq, Nk)."""
    n = ctx.randrange(3, 7)
    Q, K, V = _qkv(ctx, (2,), n, n, 4, 3)
    _expect_mask_relational(ctx, Q, K, V, torch.ones(n, n, dtype=torch.bool, device=ctx.device).tril(), "causal mask (N, N) on a batch")
    Q, K, V = _qkv(ctx, (3,), 4, 6, 5, 2)
    _expect_mask_relational(ctx, Q, K, V, _rand_mask(ctx, (3, 1, 6)), "padding mask (B, 1, Nk)")
    Q, K, V = _qkv(ctx, (), 3, 5, 4, 4)
    _expect_mask_relational(ctx, Q, K, V, _rand_mask(ctx, (1, 5)), "one mask row shared by every query")
    Q, K, V = _qkv(ctx, (2, 3), 4, 5, 8, 3)
    _expect_mask_relational(ctx, Q, K, V, _rand_mask(ctx, (2, 3, 4, 5)), "full mask (B, H, Nq, Nk)")


# a masked key's score this far above the allowed keys' is far past float32's exp range (exp(-88) is its
# smallest normal number): multiplying the softmax weights by the mask afterwards leaves nothing to renormalise
DOMINANCE = 1e4


def _dominated_qkv(ctx, lead, nq, nk, dk, dv, loud):
    """Q, K, V whose key ``loud`` scores about DOMINANCE above every other key, for every query."""
    Q, K, V = _qkv(ctx, lead, nq, nk, dk, dv, scale=1.0)
    Q[..., 0] = 1.0
    K[..., loud, 0] = DOMINANCE * math.sqrt(dk)  # score(i, loud) = DOMINANCE + O(1), the others O(1)
    return Q, K, V


@check(f"{A}.scaled_dot_product_attention.mask_dominated", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_mask_dominated(ctx):
    """A masked key whose score dominates by 1e4: the allowed keys keep their weights, rows stay distributions."""
    what = f"a masked key whose score is {DOMINANCE:g} above the allowed keys' (far past float32's exp range) must not change their weights"
    cases = []
    nk = ctx.randrange(4, 7)
    loud = ctx.randrange(0, nk)
    mask = _rand_mask(ctx, (3, 1, nk))
    mask[..., loud] = False
    mask[..., (loud + 1) % nk] = True  # every sentence keeps a key
    cases.append((_dominated_qkv(ctx, (3,), 4, nk, 5, 3, loud), mask, "padding mask (B, 1, Nk)"))
    n = ctx.randrange(3, 6)
    full = _rand_mask(ctx, (2, n, n))
    full[..., n - 1] = False
    full[..., 0] = True
    cases.append((_dominated_qkv(ctx, (2,), n, n, 4, 2, n - 1), full, "a full (B, Nq, Nk) mask, the last key loud"))
    shared = _rand_mask(ctx, (3, 5))
    shared[:, 2] = False
    shared[:, 0] = True
    cases.append((_dominated_qkv(ctx, (2, 2), 3, 5, 6, 4, 2), shared, "one (Nq, Nk) mask shared by a batch of heads"))
    for (Q, K, V), mask, form in cases:
        inputs = f"Q {describe(Q)}, K {describe(K)}, V {describe(V)}, mask {describe(mask)} ({form})"
        _, weights = _call_attention(ctx, Q, K, V, mask, inputs)
        if type(weights) is not torch.Tensor or tuple(weights.shape) != (*Q.shape[:-1], K.shape[-2]):
            ctx.fail(what, f"the weights are {describe(weights) if isinstance(weights, torch.Tensor) else type(weights).__name__}", inputs)
        sums = cpu64(weights).sum(-1)
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-5):
            worst = int((sums - 1).abs().flatten().argmax())
            ctx.fail(what, f"a query's weights sum to {float(sums.flatten()[worst]):.6g}, not 1: its allowed keys' weights underflowed "
                     "(a correct answer masks the scores before the softmax, so a masked key never enters it)", inputs)
        _expect_mask_relational(ctx, Q, K, V, mask, f"{form}: {what}")


def _dead_rows_case(Q, K, mask):
    """(dead rows of the broadcast mask, the same mask at full shape with those rows opened up)."""
    full = mask.expand(*Q.shape[:-2], Q.shape[-2], K.shape[-2])
    dead = ~full.any(-1)  # (..., Nq): queries with nothing to attend
    opened = full.clone()
    opened[dead] = True
    return dead.cpu(), opened


@check(f"{A}.scaled_dot_product_attention.fully_masked", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_fully_masked(ctx):
    """A query with nothing to attend gets zero weights and zero output (no NaN); the other rows are unaffected;
    for every broadcast form of the mask (full shape, (Nq, Nk) on a batch, (B, 1, Nk), (1, Nk))."""
    cases = []
    Q, K, V = _qkv(ctx, (2,), 5, 4, 3, 6)
    mask = _rand_mask(ctx, (2, 5, 4))
    for b, i in [(0, 1), (1, 4), (1, 0)]:
        mask[b, i] = False
    cases.append((Q, K, V, mask, "three fully masked rows in a (2, 5, 4) mask"))
    Q, K, V = _qkv(ctx, (), 3, 3, 2, 2)
    cases.append((Q, K, V, torch.zeros(3, 3, dtype=torch.bool, device=ctx.device), "a mask with no True at all"))
    Q, K, V = _qkv(ctx, (4,), 1, 1, 3, 2)
    cases.append((Q, K, V, torch.tensor([True, False, True, False], device=ctx.device).view(4, 1, 1), "a single key, masked in half of the batch"))
    Q, K, V = _qkv(ctx, (3,), 4, 5, 3, 2)
    shared = _rand_mask(ctx, (4, 5))
    shared[ctx.randrange(0, 4)] = False
    cases.append((Q, K, V, shared, "one (Nq, Nk) mask with a fully masked row, on a batch of 3"))
    Q, K, V = _qkv(ctx, (3,), 4, 5, 4, 3)
    padding = _rand_mask(ctx, (3, 1, 5))
    padding[1] = False
    cases.append((Q, K, V, padding, "a padding mask (B, 1, Nk) hiding every key of sentence 1"))
    Q, K, V = _qkv(ctx, (2, 2), 3, 4, 2, 2)
    cases.append((Q, K, V, torch.zeros(1, 4, dtype=torch.bool, device=ctx.device), "a (1, Nk) mask with no True, on (B, H) heads"))
    for Q, K, V, mask, what in cases:
        inputs = f"Q {describe(Q)}, K {describe(K)}, V {describe(V)}, mask {describe(mask)}: {what}"
        prop = "a query with nothing to attend gets all-zero weights and an all-zero output (no NaN), whatever the mask's broadcast form"
        out, weights = _call_attention(ctx, Q, K, V, mask, inputs)
        for name, t in (("output", out), ("weights", weights)):
            if type(t) is not torch.Tensor:
                ctx.fail(prop, f"the {name} is {type(t).__name__}", inputs)
            if bool(torch.isnan(torch.Tensor.detach(t)).any()):
                ctx.fail(prop, f"the {name} contain NaN", inputs)
        dead, opened = _dead_rows_case(Q, K, mask)
        w, o = cpu64(weights), cpu64(out)
        if tuple(w.shape[:-1]) != tuple(dead.shape) or tuple(o.shape[:-1]) != tuple(dead.shape):
            ctx.fail(prop, f"weights {tuple(w.shape)} and output {tuple(o.shape)}, expected {(*dead.shape, K.shape[-2])} and {(*dead.shape, V.shape[-1])}", inputs)
        for idx in dead.nonzero().tolist():
            idx = tuple(idx)
            if bool((w[idx] != 0).any()) or bool((o[idx] != 0).any()):
                ctx.fail(prop, f"row {idx}: weights {_fmt(w[idx])}, output {_fmt(o[idx])}, expected zeros", inputs)
        # the rows that can attend are those of the same call with the dead rows opened up
        out2, weights2 = _call_attention(ctx, Q, K, V, opened, inputs)
        alive = ~dead
        if not torch.allclose(w[alive], cpu64(weights2)[alive], atol=1e-6) or not torch.allclose(o[alive], cpu64(out2)[alive], atol=1e-6):
            ctx.fail("a fully masked query leaves the other rows unaffected", "the rows that can attend changed when other rows were fully masked", inputs)


@check(f"{A}.scaled_dot_product_attention.errors", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_errors(ctx):
    """ValueError when Q and K differ in d_k or K and V in length."""
    ctx.expect_raises(ValueError, "ValueError when Q and K have different last dimensions", "scaled_dot_product_attention",
                      ctx.randn(2, 3, 4), ctx.randn(2, 5, 3), ctx.randn(2, 5, 4))
    ctx.expect_raises(ValueError, "ValueError when K and V have different numbers of rows", "scaled_dot_product_attention",
                      ctx.randn(3, 4), ctx.randn(5, 4), ctx.randn(6, 4))


# ---------------------------------------------------------------- SelfAttention
def _layer(ctx, input_dim, dim_k, dim_v, dtype=torch.float32):
    module = ctx.call("SelfAttention", input_dim, dim_k, dim_v)
    module = ctx.method(module, "to", str(ctx.device))
    if dtype == torch.float64:
        module = ctx.method(module, "double")
    return module


def _linear_weights(ctx, module, name, out_features, in_features):
    weight, bias = ctx.attr(module, f"{name}.weight"), ctx.attr(module, f"{name}.bias")
    inputs = f"SelfAttention(input_dim={in_features}, ...)"
    if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != (out_features, in_features):
        got = tuple(weight.shape) if isinstance(weight, torch.Tensor) else type(weight).__name__
        ctx.fail(f"{name} is nn.Linear({in_features}, {out_features})", f"{name}.weight has shape {got}, expected {(out_features, in_features)}", inputs)
    if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (out_features,):
        ctx.fail(f"{name} is nn.Linear({in_features}, {out_features}) with a bias", f"{name}.bias is {describe(bias) if isinstance(bias, torch.Tensor) else bias!r}", inputs)
    return weight.detach().to("cpu", torch.float64), bias.detach().to("cpu", torch.float64)


def _read_linear(ctx, module, name):
    """The weight and bias of the student's layer ``name`` as float64 CPU tensors (a missing bias reads as 0;
    the layout itself is the parameters clause)."""
    weight = ctx.attr(module, f"{name}.weight")
    try:
        bias = ctx.attr(module, f"{name}.bias")
    except AttributeError:
        bias = None
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        ctx.fail(f"{name} is an nn.Linear", f"{name}.weight is {describe(weight) if isinstance(weight, torch.Tensor) else type(weight).__name__}", "SelfAttention")
    weight = weight.detach().to("cpu", torch.float64)
    bias = torch.zeros(weight.shape[0], dtype=torch.float64) if not isinstance(bias, torch.Tensor) else bias.detach().to("cpu", torch.float64)
    return weight, bias


def self_attention_truth(ctx, module, x, mask, input_dim, dim_k, dim_v):
    (wq, bq), (wk, bk), (wv, bv) = (_read_linear(ctx, module, n) for n in ("q", "k", "v"))
    x64 = x.detach().to("cpu", torch.float64)
    out, _ = attention_truth(x64 @ wq.T + bq, x64 @ wk.T + bk, x64 @ wv.T + bv, mask)
    return out.to(x.device, x.dtype)


def _sdpa_fault(ctx, module, x, mask, clause=None):
    """``(clause, what is wrong)`` with the student's scaled_dot_product_attention on the Q, K, V (and mask) that the
    layer's own q, k, v make of x, or None."""
    (wq, bq), (wk, bk), (wv, bv) = (_read_linear(ctx, module, n) for n in ("q", "k", "v"))
    x64 = x.detach().to("cpu", torch.float64)
    Q, K, V = (x64 @ w.T + b for w, b in ((wq, bq), (wk, bk), (wv, bv)))
    truth = tuple(t.to(x.device, x.dtype) for t in attention_truth(Q, K, V, mask))
    args = tuple(t.to(x.device, x.dtype) for t in (Q, K, V)) + (() if mask is None else (mask,))
    what = f"the layer's Q {describe(args[0])}, K, V" + ("" if mask is None else f" and mask {describe(mask)}")
    fault = dependency_fault(ctx, "scaled_dot_product_attention", args, truth, what, atol=1e-4)
    if fault is None:
        return None
    if clause is None:
        clause = "values" if mask is None else "fully_masked" if bool((~mask).all(dim=-1).any()) else "mask"
    return f"{A}.scaled_dot_product_attention.{clause}", fault


def _sdpa_blamed(ctx, module, x, mask, clause=None):
    return blame_helper(ctx, "SelfAttention", "scaled_dot_product_attention", lambda: _sdpa_fault(ctx, module, x, mask, clause))


def _expect_layer(ctx, module, x, mask, dims, prop, atol=1e-4):
    inputs = f"SelfAttention{dims}, x {describe(x)}" + ("" if mask is None else f", mask {describe(mask)}")
    with _sdpa_blamed(ctx, module, x, mask):
        got = ctx.method(module, "__call__", x.clone()) if mask is None else ctx.method(module, "__call__", x.clone(), mask=mask.clone())
        expect_tensor(ctx, got, self_attention_truth(ctx, module, x, mask, *dims), prop, inputs, atol=atol)


@check(f"{A}.SelfAttention.parameters", "SelfAttention", SDPA_FORBIDDEN)
def self_attention_parameters(ctx):
    """Attributes q, k, v are nn.Linear(input_dim, dim_k / dim_k / dim_v) with biases."""
    for dims in [(5, 3, 7), (8, 8, 8), (2, 6, 1)]:
        module = ctx.call("SelfAttention", *dims)
        input_dim, dim_k, dim_v = dims
        for name, out in (("q", dim_k), ("k", dim_k), ("v", dim_v)):
            _linear_weights(ctx, module, name, out, input_dim)


@check(f"{A}.SelfAttention.values", "SelfAttention", SDPA_FORBIDDEN)
def self_attention_values(ctx):
    """forward(x) = softmax(Q K^T / sqrt(dim_k)) V from the layer's own weights, several shapes."""
    for (b, n), dims in [((2, 5), (6, 4, 3)), ((1, 1), (4, 2, 5)), ((3, 7), (8, 16, 4)), ((4, 2), (3, 9, 9))]:
        module = _layer(ctx, *dims)
        _expect_layer(ctx, module, ctx.randn(b, n, dims[0], scale=2.0), None, dims, "output = softmax(Q K^T / sqrt(dim_k)) V, shape (B, N, dim_v)")


@check(f"{A}.SelfAttention.mask", "SelfAttention", SDPA_FORBIDDEN)
def self_attention_mask(ctx):
    """Causal (N, N), padding (B, 1, N) and per-sentence (B, N, N) masks, with fully masked rows."""
    dims = (6, 4, 5)
    module = _layer(ctx, *dims)
    n = ctx.randrange(3, 7)
    _expect_layer(ctx, module, ctx.randn(2, n, 6, scale=2.0), torch.ones(n, n, dtype=torch.bool, device=ctx.device).tril(), dims, "causal mask")
    _expect_layer(ctx, module, ctx.randn(3, 5, 6, scale=2.0), _rand_mask(ctx, (3, 1, 5)), dims, "padding mask (B, 1, N)")
    mask = _rand_mask(ctx, (2, 4, 4))
    mask[1, 2] = False  # query 2 of sentence 1 has nothing to attend
    _expect_layer(ctx, module, ctx.randn(2, 4, 6, scale=2.0), mask, dims, "a fully masked query gives a zero output row")
    # the same in the broadcast forms: one (N, N) mask for the batch, a padding mask hiding a whole sentence
    shared = _rand_mask(ctx, (4, 4))
    shared[ctx.randrange(0, 4)] = False
    _expect_layer(ctx, module, ctx.randn(3, 4, 6, scale=2.0), shared, dims, "an (N, N) mask with a fully masked query, on a batch: a zero output row")
    padding = _rand_mask(ctx, (3, 1, 5))
    padding[2] = False
    _expect_layer(ctx, module, ctx.randn(3, 5, 6, scale=2.0), padding, dims, "a padding mask (B, 1, N) hiding all of sentence 2: zero output rows")


@check(f"{A}.SelfAttention.no_extra_parameters", "SelfAttention", SDPA_FORBIDDEN)
def self_attention_no_extra(ctx):
    """The state_dict holds exactly q, k and v's weights and biases."""
    for dims in [(5, 3, 7), (4, 4, 2)]:
        module = ctx.call("SelfAttention", *dims)
        state = ctx.method(module, "state_dict")
        keys = sorted(str(k) for k in dict.keys(state))
        allowed = {f"{n}.{p}" for n in "qkv" for p in ("weight", "bias")}
        extra = [k for k in keys if k not in allowed]
        if extra:
            ctx.fail("no parameters or buffers other than those of q, k and v", f"state_dict has {extra} besides q, k and v's weights and biases", f"SelfAttention{dims}")


@check(f"{A}.SelfAttention.dtype_device", "SelfAttention", SDPA_FORBIDDEN)
def self_attention_dtype_device(ctx):
    """A float64 layer on float64 input gives float64, on the input's device."""
    dims = (5, 3, 2)
    module = _layer(ctx, *dims, dtype=torch.float64)
    x = ctx.randn(2, 4, 5, dtype=torch.float64, scale=2.0)
    inputs = f"SelfAttention{dims}.double(), x {describe(x)}"
    with _sdpa_blamed(ctx, module, x, None, "dtype_device"):
        _float64_output(ctx, ctx.method(module, "__call__", x.clone()), inputs)


def _float64_output(ctx, got, inputs):
    if type(got) is not torch.Tensor:
        ctx.fail("a float64 layer and input give a float64 output", f"got {type(got).__name__}", inputs)
    if got.dtype != torch.float64:
        ctx.fail("a float64 layer and input give a float64 output", f"dtype {got.dtype}, expected torch.float64", inputs)
    if got.device.type != ctx.device.type:
        ctx.fail("the output is on the input's device", f"{got.device}, expected {ctx.device}", inputs)
