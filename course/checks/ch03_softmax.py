"""Hidden checks for 03-softmax, one per clause of ``CLAUSES``.

Ground truths are computed on the CPU in float64: ``torch.softmax`` (with an
all ``-inf`` slice defined as all zeros, as the contract says), ``-sum p log p``
with ``0 log 0 = 0`` for the entropy, ``softmax(X X^T) X`` written out with
``torch.einsum``, and the softmax Jacobian from autograd
(``torch.autograd.functional.jacobian``). No student function may call a library
softmax (``torch.softmax``, ``F.softmax``, ``nn.Softmax``, ``Tensor.softmax``,
``torch.special.softmax`` or the log-softmax versions); the attention functions may
not call ``F.scaled_dot_product_attention``, and ``softmax_jacobian`` may not use
autograd.

Functions that are expected to call the student's ``softmax`` (``softmax_with_temperature``,
``attention_weights``, ``simple_self_attention``, ``softmax_jacobian``) compare through
``expect_tensor_via``: when they fail only because that ``softmax`` is wrong on the
input they hand it, the message says so and names the softmax clause.
"""
import math

import torch

from autograder.checking import call_leaves_unchanged, check, contract_clauses, describe, expect_tensor, expect_unchanged
from .ground_truth import cpu64, expect_tensor_via, float64_ok, like

A = ASSIGNMENT = "03"
CONTRACT = ["softmax", "softmax_with_temperature", "entropy", "attention_weights", "simple_self_attention", "softmax_jacobian"]

CLAUSES = contract_clauses(__file__, globals())

SOFTMAX_FORBIDDEN = (
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.nn.Softmax",
    "torch.Tensor.softmax",
    "torch.special.softmax",
    "torch.log_softmax",
    "torch.nn.functional.log_softmax",
    "torch.nn.LogSoftmax",
    "torch.Tensor.log_softmax",
    "torch.special.log_softmax",
)
ATTENTION_FORBIDDEN = SOFTMAX_FORBIDDEN + ("torch.nn.functional.scaled_dot_product_attention",)
ENTROPY_FORBIDDEN = ("torch.special.entr", "torch.distributions.Categorical")
JACOBIAN_FORBIDDEN = SOFTMAX_FORBIDDEN + (
    "torch.autograd.functional.jacobian",
    "torch.autograd.functional.vjp",
    "torch.autograd.grad",
    "torch.Tensor.backward",
    "torch.func.jacrev",
    "torch.func.jacfwd",
    "torch.func.vjp",
)

# (shape, dim): vectors, rows, square matrices along either dim, batches along a middle dim
SHAPES_DIMS = [((5,), -1), ((4, 6), -1), ((4, 4), -1), ((4, 4), 0), ((6, 3), 0), ((3, 5, 2), 1), ((2, 3, 4), -2), ((2, 3, 4), 0), ((1,), 0)]
MATRIX_SHAPES = [(3, 4), (6, 2), (5, 5), (1, 3), (2, 4, 3), (3, 2, 5, 5)]
VECTOR_SHAPES = [(4,), (1,), (3, 5), (2, 3, 4), (2, 1, 2)]
SOFTMAX_CLAUSE = f"{A}.softmax.values"
F64 = dict(atol=1e-10, rtol=1e-9)


def _softmax_truth(x, dim=-1):
    """torch.softmax in float64, with an all -inf slice giving zeros instead of NaN."""
    x = cpu64(x)
    out = torch.softmax(x, dim=dim)
    dead = torch.isneginf(x).all(dim=dim, keepdim=True)
    return torch.where(dead, torch.zeros_like(out), out)


def _entropy_truth(p, dim=-1):
    p = cpu64(p)
    terms = torch.where(p > 0, -p * torch.log(torch.where(p > 0, p, torch.ones_like(p))), torch.zeros_like(p))
    return terms.sum(dim=dim)


