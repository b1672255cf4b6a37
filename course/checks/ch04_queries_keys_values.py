"""Hidden checks for 04-queries-keys-values.

Ground truths are computed on the CPU in float64: ``torch.einsum`` for the
projections and dot-product scores, an explicit loop over every (query, key)
pair for additive scores, ``torch.softmax`` for the weights, and the whole layer
``softmax(X W_q (X W_k)^T) X W_v`` written out independently. Shapes are chosen
so that swapped roles show: ``d_in``, ``d_k`` and ``d_v`` differ, ``Nq != Nk``,
and square cases (where a transpose still "fits") are included too.

One check per clause (``CLAUSES`` below): the value checks compare formulas on
float32 inputs; the dtype/device checks look only at the dtype and device of the
results; the "unchanged" checks only at the inputs after the call. So a wrong
formula, a cast to float32 and an in-place operation each cost exactly one clause.
"""
import math

import torch

from autograder.checking import call_leaves_unchanged, check, contract_clauses, describe, expect_dtype, expect_tensor
from .ground_truth import blame_helpers, cpu64, first_fault, float64_ok, like

A = ASSIGNMENT = "04"
CONTRACT = ["project_qkv", "dot_product_scores", "additive_scores", "attend", "self_attention", "successor_projections"]

ATTENTION_FORBIDDEN = ("torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention")

CLAUSES = contract_clauses(__file__, globals())

# (batch dims, N, d_in, d_k, d_v)
LAYER_SHAPES = [((), 5, 4, 3, 2), ((), 4, 4, 4, 4), ((2,), 6, 5, 3, 4), ((3, 2), 4, 3, 2, 5), ((), 1, 3, 2, 2)]
# (batch dims, Nq, Nk, d)
SCORE_SHAPES = [((), 4, 6, 3), ((), 5, 5, 5), ((2,), 3, 7, 4), ((2, 3), 4, 2, 3), ((), 1, 5, 2), ((), 6, 1, 4)]


def _project_truth(X, W):
    return torch.einsum("...ni,ik->...nk", cpu64(X), cpu64(W))


def _dot_truth(Q, K):
    return torch.einsum("...id,...jd->...ij", cpu64(Q), cpu64(K))


def _additive_truth(Q, K, w):
    """S[..., i, j] = w . tanh(Q[..., i, :] + K[..., j, :]), one pair at a time."""
    Q, K, w = cpu64(Q), cpu64(K), cpu64(w)
    S = torch.empty(*Q.shape[:-1], K.shape[-2], dtype=torch.float64)
    for i in range(Q.shape[-2]):
        for j in range(K.shape[-2]):
            S[..., i, j] = (torch.tanh(Q[..., i, :] + K[..., j, :]) * w).sum(dim=-1)
    return S


def _attend_truth(scores, V):
    weights = torch.softmax(cpu64(scores), dim=-1)
    return torch.einsum("...ij,...jd->...id", weights, cpu64(V)), weights


def _layer_truth(X, Wq, Wk, Wv):
    Q, K, V = (_project_truth(X, W) for W in (Wq, Wk, Wv))
    return _attend_truth(_dot_truth(Q, K), V)[0]


def _seq(ctx, got, n, prop, inputs):
    """The result must hold n results (a tuple or a list: the type itself is its own clause)."""
    if not isinstance(got, (tuple, list)) or len(got) != n:
        kind = type(got).__name__ + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else "")
        ctx.fail(prop, f"expected {n} results, got a {kind}", inputs)
    return got


def _weights(ctx, d_in, d_k, d_v, dtype=torch.float32):
    return ctx.randn(d_in, d_k, dtype=dtype), ctx.randn(d_in, d_k, dtype=dtype), ctx.randn(d_in, d_v, dtype=dtype)


def _expect_dtype(ctx, got, dtype, prop, inputs):
    """Only the type, dtype and device of one result (its values are other clauses)."""
    expect_dtype(ctx, got, dtype, prop, inputs, device=ctx.device, why=" (keep the input's dtype)")


