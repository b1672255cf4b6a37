"""Hidden checks for 04-queries-keys-values.

Ground truths are computed on the CPU in float64: ``torch.einsum`` for the
projections and dot-product scores, an explicit loop over every (query, key)
pair for additive scores, ``torch.softmax`` for the weights, and the whole layer
``softmax(X W_q (X W_k)^T) X W_v`` written out independently. Shapes are chosen
so that swapped roles show: ``d_in``, ``d_k`` and ``d_v`` differ, ``Nq != Nk``,
and square cases (where a transpose still "fits") are included too.
"""
import torch

from autograder.checking import check, describe, expect_tensor
from .ground_truth import cpu64, float64_ok, like

A = ASSIGNMENT = "04"
CONTRACT = ["project_qkv", "dot_product_scores", "additive_scores", "attend", "self_attention"]

ATTENTION_FORBIDDEN = ("torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention")

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


def _pair(ctx, got, n, prop, inputs):
    """The result must be a tuple of n tensors (the contract's return type)."""
    if type(got) is not tuple or len(got) != n:
        kind = type(got).__name__ + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else "")
        ctx.fail(prop, f"expected a tuple of {n} tensors, got a {kind}", inputs)
    return got


def _weights(ctx, batch, d_in, d_k, d_v, dtype=torch.float32):
    return ctx.randn(d_in, d_k, dtype=dtype), ctx.randn(d_in, d_k, dtype=dtype), ctx.randn(d_in, d_v, dtype=dtype)


# ---------------------------------------------------------------- project_qkv
@check(f"{A}.project_qkv.values", "project_qkv")
def project_values(ctx):
    """(X W_q, X W_k, X W_v) in that order, for X of shape (..., N, d_in) and weights multiplying on the right."""
    for batch, n, d_in, d_k, d_v in LAYER_SHAPES:
        X = ctx.randn(*batch, n, d_in)
        Wq, Wk, Wv = _weights(ctx, batch, d_in, d_k, d_v)
        inputs = f"X {describe(X)}, W_q {describe(Wq)}, W_k {describe(Wk)}, W_v {describe(Wv)}"
        got = _pair(ctx, ctx.call("project_qkv", X.clone(), Wq.clone(), Wk.clone(), Wv.clone()), 3, "returns the tuple (Q, K, V)", inputs)
        for name, part, W in zip("QKV", got, (Wq, Wk, Wv)):
            expect_tensor(ctx, part, like(_project_truth(X, W), X), f"{name} = X @ W_{name.lower()} (position {'QKV'.index(name)} of the tuple)", inputs)