def _scores(X):
    return torch.einsum("...id,...jd->...ij", cpu64(X), cpu64(X))


def _weights_truth(X):
    return torch.softmax(_scores(X), dim=-1)


def _attention_truth(X):
    return torch.einsum("...ij,...jd->...id", _weights_truth(X), cpu64(X))


def _jacobian_truth(x):
    """d softmax(x)_i / d x_j by autograd, one vector at a time, in float64."""
    x = cpu64(x)
    flat = x.reshape(-1, x.shape[-1])
    blocks = [torch.autograd.functional.jacobian(lambda v: torch.softmax(v, dim=-1), row) for row in flat]
    return torch.stack(blocks).reshape(*x.shape, x.shape[-1])


def _distribution(ctx, logits, dim, dtype=torch.float32):
    """Probabilities (on the device) from logits; -inf logits give exact zeros."""
    return torch.softmax(cpu64(logits), dim=dim).to(dtype).to(ctx.device)


def _call(ctx, name, x, dim, how, *extra):
    """Call with dim positionally, by keyword, or not at all (default -1)."""
    if how == "default":
        return ctx.call(name, x, *extra)
    if how == "keyword":
        return ctx.call(name, x, *extra, dim=dim)
    return ctx.call(name, x, *extra, dim)


def _via_softmax(ctx, got, expected, prop, inputs, scores, clause, what, dim=-1, **tol):
    """Call ``got()`` and compare; if the call raises or the result is wrong because the student's
    softmax is wrong on ``scores`` along ``dim``, say so."""
    truth = like(_softmax_truth(scores, dim), scores)
    expect_tensor_via(ctx, got, expected, prop, inputs, dependency="softmax", dep_input=scores, dep_truth=truth, dep_clause=clause, dep_what=what, dim=dim, **tol)


# ================================================================ softmax
@check(f"{A}.softmax.values", "softmax", SOFTMAX_FORBIDDEN)
def softmax_values(ctx):
    """Equals torch.softmax along the requested dim (positional or keyword), for several shapes."""
    for k, (shape, dim) in enumerate(SHAPES_DIMS):
        x = ctx.randn(*shape, scale=3.0)
        how = "keyword" if k % 2 else "positional"
        got = _call(ctx, "softmax", x.clone(), dim, how)
        expect_tensor(ctx, got, like(_softmax_truth(x, dim), x), f"softmax along dim={dim}", f"x {describe(x)}, dim={dim} ({how})")


@check(f"{A}.softmax.default_dim", "softmax", SOFTMAX_FORBIDDEN)
def softmax_default_dim(ctx):
    """Without dim, the softmax runs along the last dimension."""
    for shape in [(3, 5), (4, 4), (2, 3, 4)]:
        x = ctx.randn(*shape, scale=2.0)
        expect_tensor(ctx, ctx.call("softmax", x.clone()), like(_softmax_truth(x, -1), x), "default dim is the last one", f"x {describe(x)}, dim not given")


@check(f"{A}.softmax.unchanged", "softmax", SOFTMAX_FORBIDDEN)
def softmax_unchanged(ctx):
    """The input tensor is the same after the call, also with -inf entries and along dim 0."""
    cases = [((4, 5), -1, False), ((5, 4), 0, False), ((3, 4), -1, True), ((2, 3, 4), 1, True)]
    for shape, dim, masked in cases:
        x = ctx.randn(*shape, scale=3.0) + 5.0
        if masked:
            x.select(dim, 0).fill_(float("-inf"))
            x.view(-1)[-1] = float("-inf")
        before = x.clone()
        ctx.call("softmax", x, dim=dim)
        expect_unchanged(ctx, [("its input", x, before)], "input left unchanged", who="softmax", inputs=f"x {describe(x)}{' with -inf entries' if masked else ''}, dim={dim}")