# ---------------------------------------------------------------- project_qkv
@check(f"{A}.project_qkv.values", "project_qkv")
def project_values(ctx):
    """(X W_q, X W_k, X W_v) in that order, for X of shape (..., N, d_in) and weights multiplying on the right."""
    for batch, n, d_in, d_k, d_v in LAYER_SHAPES:
        X = ctx.randn(*batch, n, d_in)
        Wq, Wk, Wv = _weights(ctx, d_in, d_k, d_v)
        inputs = f"X {describe(X)}, W_q {describe(Wq)}, W_k {describe(Wk)}, W_v {describe(Wv)}"
        got = _seq(ctx, ctx.call("project_qkv", X.clone(), Wq.clone(), Wk.clone(), Wv.clone()), 3, "returns (Q, K, V)", inputs)
        for position, (name, part, W) in enumerate(zip("QKV", got, (Wq, Wk, Wv))):
            expect_tensor(ctx, part, like(_project_truth(X, W), X), f"{name} = X @ W_{name.lower()} (position {position} of the tuple)", inputs)


@check(f"{A}.project_qkv.tuple", "project_qkv")
def project_tuple(ctx):
    """The result is a tuple (the contract's return type)."""
    X = ctx.randn(2, 4, 3)
    Wq, Wk, Wv = _weights(ctx, 3, 2, 5)
    got = ctx.call("project_qkv", X, Wq, Wk, Wv)
    if type(got) is not tuple:
        ctx.fail("returns a tuple (Q, K, V)", f"got a {type(got).__name__}", f"X {describe(X)}")


@check(f"{A}.project_qkv.dtype_device", "project_qkv")
def project_dtype_device(ctx):
    """float64 in, float64 out; the device of X."""
    X = ctx.randn(2, 5, 4)
    Wq, Wk, Wv = _weights(ctx, 4, 3, 6)
    ctx.probe_device("project_qkv", X, Wq, Wk, Wv)
    if float64_ok(ctx):
        X = ctx.randn(5, 4, dtype=torch.float64)
        Wq, Wk, Wv = _weights(ctx, 4, 3, 6, dtype=torch.float64)
        inputs = f"X {describe(X)}, W_q {describe(Wq)}, W_v {describe(Wv)}"
        got = _seq(ctx, ctx.call("project_qkv", X, Wq, Wk, Wv), 3, "returns (Q, K, V)", inputs)
        for name, part in zip("QKV", got):
            _expect_dtype(ctx, part, torch.float64, f"float64 inputs give a float64 {name}", inputs)


@check(f"{A}.project_qkv.unchanged", "project_qkv")
def project_unchanged(ctx):
    """No input is modified."""
    X = ctx.randn(2, 4, 3)
    call_leaves_unchanged(ctx, "project_qkv", (X, *_weights(ctx, 3, 2, 5)), prop="X, W_q, W_k and W_v are left unchanged", may_raise=True)


# ---------------------------------------------------------------- dot_product_scores
@check(f"{A}.dot_product_scores.values", "dot_product_scores", ATTENTION_FORBIDDEN)
def dot_scores_values(ctx):
    """S[..., i, j] = Q[..., i, :] . K[..., j, :], shape (..., Nq, Nk), unscaled (d up to 16)."""
    for batch, nq, nk, d in SCORE_SHAPES + [((), 3, 5, 16)]:
        Q, K = ctx.randn(*batch, nq, d), ctx.randn(*batch, nk, d)
        got = ctx.call("dot_product_scores", Q.clone(), K.clone())
        truth = _dot_truth(Q, K)
        inputs = f"Q {describe(Q)}, K {describe(K)}"
        if type(got) is torch.Tensor and got.shape == truth.shape and d > 1 and torch.allclose(cpu64(got), truth / math.sqrt(d), atol=1e-4):
            ctx.fail("S = Q K^T, unscaled", "the scores are divided by sqrt(d): no 1/sqrt(d) scale in this chapter", inputs)
        expect_tensor(ctx, got, like(truth, Q), "S[..., i, j] = query i . key j (unscaled), shape (..., Nq, Nk)", inputs)