@check(f"{A}.project_qkv.properties", "project_qkv")
def project_properties(ctx):
    """Identity weights give X three times; linear in X; float64 kept."""
    X = ctx.randn(2, 4, 3)
    eye = torch.eye(3, device=ctx.device)
    got = _pair(ctx, ctx.call("project_qkv", X.clone(), eye, eye.clone(), eye.clone()), 3, "returns the tuple (Q, K, V)", f"X {describe(X)}, identity weights")
    for name, part in zip("QKV", got):
        expect_tensor(ctx, part, X, f"identity weights give {name} = X", f"X {describe(X)}, identity weights")
    if float64_ok(ctx):
        X = ctx.randn(2, 5, 4, dtype=torch.float64)
        Wq, Wk, Wv = _weights(ctx, (), 4, 3, 6, dtype=torch.float64)
        inputs = f"X {describe(X)}, W_q {describe(Wq)}, W_v {describe(Wv)}"
        got = _pair(ctx, ctx.call("project_qkv", X.clone(), Wq, Wk, Wv), 3, "returns the tuple (Q, K, V)", inputs)
        for name, part, W in zip("QKV", got, (Wq, Wk, Wv)):
            expect_tensor(ctx, part, _project_truth(X, W).to(ctx.device), f"float64 input keeps float64 ({name})", inputs, atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- dot_product_scores
@check(f"{A}.dot_product_scores.values", "dot_product_scores", ATTENTION_FORBIDDEN)
def dot_scores_values(ctx):
    """S[..., i, j] = Q[..., i, :] . K[..., j, :], shape (..., Nq, Nk), unscaled."""
    for batch, nq, nk, d in SCORE_SHAPES:
        Q, K = ctx.randn(*batch, nq, d), ctx.randn(*batch, nk, d)
        got = ctx.call("dot_product_scores", Q.clone(), K.clone())
        expect_tensor(ctx, got, like(_dot_truth(Q, K), Q), "entry (i, j) is query i . key j, shape (..., Nq, Nk)", f"Q {describe(Q)}, K {describe(K)}")


@check(f"{A}.dot_product_scores.properties", "dot_product_scores", ATTENTION_FORBIDDEN)
def dot_scores_properties(ctx):
    """Not scaled (d = 16); queries equal to keys give the Gram matrix; float64 kept."""
    Q, K = ctx.randn(3, 16), ctx.randn(5, 16)
    got = ctx.call("dot_product_scores", Q.clone(), K.clone())
    expect_tensor(ctx, got, like(_dot_truth(Q, K), Q), "plain dot products, no 1/sqrt(d) scale in this chapter", f"Q {describe(Q)}, K {describe(K)}")
    X = ctx.randn(2, 4, 3)
    got = ctx.call("dot_product_scores", X.clone(), X.clone())
    expect_tensor(ctx, got, like(_dot_truth(X, X), X), "Q = K gives the (symmetric) Gram matrix", f"Q = K = {describe(X)}")
    if float64_ok(ctx):
        Q, K = ctx.randn(2, 3, 4, dtype=torch.float64), ctx.randn(2, 5, 4, dtype=torch.float64)
        got = ctx.call("dot_product_scores", Q.clone(), K.clone())
        expect_tensor(ctx, got, _dot_truth(Q, K).to(ctx.device), "float64 input keeps float64", f"Q {describe(Q)}, K {describe(K)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- additive_scores
@check(f"{A}.additive_scores.values", "additive_scores")
def additive_values(ctx):
    """S[..., i, j] = w . tanh(Q[..., i, :] + K[..., j, :]), shape (..., Nq, Nk)."""
    for batch, nq, nk, d in SCORE_SHAPES:
        Q, K, w = ctx.randn(*batch, nq, d), ctx.randn(*batch, nk, d), ctx.randn(d)
        got = ctx.call("additive_scores", Q.clone(), K.clone(), w.clone())
        expect_tensor(ctx, got, like(_additive_truth(Q, K, w), Q), "entry (i, j) is w . tanh(q_i + k_j), shape (..., Nq, Nk)", f"Q {describe(Q)}, K {describe(K)}, w {describe(w)}")


@check(f"{A}.additive_scores.properties", "additive_scores")
def additive_properties(ctx):
    """tanh saturates: large inputs give scores bounded by sum |w|; zero w gives zeros; float64 kept."""
    Q, K, w = ctx.randn(4, 3, scale=50.0), ctx.randn(6, 3, scale=50.0), ctx.randn(3)
    got = ctx.call("additive_scores", Q.clone(), K.clone(), w.clone())
    expect_tensor(ctx, got, like(_additive_truth(Q, K, w), Q), "large inputs saturate the tanh (|score| <= sum |w|)", f"Q {describe(Q)} with entries around 50, w {describe(w)}")
    Q, K = ctx.randn(3, 4), ctx.randn(5, 4)
    got = ctx.call("additive_scores", Q.clone(), K.clone(), torch.zeros(4, device=ctx.device))
    expect_tensor(ctx, got, torch.zeros(3, 5, device=ctx.device), "w = 0 gives all-zero scores", f"Q {describe(Q)}, K {describe(K)}, w = 0")
    if float64_ok(ctx):
        Q, K, w = ctx.randn(2, 3, 4, dtype=torch.float64), ctx.randn(2, 5, 4, dtype=torch.float64), ctx.randn(4, dtype=torch.float64)
        got = ctx.call("additive_scores", Q.clone(), K.clone(), w.clone())
        expect_tensor(ctx, got, _additive_truth(Q, K, w).to(ctx.device), "float64 input keeps float64", f"Q {describe(Q)}, K {describe(K)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- attend
@check(f"{A}.attend.values", "attend", ATTENTION_FORBIDDEN)
def attend_values(ctx):
    """(softmax(scores) @ V, softmax(scores)), softmax over the keys (last dim), in that order."""
    for batch, nq, nk, d_v in SCORE_SHAPES:
        scores, V = ctx.randn(*batch, nq, nk, scale=2.0), ctx.randn(*batch, nk, d_v)
        inputs = f"scores {describe(scores)}, V {describe(V)}"
        out, weights = _pair(ctx, ctx.call("attend", scores.clone(), V.clone()), 2, "returns the tuple (output, weights)", inputs)
        true_out, true_weights = _attend_truth(scores, V)
        expect_tensor(ctx, weights, like(true_weights, scores), "weights = softmax over the keys (each row sums to 1), second in the tuple", inputs)
        expect_tensor(ctx, out, like(true_out, V), "output = weights @ V, first in the tuple", inputs)


@check(f"{A}.attend.edges", "attend", ATTENTION_FORBIDDEN)
def attend_edges(ctx):
    """Scores in the thousands stay exact; -inf scores get weight 0; one key gets weight 1; float64 kept."""
    cases = []
    scores = ctx.randn(2, 3, 5, scale=1000.0)
    cases.append((scores, ctx.randn(2, 5, 4), "scores around 1000 (stable softmax)"))
    scores = ctx.randn(4, 6)
    scores[0, 1] = scores[2, 0] = scores[2, 5] = scores[3, 3] = float("-inf")
    cases.append((scores, ctx.randn(6, 3), "some scores -inf (masked keys)"))
    cases.append((ctx.randn(3, 1), ctx.randn(1, 4), "a single key"))
    for scores, V, what in cases:
        inputs = f"scores {describe(scores)}, V {describe(V)}: {what}"
        out, weights = _pair(ctx, ctx.call("attend", scores.clone(), V.clone()), 2, "returns the tuple (output, weights)", inputs)
        true_out, true_weights = _attend_truth(scores, V)
        expect_tensor(ctx, weights, like(true_weights, scores), f"weights with {what}", inputs)
        expect_tensor(ctx, out, like(true_out, V), f"output with {what}", inputs)
    if float64_ok(ctx):
        scores, V = ctx.randn(2, 3, 4, dtype=torch.float64), ctx.randn(2, 4, 5, dtype=torch.float64)
        inputs = f"scores {describe(scores)}, V {describe(V)}"
        out, weights = _pair(ctx, ctx.call("attend", scores.clone(), V.clone()), 2, "returns the tuple (output, weights)", inputs)
        true_out, true_weights = _attend_truth(scores, V)
        expect_tensor(ctx, weights, true_weights.to(ctx.device), "float64 input keeps float64 (weights)", inputs, atol=1e-10, rtol=1e-9)
        expect_tensor(ctx, out, true_out.to(ctx.device), "float64 input keeps float64 (output)", inputs, atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- self_attention
@check(f"{A}.self_attention.values", "self_attention", ATTENTION_FORBIDDEN)
def self_attention_values(ctx):
    """softmax(X W_q (X W_k)^T) X W_v end to end, unscaled, shape (..., N, d_v)."""
    for batch, n, d_in, d_k, d_v in LAYER_SHAPES:
        X = ctx.randn(*batch, n, d_in)
        Wq, Wk, Wv = _weights(ctx, batch, d_in, d_k, d_v)
        got = ctx.call("self_attention", X.clone(), Wq.clone(), Wk.clone(), Wv.clone())
        expect_tensor(ctx, got, like(_layer_truth(X, Wq, Wk, Wv), X), "softmax(Q K^T) V with Q, K, V = X W_q, X W_k, X W_v", f"X {describe(X)}, W_q {describe(Wq)}, W_v {describe(Wv)}")


@check(f"{A}.self_attention.properties", "self_attention", ATTENTION_FORBIDDEN)
def self_attention_properties(ctx):
    """Identity weights give softmax(X X^T) X; not scaled (d_k = 16); W_v = 0 gives zeros; stable; float64 kept."""
    X = ctx.randn(2, 4, 3)
    eye = torch.eye(3, device=ctx.device)
    expected = torch.einsum("...ij,...jd->...id", torch.softmax(_dot_truth(X, X), dim=-1), cpu64(X))
    got = ctx.call("self_attention", X.clone(), eye, eye.clone(), eye.clone())
    expect_tensor(ctx, got, like(expected, X), "identity weights give the parameter-free softmax(X X^T) X", f"X {describe(X)}, identity weights")
    X = ctx.randn(5, 4)
    Wq, Wk, Wv = _weights(ctx, (), 4, 16, 3)
    got = ctx.call("self_attention", X.clone(), Wq, Wk, Wv)
    expect_tensor(ctx, got, like(_layer_truth(X, Wq, Wk, Wv), X), "no 1/sqrt(d_k) scale in this chapter", f"X {describe(X)}, d_k = 16")
    got = ctx.call("self_attention", X.clone(), Wq, Wk, torch.zeros(4, 3, device=ctx.device))
    expect_tensor(ctx, got, torch.zeros(5, 3, device=ctx.device), "W_v = 0 gives a zero output", f"X {describe(X)}, W_v = 0")
    # integer entries: every score is an exact integer in float32, some of them in the hundreds
    X = ctx.randint(-3, 4, (2, 5, 4)).to(torch.float32)
    X[0, 0] = 3.0
    Wq = ctx.randint(-2, 3, (4, 6)).to(torch.float32)
    Wq[:, 0] = 2.0  # query (and key) 0 of sentence 0 has a coordinate 24: its own score is >= 576
    Wv = ctx.randint(-2, 3, (4, 3)).to(torch.float32)
    got = ctx.call("self_attention", X.clone(), Wq.clone(), Wq.clone(), Wv.clone())
    expect_tensor(ctx, got, like(_layer_truth(X, Wq, Wq, Wv), X), "exact for scores in the hundreds (stable softmax)", f"X {describe(X)} and weights with integer entries, W_k = W_q")
    if float64_ok(ctx):
        X = ctx.randn(2, 3, 4, dtype=torch.float64)
        Wq, Wk, Wv = _weights(ctx, (), 4, 2, 5, dtype=torch.float64)
        got = ctx.call("self_attention", X.clone(), Wq, Wk, Wv)
        expect_tensor(ctx, got, _layer_truth(X, Wq, Wk, Wv).to(ctx.device), "float64 input keeps float64", f"X {describe(X)}", atol=1e-10, rtol=1e-9)