@check(f"{A}.softmax.dtype", "softmax", SOFTMAX_FORBIDDEN)
def softmax_dtype(ctx):
    """float64 in, float64 out (and exact to 1e-10); bfloat16 in, bfloat16 out."""
    if float64_ok(ctx):
        for shape, dim in [((2, 4, 3), 1), ((3, 5), -1)]:
            x = ctx.randn(*shape, dtype=torch.float64, scale=3.0)
            expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=dim), _softmax_truth(x, dim).to(ctx.device), "float64 input keeps float64", f"x {describe(x)}, dim={dim}", **F64)
    x = ctx.randn(3, 6, dtype=torch.bfloat16, scale=2.0)
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), like(_softmax_truth(x, -1), x), "bfloat16 input keeps bfloat16", f"x {describe(x)}, dim=-1", atol=2e-2, rtol=4e-2)


@check(f"{A}.softmax.stability", "softmax", SOFTMAX_FORBIDDEN)
def softmax_stability(ctx):
    """Exact for inputs near 1000 or -1000, for rows far apart from each other, and for huge spreads."""
    x = torch.tensor([1000.0, 1000.0, 999.0], device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), like(_softmax_truth(x), x), "exact for [1000, 1000, 999] (no overflow)", "x = [1000, 1000, 999]")
    x = torch.tensor([-1000.0, -1000.0, -999.0], device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), like(_softmax_truth(x), x), "exact for [-1000, -1000, -999] (no underflow to 0/0)", "x = [-1000, -1000, -999]")
    for shape, dim in [((4, 5), -1), ((5, 4), 0), ((2, 3, 4), 1)]:
        x = ctx.randn(*shape)
        offsets_shape = [1] * len(shape)
        other = 0 if dim != 0 else 1  # offsets vary across slices, not within one
        offsets_shape[other] = shape[other]
        offsets = torch.tensor([-1000.0, 0.0, 1000.0, 500.0, -300.0], device=ctx.device)[: shape[other]].reshape(offsets_shape)
        x = x + offsets
        got = ctx.call("softmax", x.clone(), dim=dim)
        expect_tensor(ctx, got, like(_softmax_truth(x, dim), x), "exact when slices sit at very different offsets (subtract each slice's own max)", f"x {describe(x)} with slices near -1000, 0, 1000, dim={dim}")
    x = ctx.randn(3, 6, scale=1e4)
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), like(_softmax_truth(x), x), "exact for a huge spread (almost one-hot)", f"x {describe(x)} with entries around 1e4")
    if float64_ok(ctx):
        x = ctx.randn(4, 3, dtype=torch.float64) + 1e5
        expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), _softmax_truth(x).to(ctx.device), "exact in float64 near 1e5", f"x {describe(x)}", atol=1e-9, rtol=1e-8)


@check(f"{A}.softmax.masked", "softmax", SOFTMAX_FORBIDDEN)
def softmax_masked(ctx):
    """-inf entries get weight 0; a slice that is all -inf gives all zeros, never NaN; along any dim."""
    x = torch.tensor([0.5, float("-inf"), 2.0, float("-inf")], device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), like(_softmax_truth(x), x), "-inf entries get weight 0", "x = [0.5, -inf, 2, -inf]")
    x = torch.full((4,), float("-inf"), device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), torch.zeros(4, device=ctx.device), "an all -inf slice gives zeros, not NaN", "x = [-inf, -inf, -inf, -inf]")
    for shape, dim in [((5, 4), -1), ((4, 5), 0), ((2, 4, 3), 1), ((3, 3), -1)]:
        x = ctx.randn(*shape, scale=2.0)
        masked = torch.rand(*shape, generator=ctx.gen).to(ctx.device) < 0.35
        x = x.masked_fill(masked, float("-inf"))
        x.select(dim, 0).fill_(float("-inf"))  # a whole slice masked
        x.select(dim, -1).fill_(float("-inf"))  # and a second one: within each other slice, the first and last entries are masked
        got = ctx.call("softmax", x.clone(), dim=dim)
        expect_tensor(ctx, got, like(_softmax_truth(x, dim), x), "masked entries get 0, other entries still sum to 1, all-masked slices give 0", f"x {describe(x)} with -inf entries, dim={dim}")
    x = ctx.randn(3, 4) + 1000.0
    x[0, 1] = float("-inf")
    x[2] = float("-inf")
    expect_tensor(ctx, ctx.call("softmax", x.clone(), dim=-1), like(_softmax_truth(x), x), "-inf next to values near 1000", f"x {describe(x)}")