@check(f"{A}.dot_product_scores.dtype_device", "dot_product_scores", ATTENTION_FORBIDDEN)
def dot_scores_dtype_device(ctx):
    """float64 in, float64 out; the device of Q."""
    ctx.probe_device("dot_product_scores", ctx.randn(2, 3, 4), ctx.randn(2, 5, 4))
    if float64_ok(ctx):
        Q, K = ctx.randn(4, 4, dtype=torch.float64), ctx.randn(4, 4, dtype=torch.float64)
        _expect_dtype(ctx, ctx.call("dot_product_scores", Q, K), torch.float64, "float64 inputs give float64 scores", f"Q {describe(Q)}, K {describe(K)}")


@check(f"{A}.dot_product_scores.unchanged", "dot_product_scores", ATTENTION_FORBIDDEN)
def dot_scores_unchanged(ctx):
    """No input is modified."""
    call_leaves_unchanged(ctx, "dot_product_scores", (ctx.randn(2, 3, 4), ctx.randn(2, 5, 4)), prop="Q and K are left unchanged", may_raise=True)


# ---------------------------------------------------------------- additive_scores
@check(f"{A}.additive_scores.values", "additive_scores")
def additive_values(ctx):
    """S[..., i, j] = w . tanh(Q[..., i, :] + K[..., j, :]), shape (..., Nq, Nk)."""
    for batch, nq, nk, d in SCORE_SHAPES:
        Q, K, w = ctx.randn(*batch, nq, d), ctx.randn(*batch, nk, d), ctx.randn(d)
        got = ctx.call("additive_scores", Q.clone(), K.clone(), w.clone())
        expect_tensor(ctx, got, like(_additive_truth(Q, K, w), Q), "S[..., i, j] = w . tanh(q_i + k_j), shape (..., Nq, Nk)", f"Q {describe(Q)}, K {describe(K)}, w {describe(w)}")


@check(f"{A}.additive_scores.saturation", "additive_scores")
def additive_saturation(ctx):
    """Entries in the hundreds: finite scores, bounded by sum |w| (the formula itself is the values clause)."""
    Q, K, w = ctx.randn(4, 3, scale=300.0), ctx.randn(6, 3, scale=300.0), ctx.randn(3)
    inputs = f"Q {describe(Q)}, K {describe(K)} with entries in the hundreds, w {describe(w)}"
    got = ctx.call("additive_scores", Q.clone(), K.clone(), w.clone())
    prop = "entries in the hundreds give finite scores with |score| <= sum |w| (tanh saturates)"
    if type(got) is not torch.Tensor or not got.is_floating_point():
        ctx.fail(prop, f"expected a floating-point torch.Tensor, got {describe(got) if isinstance(got, torch.Tensor) else type(got).__name__}", inputs)
    g = cpu64(got)
    if not bool(torch.isfinite(g).all()):
        ctx.fail(prop, f"non-finite score {g[~torch.isfinite(g)][0].item()} (an exponential overflowed?)", inputs)
    bound = float(w.abs().sum())
    if float(g.abs().max()) > bound * (1 + 1e-5) + 1e-5:
        ctx.fail(prop, f"a score of absolute value {float(g.abs().max()):.8g} exceeds sum |w| = {bound:.8g}", inputs)


@check(f"{A}.additive_scores.dtype_device", "additive_scores")
def additive_dtype_device(ctx):
    """float64 in, float64 out; the device of Q."""
    ctx.probe_device("additive_scores", ctx.randn(2, 3, 4), ctx.randn(2, 5, 4), ctx.randn(4))
    if float64_ok(ctx):
        Q, K, w = ctx.randn(3, 4, dtype=torch.float64), ctx.randn(5, 4, dtype=torch.float64), ctx.randn(4, dtype=torch.float64)
        _expect_dtype(ctx, ctx.call("additive_scores", Q, K, w), torch.float64, "float64 inputs give float64 scores", f"Q {describe(Q)}, K {describe(K)}, w {describe(w)}")