# ================================================================ softmax_with_temperature
@check(f"{A}.softmax_with_temperature.values", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_values(ctx):
    """softmax(x / T) along dim for several temperatures, shapes and dims; T -> 0 is one-hot, T -> inf uniform."""
    cases = [((6,), -1, 1.0, "positional"), ((4, 5), -1, 0.5, "keyword"), ((4, 5), 0, 2.0, "positional"), ((2, 3, 4), 1, 10.0, "keyword"), ((3, 3), -1, 3, "default"), ((3, 4), -1, 0.01, "keyword"), ((5, 3), 0, 0.05, "keyword")]
    for shape, dim, T, how in cases:
        x = ctx.randn(*shape, scale=3.0)
        if T < 0.1:  # every slice holds one clearly positive score: exact for any stable softmax
            x.select(dim, ctx.randrange(0, shape[dim])).fill_(3.0)
        got = lambda: _call(ctx, "softmax_with_temperature", x.clone(), dim, how, T)
        scaled = (cpu64(x) / T).to(x.dtype).to(ctx.device)
        _via_softmax(ctx, got, like(_softmax_truth(cpu64(x) / T, dim), x), f"softmax(x / T) with T={T} along dim={dim}", f"x {describe(x)}, temperature {T}, dim={dim} ({how})", scaled, f"{A}.softmax.stability" if T < 0.1 else SOFTMAX_CLAUSE, f"x / T along dim={dim}", dim=dim)
    x = ctx.randn(3, 5)
    expect_tensor(ctx, ctx.call("softmax_with_temperature", x.clone(), 1e6), torch.full((3, 5), 0.2, device=ctx.device), "a huge temperature gives uniform weights", f"x {describe(x)}, temperature 1e6")
    ranks = torch.stack([torch.randperm(5, generator=ctx.gen) for _ in range(3)]).to(torch.float32).to(ctx.device)
    x = 0.5 * ranks + ctx.randn(3, 1).abs()  # distinct entries, at least 0.5 apart, the largest positive
    onehot = torch.zeros(3, 5, device=ctx.device).scatter_(-1, x.argmax(-1, keepdim=True), 1.0)
    expect_tensor(ctx, ctx.call("softmax_with_temperature", x.clone(), 1e-4), onehot, "a tiny temperature gives a one-hot vector at the largest entry (stable)", f"x {describe(x)}, temperature 1e-4")


@check(f"{A}.softmax_with_temperature.errors", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_errors(ctx):
    """ValueError for a temperature of zero or below."""
    x = ctx.randn(2, 5)
    for T in (0, 0.0, -1.0, -0.5, -3):
        ctx.expect_raises(ValueError, f"ValueError for temperature {T}", "softmax_with_temperature", x.clone(), T)


@check(f"{A}.softmax_with_temperature.unchanged", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_unchanged(ctx):
    """The input tensor is the same after the call."""
    for shape, T, dim in [((3, 5), 0.5, -1), ((4, 3), 2.0, 0)]:
        x = ctx.randn(*shape, scale=2.0)
        before = x.clone()
        ctx.call("softmax_with_temperature", x, T, dim=dim)
        expect_unchanged(ctx, [("its input", x, before)], "input left unchanged", who="softmax_with_temperature", inputs=f"x {describe(x)}, temperature {T}, dim={dim}")


@check(f"{A}.softmax_with_temperature.dtype", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_dtype(ctx):
    """float64 in, float64 out."""
    if not float64_ok(ctx):
        return
    x = ctx.randn(3, 4, dtype=torch.float64)
    got = lambda: ctx.call("softmax_with_temperature", x.clone(), 0.7)
    _via_softmax(ctx, got, _softmax_truth(x / 0.7).to(ctx.device), "float64 input keeps float64", f"x {describe(x)}, temperature 0.7", x / 0.7, f"{A}.softmax.dtype", "x / T in float64", **F64)


# ================================================================ entropy
@check(f"{A}.entropy.values", "entropy", ENTROPY_FORBIDDEN)
def entropy_values(ctx):
    """-sum p log p in nats along dim, for random distributions of several shapes."""
    for k, (shape, dim) in enumerate(SHAPES_DIMS):
        p = _distribution(ctx, ctx.randn(*shape, scale=2.0), dim)
        how = "keyword" if k % 2 else "positional"
        got = _call(ctx, "entropy", p.clone(), dim, how)
        expect_tensor(ctx, got, like(_entropy_truth(p, dim), p), f"entropy in nats along dim={dim}", f"p {describe(p)}, dim={dim} ({how})")
    for n in (2, 5, 10):
        p = torch.full((3, n), 1.0 / n, device=ctx.device)
        expect_tensor(ctx, ctx.call("entropy", p, dim=-1), torch.full((3,), math.log(n), device=ctx.device), f"uniform over {n} outcomes has entropy log({n}) nats", f"p {describe(p)} uniform, dim=-1")


@check(f"{A}.entropy.default_dim", "entropy", ENTROPY_FORBIDDEN)
def entropy_default_dim(ctx):
    """Without dim, the entropy sums over the last dimension."""
    for shape in [(4, 6), (5, 5), (2, 3, 4)]:
        p = _distribution(ctx, ctx.randn(*shape), -1)
        expect_tensor(ctx, ctx.call("entropy", p.clone()), like(_entropy_truth(p), p), "default dim is the last one", f"p {describe(p)}, dim not given")


@check(f"{A}.entropy.zeros", "entropy", ENTROPY_FORBIDDEN)
def entropy_zeros(ctx):
    """0 log 0 = 0: one-hot rows have entropy 0, zeros add nothing, never NaN."""
    p = torch.eye(4, device=ctx.device)
    expect_tensor(ctx, ctx.call("entropy", p.clone(), dim=-1), torch.zeros(4, device=ctx.device), "one-hot distributions have entropy 0", "p = identity (4, 4), dim=-1")
    for shape, dim in [((5, 6), -1), ((6, 5), 0), ((2, 4, 3), 1)]:
        logits = ctx.randn(*shape)
        logits = logits.masked_fill(torch.rand(*shape, generator=ctx.gen).to(ctx.device) < 0.4, float("-inf"))
        logits.select(dim, 0).fill_(1.0)  # at least one possible outcome per distribution
        p = _distribution(ctx, logits, dim)
        got = ctx.call("entropy", p.clone(), dim=dim)
        expect_tensor(ctx, got, like(_entropy_truth(p, dim), p), "outcomes of probability 0 add nothing (0 log 0 = 0)", f"p {describe(p)} with exact zeros, dim={dim}")


@check(f"{A}.entropy.unchanged", "entropy", ENTROPY_FORBIDDEN)
def entropy_unchanged(ctx):
    """The input tensor is the same after the call, also when it holds exact zeros."""
    for shape, dim in [((4, 5), -1), ((5, 4), 0)]:
        logits = ctx.randn(*shape).masked_fill(torch.rand(*shape, generator=ctx.gen).to(ctx.device) < 0.4, float("-inf"))
        logits.select(dim, 0).fill_(1.0)
        p = _distribution(ctx, logits, dim)
        before = p.clone()
        ctx.call("entropy", p, dim=dim)
        expect_unchanged(ctx, [("its input", p, before)], "input left unchanged", who="entropy", inputs=f"p {describe(p)} with exact zeros, dim={dim}")


@check(f"{A}.entropy.dtype", "entropy", ENTROPY_FORBIDDEN)
def entropy_dtype(ctx):
    """float64 in, float64 out (exact to 1e-10)."""
    if not float64_ok(ctx):
        return
    p = torch.softmax(ctx.randn(3, 7, dtype=torch.float64), dim=-1)
    expect_tensor(ctx, ctx.call("entropy", p.clone(), dim=-1), _entropy_truth(p).to(ctx.device), "float64 input keeps float64", f"p {describe(p)}, dim=-1", **F64)


# ================================================================ attention_weights
@check(f"{A}.attention_weights.values", "attention_weights", ATTENTION_FORBIDDEN)
def attention_weights_values(ctx):
    """softmax(X X^T) over the last dim, shape (..., N, N); a zero token spreads its weight evenly."""
    for shape in MATRIX_SHAPES:
        X = ctx.randn(*shape)
        got = lambda: ctx.call("attention_weights", X.clone())
        _via_softmax(ctx, got, like(_weights_truth(X), X), "softmax(X X^T) with each row summing to 1", f"X {describe(X)}", like(_scores(X), X), SOFTMAX_CLAUSE, "the scores X Xᵀ")
    X = ctx.randn(4, 3)
    X[2] = 0.0
    got = lambda: ctx.call("attention_weights", X.clone())
    _via_softmax(ctx, got, like(_weights_truth(X), X), "a zero token has score 0 with everything: uniform row", f"X {describe(X)} with a zero row 2", like(_scores(X), X), SOFTMAX_CLAUSE, "the scores X Xᵀ")


@check(f"{A}.attention_weights.stability", "attention_weights", ATTENTION_FORBIDDEN)
def attention_weights_stability(ctx):
    """Long vectors (scores in the hundreds) stay exact."""
    for shape in [(2, 5, 4), (6, 3)]:
        X = ctx.randint(-8, 9, shape).to(torch.float32)  # integer entries: exact integer scores
        X.view(-1)[0] = 10.0  # at least one score >= 100, beyond float32's exp overflow at 88.7
        got = lambda: ctx.call("attention_weights", X.clone())
        _via_softmax(ctx, got, like(_weights_truth(X), X), "exact for long vectors (scores in the hundreds)", f"X {describe(X)} with integer entries up to 10", like(_scores(X), X), f"{A}.softmax.stability", "the scores X Xᵀ (in the hundreds)")


def _leaves_X_unchanged(ctx, name):
    """``name(X)`` leaves X the same (values and shape), for a matrix and a batch."""
    for shape in [(4, 3), (2, 5, 3)]:
        call_leaves_unchanged(ctx, name, [ctx.randn(*shape)], ["X"], prop="input left unchanged")


def _keeps_float64(ctx, name, truth, shape):
    """float64 in, float64 out (exact to 1e-10), where the device has float64."""
    if not float64_ok(ctx):
        return
    X = ctx.randn(*shape, dtype=torch.float64)
    _via_softmax(ctx, lambda: ctx.call(name, X.clone()), truth(X).to(ctx.device), "float64 input keeps float64", f"X {describe(X)}",
                 _scores(X).to(ctx.device), f"{A}.softmax.dtype", "the float64 scores X Xᵀ", **F64)


@check(f"{A}.attention_weights.unchanged", "attention_weights", ATTENTION_FORBIDDEN)
def attention_weights_unchanged(ctx):
    """X is the same (values and shape) after the call."""
    _leaves_X_unchanged(ctx, "attention_weights")


@check(f"{A}.attention_weights.dtype", "attention_weights", ATTENTION_FORBIDDEN)
def attention_weights_dtype(ctx):
    """float64 in, float64 out (exact to 1e-10)."""
    _keeps_float64(ctx, "attention_weights", _weights_truth, (3, 4, 2))


# ================================================================ simple_self_attention
@check(f"{A}.simple_self_attention.values", "simple_self_attention", ATTENTION_FORBIDDEN)
def simple_attention_values(ctx):
    """softmax(X X^T) X, shape (..., N, D), for several shapes and batches; one token or equal tokens return themselves."""
    for shape in MATRIX_SHAPES:
        X = ctx.randn(*shape)
        got = lambda: ctx.call("simple_self_attention", X.clone())
        _via_softmax(ctx, got, like(_attention_truth(X), X), "softmax(X X^T) X", f"X {describe(X)}", like(_scores(X), X), SOFTMAX_CLAUSE, "the scores X Xᵀ")
    X = ctx.randn(1, 4)
    expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), X, "a single token is its own output", f"X {describe(X)}")
    X = ctx.randn(1, 3).repeat(5, 1)
    expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), X, "identical tokens: every output is that token", f"X {describe(X)} with equal rows")