@check(f"{A}.additive_scores.unchanged", "additive_scores")
def additive_unchanged(ctx):
    """No input is modified."""
    call_leaves_unchanged(ctx, "additive_scores", (ctx.randn(2, 3, 4), ctx.randn(2, 5, 4), ctx.randn(4)), prop="Q, K and w are left unchanged", may_raise=True)


# ---------------------------------------------------------------- attend
def _expect_attend(ctx, scores, V, what):
    inputs = f"scores {describe(scores)}, V {describe(V)}" + (f": {what}" if what else "")
    out, weights = _seq(ctx, ctx.call("attend", scores.clone(), V.clone()), 2, "returns (output, weights)", inputs)
    true_out, true_weights = _attend_truth(scores, V)
    expect_tensor(ctx, weights, like(true_weights, scores), "weights = softmax over the keys (each row sums to 1), second in the tuple", inputs)
    expect_tensor(ctx, out, like(true_out, V), "output = weights @ V, first in the tuple", inputs)


@check(f"{A}.attend.values", "attend", ATTENTION_FORBIDDEN)
def attend_values(ctx):
    """(softmax(scores) @ V, softmax(scores)), softmax over the keys (last dim), in that order."""
    for batch, nq, nk, d_v in SCORE_SHAPES:
        _expect_attend(ctx, ctx.randn(*batch, nq, nk, scale=2.0), ctx.randn(*batch, nk, d_v), "")


@check(f"{A}.attend.stable", "attend", ATTENTION_FORBIDDEN)
def attend_stable(ctx):
    """Adding 1000 to every score changes nothing (softmax is shift invariant): no overflow, no NaN."""
    scores, V = ctx.randn(2, 3, 5, scale=2.0), ctx.randn(2, 5, 4)
    inputs = f"scores {describe(scores)} + 1000, V {describe(V)}"
    prop = "scores in the thousands give the same weights and output as the same scores minus 1000 (a stable softmax)"
    small = _seq(ctx, ctx.call("attend", scores.clone(), V.clone()), 2, "returns (output, weights)", inputs)
    large = _seq(ctx, ctx.call("attend", scores + 1000.0, V.clone()), 2, "returns (output, weights)", inputs)
    for what, got, ref in (("weights", large[1], small[1]), ("output", large[0], small[0])):
        if type(got) is not torch.Tensor or type(ref) is not torch.Tensor:
            ctx.fail(prop, f"the {what} is not a tensor", inputs)
        expect_tensor(ctx, got, torch.Tensor.detach(ref), f"{prop} ({what})", inputs, atol=1e-4)


@check(f"{A}.attend.masked", "attend", ATTENTION_FORBIDDEN)
def attend_masked(ctx):
    """-inf scores get weight exactly 0, and nothing becomes NaN."""
    scores = ctx.randn(4, 6)
    masked = [(0, 1), (2, 0), (2, 5), (3, 3)]
    for i, j in masked:
        scores[i, j] = float("-inf")
    V = ctx.randn(6, 3)
    inputs = f"scores {describe(scores)} with -inf at {masked}, V {describe(V)}"
    out, weights = _seq(ctx, ctx.call("attend", scores.clone(), V.clone()), 2, "returns (output, weights)", inputs)
    prop = "a score of -inf gives weight exactly 0"
    for what, t in (("weights", weights), ("output", out)):
        if type(t) is not torch.Tensor:
            ctx.fail(prop, f"the {what} is {type(t).__name__}, not a tensor", inputs)
        if bool(torch.isnan(torch.Tensor.detach(t)).any()):
            ctx.fail(prop, f"the {what} contain NaN", inputs)
    w = cpu64(weights)
    if w.shape != scores.shape:
        ctx.fail(prop, f"weights of shape {tuple(w.shape)}, expected {tuple(scores.shape)}", inputs)
    for i, j in masked:
        if w[i, j] != 0:
            ctx.fail(prop, f"weights[{i}, {j}] is {w[i, j].item():.8g} for a score of -inf", inputs)


@check(f"{A}.attend.dtype_device", "attend", ATTENTION_FORBIDDEN)
def attend_dtype_device(ctx):
    """float64 in, float64 out; the device of the scores."""
    ctx.probe_device("attend", ctx.randn(2, 3, 4), ctx.randn(2, 4, 5))
    if float64_ok(ctx):
        scores, V = ctx.randn(3, 4, dtype=torch.float64), ctx.randn(4, 5, dtype=torch.float64)
        inputs = f"scores {describe(scores)}, V {describe(V)}"
        out, weights = _seq(ctx, ctx.call("attend", scores, V), 2, "returns (output, weights)", inputs)
        _expect_dtype(ctx, weights, torch.float64, "float64 inputs give float64 weights", inputs)
        _expect_dtype(ctx, out, torch.float64, "float64 inputs give a float64 output", inputs)


@check(f"{A}.attend.unchanged", "attend", ATTENTION_FORBIDDEN)
def attend_unchanged(ctx):
    """No input is modified."""
    call_leaves_unchanged(ctx, "attend", (ctx.randn(2, 3, 4, scale=3.0), ctx.randn(2, 4, 5)), prop="scores and V are left unchanged", may_raise=True)


# ---------------------------------------------------------------- self_attention
def _parts_blamed(ctx, X, Wq, Wk, Wv, clause: str = "values"):
    """A self_attention that calls the student's project_qkv, dot_product_scores and attend and fails because one
    of them is wrong on what a correct layer hands it (X and the weights; the true Q and K; the true scores and V)
    is told to fix that one first, the first in the order the layer uses them (``blame_helpers``); ``clause``:
    each helper's clause of the same property (``values``, ``dtype_device``; ``stable`` is attend's alone)."""
    def parts():
        return tuple(like(_project_truth(X, W), X) for W in (Wq, Wk, Wv))

    def scores():
        Q, K, _ = parts()
        return like(_dot_truth(Q, K), X)

    def project():
        return first_fault(ctx, "project_qkv", [(f"{A}.project_qkv.{clause}", (X, Wq, Wk, Wv), parts(), f"X {describe(X)} and the same weights", {})])

    def dot():
        Q, K, _ = parts()
        return first_fault(ctx, "dot_product_scores", [(f"{A}.dot_product_scores.{clause}", (Q, K), scores(), f"Q = X W_q {describe(Q)}, K = X W_k", {})])

    def att():
        truth = tuple(like(t, X) for t in _attend_truth(scores(), parts()[2]))
        own = clause if clause != "values" or float(scores().abs().max()) < 80 else "stable"  # exp overflows float32 past 88
        return first_fault(ctx, "attend", [(f"{A}.attend.{own}", (scores(), parts()[2]), truth, "the scores Q Kᵀ and V", {"atol": 1e-4})])

    return blame_helpers(ctx, "self_attention", [("project_qkv", project), ("dot_product_scores", dot), ("attend", att)])


@check(f"{A}.self_attention.values", "self_attention", ATTENTION_FORBIDDEN)
def self_attention_values(ctx):
    """softmax(X W_q (X W_k)^T) X W_v end to end, unscaled, shape (..., N, d_v); d_k up to 16."""
    for batch, n, d_in, d_k, d_v in LAYER_SHAPES + [((), 5, 4, 16, 3)]:
        X = ctx.randn(*batch, n, d_in)
        Wq, Wk, Wv = _weights(ctx, d_in, d_k, d_v)
        inputs = f"X {describe(X)}, W_q {describe(Wq)}, W_v {describe(Wv)}"
        with _parts_blamed(ctx, X, Wq, Wk, Wv):
            _expect_layer_values(ctx, ctx.call("self_attention", X.clone(), Wq.clone(), Wk.clone(), Wv.clone()), X, Wq, Wk, Wv, inputs)