@check(f"{A}.simple_self_attention.stability", "simple_self_attention", ATTENTION_FORBIDDEN)
def simple_attention_stability(ctx):
    """Long orthogonal tokens attend to themselves; integer tokens with scores in the hundreds stay exact."""
    X = 30.0 * torch.eye(4, device=ctx.device)[torch.randperm(4, generator=ctx.gen)]  # orthogonal, long
    _via_softmax(ctx, lambda: ctx.call("simple_self_attention", X.clone()), X, "long orthogonal tokens attend only to themselves (no overflow)", "X = 30 * a permutation matrix (4, 4)", like(_scores(X), X), f"{A}.softmax.stability", "the scores X Xᵀ (900 on the diagonal)")
    X = ctx.randint(-6, 7, (2, 6, 3)).to(torch.float32)  # integer entries: exact integer scores
    X[1, 2, 0] = 10.0  # at least one score >= 100
    _via_softmax(ctx, lambda: ctx.call("simple_self_attention", X.clone()), like(_attention_truth(X), X), "exact for long vectors (scores in the hundreds)", f"X {describe(X)} with integer entries up to 10", like(_scores(X), X), f"{A}.softmax.stability", "the scores X Xᵀ (in the hundreds)")


@check(f"{A}.simple_self_attention.unchanged", "simple_self_attention", ATTENTION_FORBIDDEN)
def simple_attention_unchanged(ctx):
    """X is the same (values and shape) after the call."""
    _leaves_X_unchanged(ctx, "simple_self_attention")


@check(f"{A}.simple_self_attention.dtype", "simple_self_attention", ATTENTION_FORBIDDEN)
def simple_attention_dtype(ctx):
    """float64 in, float64 out (exact to 1e-10)."""
    _keeps_float64(ctx, "simple_self_attention", _attention_truth, (2, 3, 5))


# ================================================================ softmax_jacobian
@check(f"{A}.softmax_jacobian.values", "softmax_jacobian", JACOBIAN_FORBIDDEN)
def jacobian_values(ctx):
    """diag(s) - s s^T for every vector of a batch, compared with autograd's Jacobian of softmax."""
    for shape in VECTOR_SHAPES:
        x = ctx.randn(*shape, scale=2.0)
        got = lambda: ctx.call("softmax_jacobian", x.clone())
        _via_softmax(ctx, got, like(_jacobian_truth(x), x), "the Jacobian d softmax(x)_i / d x_j (autograd)", f"x {describe(x)}", x, SOFTMAX_CLAUSE, "x itself")


@check(f"{A}.softmax_jacobian.stability", "softmax_jacobian", JACOBIAN_FORBIDDEN)
def jacobian_stability(ctx):
    """Large logits (near 1000, huge positive spreads) give the exact Jacobian, no NaN."""
    x = torch.tensor([1000.0, 999.0, 998.0], device=ctx.device)
    _via_softmax(ctx, lambda: ctx.call("softmax_jacobian", x.clone()), like(_jacobian_truth(x), x), "exact for logits [1000, 999, 998]", "x = [1000, 999, 998]", x, f"{A}.softmax.stability", "x = [1000, 999, 998]")
    x = ctx.randn(3, 4) + torch.tensor([[1000.0], [200.0], [500.0]], device=ctx.device)
    _via_softmax(ctx, lambda: ctx.call("softmax_jacobian", x.clone()), like(_jacobian_truth(x), x), "exact for rows of logits near 200, 500 and 1000", f"x {describe(x)}", x, f"{A}.softmax.stability", "these logits")