def _expect_layer_values(ctx, got, X, Wq, Wk, Wv, inputs):
    n, d_k = X.shape[-2], Wq.shape[-1]
    if isinstance(got, (tuple, list)):
        ctx.fail("returns the output only", f"got a {type(got).__name__} of length {len(got)} (return the output, not the weights)", inputs)
    truth = _layer_truth(X, Wq, Wk, Wv)
    if type(got) is torch.Tensor and got.shape == truth.shape and n > 1:
        Q, K, V = (_project_truth(X, W) for W in (Wq, Wk, Wv))
        scaled = _attend_truth(_dot_truth(Q, K) / math.sqrt(d_k), V)[0]
        if not torch.allclose(truth, scaled, atol=1e-3) and torch.allclose(cpu64(got), scaled, atol=1e-4):
            ctx.fail("softmax(Q K^T) V, unscaled", "the scores are divided by sqrt(d_k): no scale in this chapter", inputs)
    expect_tensor(ctx, got, like(truth, X), "softmax(Q K^T) V with Q, K, V = X W_q, X W_k, X W_v (unscaled, softmax over the keys)", inputs)


@check(f"{A}.self_attention.stable", "self_attention", ATTENTION_FORBIDDEN)
def self_attention_stable(ctx):
    """Scores in the hundreds: finite outputs, and exactly zero when W_v = 0 (the formula itself is the values clause)."""
    X = ctx.randint(-3, 4, (2, 5, 4)).to(torch.float32)
    X[0, 0] = 3.0
    Wq = ctx.randint(-2, 3, (4, 6)).to(torch.float32)
    Wq[:, 0] = 2.0  # query (and key) 0 of sentence 0 has a coordinate 24: its own score is >= 576
    Wv = ctx.randint(-2, 3, (4, 3)).to(torch.float32)
    inputs = f"X {describe(X)} and weights with integer entries, W_k = W_q, scores up to {float(_dot_truth(X @ Wq, X @ Wq).max()):.0f}"
    prop = "scores in the hundreds give finite outputs (a stable softmax)"
    for W_v, what in ((Wv, "W_v with integer entries"), (torch.zeros_like(Wv), "W_v = 0")):
        with _parts_blamed(ctx, X, Wq, Wq, W_v):
            got = ctx.call("self_attention", X.clone(), Wq.clone(), Wq.clone(), W_v.clone())
            if type(got) is not torch.Tensor:
                ctx.fail(prop, f"expected a torch.Tensor, got {type(got).__name__}", inputs + f", {what}")
            g = cpu64(got)
            if not bool(torch.isfinite(g).all()):
                ctx.fail(prop, "the output contains NaN or inf (exp of a large score overflowed?)", inputs + f", {what}")
            if what == "W_v = 0" and bool((g != 0).any()):
                ctx.fail(prop, f"W_v = 0 must give a zero output, got a largest entry {float(g.abs().max()):.8g}", inputs + f", {what}")


@check(f"{A}.self_attention.dtype_device", "self_attention", ATTENTION_FORBIDDEN)
def self_attention_dtype_device(ctx):
    """float64 in, float64 out; the device of X."""
    ctx.probe_device("self_attention", ctx.randn(2, 3, 4), *_weights(ctx, 4, 2, 5))
    if float64_ok(ctx):
        X = ctx.randn(3, 4, dtype=torch.float64)
        Wq, Wk, Wv = _weights(ctx, 4, 2, 5, dtype=torch.float64)
        with _parts_blamed(ctx, X, Wq, Wk, Wv, "dtype_device"):
            _expect_dtype(ctx, ctx.call("self_attention", X.clone(), Wq.clone(), Wk.clone(), Wv.clone()), torch.float64, "float64 inputs give a float64 output", f"X {describe(X)}")