@check(f"{A}.softmax_jacobian.unchanged", "softmax_jacobian", JACOBIAN_FORBIDDEN)
def jacobian_unchanged(ctx):
    """x is the same after the call."""
    for shape in [(5,), (3, 4)]:
        x = ctx.randn(*shape, scale=2.0)
        before = x.clone()
        ctx.call("softmax_jacobian", x)
        expect_unchanged(ctx, [("its input", x, before)], "input left unchanged", who="softmax_jacobian", inputs=f"x {describe(x)}")


@check(f"{A}.softmax_jacobian.dtype", "softmax_jacobian", JACOBIAN_FORBIDDEN)
def jacobian_dtype(ctx):
    """float64 in, float64 out (exact to 1e-10)."""
    if not float64_ok(ctx):
        return
    x = ctx.randn(2, 5, dtype=torch.float64)
    _via_softmax(ctx, lambda: ctx.call("softmax_jacobian", x.clone()), _jacobian_truth(x).to(ctx.device), "float64 input keeps float64", f"x {describe(x)}", x, f"{A}.softmax.dtype", "float64 x", **F64)


# ================================================================ devices (probed on PyTorch's meta device)
@check(f"{A}.softmax.device", "softmax", SOFTMAX_FORBIDDEN)
def softmax_device(ctx):
    """The result stays on the input's device (probed with meta tensors)."""
    ctx.probe_device("softmax", ctx.randn(3, 4), dim=-1, prop="softmax returns its result on the device of x")
    ctx.probe_device("softmax", ctx.randn(2, 3, 4), dim=1, prop="softmax returns its result on the device of x")


@check(f"{A}.softmax_with_temperature.device", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_device(ctx):
    """The result stays on the input's device (probed with meta tensors)."""
    ctx.probe_device("softmax_with_temperature", ctx.randn(3, 4), 0.5, dim=-1, prop="softmax_with_temperature returns its result on the device of x")


@check(f"{A}.entropy.device", "entropy", ENTROPY_FORBIDDEN)
def entropy_device(ctx):
    """The result stays on the input's device (probed with meta tensors)."""
    ctx.probe_device("entropy", _distribution(ctx, ctx.randn(3, 5), -1), dim=-1, prop="entropy returns its result on the device of p")


@check(f"{A}.attention_weights.device", "attention_weights", ATTENTION_FORBIDDEN)
def attention_weights_device(ctx):
    """The result stays on the input's device (probed with meta tensors)."""
    ctx.probe_device("attention_weights", ctx.randn(2, 4, 3), prop="attention_weights returns its result on the device of X")


@check(f"{A}.simple_self_attention.device", "simple_self_attention", ATTENTION_FORBIDDEN)
def simple_attention_device(ctx):
    """The result stays on the input's device (probed with meta tensors)."""
    ctx.probe_device("simple_self_attention", ctx.randn(2, 4, 3), prop="simple_self_attention returns its result on the device of X")


@check(f"{A}.softmax_jacobian.device", "softmax_jacobian", JACOBIAN_FORBIDDEN)
def jacobian_device(ctx):
    """The result stays on the input's device (probed with meta tensors)."""
    ctx.probe_device("softmax_jacobian", ctx.randn(2, 4), prop="softmax_jacobian returns its result on the device of x")