@check(f"{A}.self_attention.unchanged", "self_attention", ATTENTION_FORBIDDEN)
def self_attention_unchanged(ctx):
    """No input is modified (also for an unbatched X)."""
    for batch in [(), (2,)]:
        X = ctx.randn(*batch, 4, 3)
        call_leaves_unchanged(ctx, "self_attention", (X, *_weights(ctx, 3, 2, 5)), prop="X, W_q, W_k and W_v are left unchanged", may_raise=True)


# ---------------------------------------------------------------- successor_projections
SUCCESSOR_THRESHOLD = 0.9


def _successor_pair(ctx, n, d_k, prop):
    got = ctx.call("successor_projections", n, d_k)
    inputs = f"n={n}, d_k={d_k}"
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(t, torch.Tensor) for t in got):
        ctx.fail(prop, f"expected two tensors (W_q, W_k), got {type(got).__name__}", inputs)
    return got


@check(f"{A}.successor_projections.shapes", "successor_projections")
def successor_shapes(ctx):
    """A tuple of two float32 tensors of shape (n, d_k)."""
    for n, d_k in [(5, 2), (ctx.randrange(3, 12), ctx.randrange(2, 20)), (4, 9)]:
        got = _successor_pair(ctx, n, d_k, "returns (W_q, W_k)")
        inputs = f"n={n}, d_k={d_k}"
        if type(got) is not tuple:
            ctx.fail("returns a tuple (W_q, W_k)", f"got a {type(got).__name__}", inputs)
        for name, W in zip(("W_q", "W_k"), got):
            if type(W) is not torch.Tensor or tuple(W.shape) != (n, d_k) or W.dtype != torch.float32:
                ctx.fail(f"{name} is a float32 tensor of shape (n, d_k)", f"{name} is {describe(W)}, expected tensor({(n, d_k)}) float32", inputs)


@check(f"{A}.successor_projections.successor", "successor_projections")
def successor_weights(ctx):
    """softmax((I W_q)(I W_k)^T)[i, (i + 1) % n] >= 0.9 for every i, over n and d_k."""
    cases = [(2, 2), (5, 2), (8, 3), (ctx.randrange(3, 33), 2), (ctx.randrange(3, 33), ctx.randrange(2, 41)), (32, 2), (16, 16), (12, 40)]
    for n, d_k in cases:
        Wq, Wk = _successor_pair(ctx, n, d_k, "returns (W_q, W_k)")
        inputs = f"n={n}, d_k={d_k}, X = torch.eye({n})"
        Wq, Wk = cpu64(torch.Tensor.detach(Wq)), cpu64(torch.Tensor.detach(Wk))
        if Wq.dim() != 2 or Wk.dim() != 2 or Wq.shape[0] != n or Wk.shape[0] != n or Wq.shape[1] != Wk.shape[1]:
            ctx.fail("softmax((X W_q)(X W_k)^T) is an (n, n) attention matrix", f"W_q {tuple(Wq.shape)} and W_k {tuple(Wk.shape)} do not give one", inputs)
        X = torch.eye(n, dtype=torch.float64)
        weights = torch.softmax((X @ Wq) @ (X @ Wk).T, dim=-1)  # (n, n)
        if not bool(torch.isfinite(weights).all()):
            ctx.fail("each token attends to its successor", "the attention weights contain NaN or inf", inputs)
        for i in range(n):
            j = (i + 1) % n
            if weights[i, j] < SUCCESSOR_THRESHOLD:
                top = int(weights[i].argmax())
                ctx.fail(f"token i attends to its successor (i + 1) % n with weight >= {SUCCESSOR_THRESHOLD}",
                         f"row {i} gives weight {float(weights[i, j]):.6f} to token {j}; its largest weight {float(weights[i, top]):.6f} is on token {top}", inputs)


@check(f"{A}.successor_projections.errors", "successor_projections")
def successor_errors(ctx):
    """ValueError for n < 2 or d_k < 2."""
    for args in [(1, 4), (0, 3), (6, 1), (6, 0)]:
        ctx.expect_raises(ValueError, "ValueError when n < 2 or d_k < 2", "successor_projections", *args)
