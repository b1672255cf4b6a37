"""Hidden checks for 03-softmax.

Ground truths are computed on the CPU in float64: ``torch.softmax`` (with an
all ``-inf`` slice defined as all zeros, as the contract says), ``-sum p log p``
with ``0 log 0 = 0`` for the entropy, and ``softmax(X X^T) X`` written out with
``torch.einsum``. Properties with a closed form (uniform weights for a zero row,
one token attending to itself) are checked too. No student function may call a
library softmax (``torch.softmax``, ``F.softmax``, ``nn.Softmax``,
``Tensor.softmax``, ``torch.special.softmax`` or the log-softmax versions).
"""
import math

import torch

from autograder.checking import check, describe, expect_tensor
from .ground_truth import cpu64, expect_on_shapes, float64_ok, like

A = ASSIGNMENT = "03"
CONTRACT = ["softmax", "softmax_with_temperature", "entropy", "attention_weights", "simple_self_attention"]

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
ENTROPY_FORBIDDEN = ("torch.special.entr", "torch.distributions.Categorical")

# (shape, dim): vectors, rows, square matrices along either dim, batches along a middle dim
SHAPES_DIMS = [((5,), -1), ((4, 6), -1), ((4, 4), -1), ((4, 4), 0), ((6, 3), 0), ((3, 5, 2), 1), ((2, 3, 4), -2), ((2, 3, 4), 0), ((1,), 0)]
MATRIX_SHAPES = [(3, 4), (6, 2), (5, 5), (1, 3), (2, 4, 3), (3, 2, 5, 5)]


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


def _weights_truth(X):
    X = cpu64(X)
    return torch.softmax(torch.einsum("...id,...jd->...ij", X, X), dim=-1)


def _distribution(ctx, logits, dim):
    """Probabilities (float32, on the device) from logits; -inf logits give exact zeros."""
    return torch.softmax(cpu64(logits), dim=dim).to(torch.float32).to(ctx.device)


def _attention_truth(X):
    return torch.einsum("...ij,...jd->...id", _weights_truth(X), cpu64(X))


def _call_softmax(ctx, name, x, dim, how, *extra):
    """Call with dim positionally, by keyword, or not at all (default -1)."""
    if how == "default":
        return ctx.call(name, x, *extra)
    if how == "keyword":
        return ctx.call(name, x, *extra, dim=dim)
    return ctx.call(name, x, *extra, dim)


def _expect_unchanged(ctx, x, before, name):
    if not torch.equal(torch.nan_to_num(x), torch.nan_to_num(before)):
        ctx.fail("input left unchanged", f"{name} modified its input tensor in place", f"x {describe(x)}")


# ---------------------------------------------------------------- softmax
@check(f"{A}.softmax.values", "softmax", SOFTMAX_FORBIDDEN)
def softmax_values(ctx):
    """Equals torch.softmax along the requested dim, for several shapes; the input is left unchanged."""
    for k, (shape, dim) in enumerate(SHAPES_DIMS):
        x = ctx.randn(*shape, scale=3.0)
        before = x.clone()
        how = "keyword" if k % 2 else "positional"
        got = _call_softmax(ctx, "softmax", x, dim, how)
        expect_tensor(ctx, got, like(_softmax_truth(x, dim), x), f"softmax along dim={dim}", f"x {describe(x)}, dim={dim}")
        _expect_unchanged(ctx, x, before, "softmax")
    x = ctx.randn(3, 5)
    expect_tensor(ctx, ctx.call("softmax", x.clone()), like(_softmax_truth(x, -1), x), "default dim is the last one", f"x {describe(x)}")
    if float64_ok(ctx):
        x = ctx.randn(2, 4, 3, dtype=torch.float64, scale=3.0)
        got = ctx.call("softmax", x.clone(), dim=1)
        expect_tensor(ctx, got, _softmax_truth(x, 1).to(ctx.device), "float64 input keeps float64", f"x {describe(x)}, dim=1", atol=1e-10, rtol=1e-9)


@check(f"{A}.softmax.stability", "softmax", SOFTMAX_FORBIDDEN)
def softmax_stability(ctx):
    """Exact for inputs near 1000 or -1000, for rows far apart from each other, and for huge spreads."""
    x = torch.tensor([1000.0, 1000.0, 999.0], device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone()), like(_softmax_truth(x), x), "exact for [1000, 1000, 999] (no overflow)", "x = [1000, 1000, 999]")
    x = torch.tensor([-1000.0, -1000.0, -999.0], device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone()), like(_softmax_truth(x), x), "exact for [-1000, -1000, -999] (no underflow to 0/0)", "x = [-1000, -1000, -999]")
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
        expect_tensor(ctx, ctx.call("softmax", x.clone()), _softmax_truth(x).to(ctx.device), "exact in float64 near 1e5", f"x {describe(x)}", atol=1e-9, rtol=1e-8)


@check(f"{A}.softmax.masked", "softmax", SOFTMAX_FORBIDDEN)
def softmax_masked(ctx):
    """-inf entries get weight 0; a slice that is all -inf gives all zeros, never NaN; along any dim."""
    x = torch.tensor([0.5, float("-inf"), 2.0, float("-inf")], device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone()), like(_softmax_truth(x), x), "-inf entries get weight 0", "x = [0.5, -inf, 2, -inf]")
    x = torch.full((4,), float("-inf"), device=ctx.device)
    expect_tensor(ctx, ctx.call("softmax", x.clone()), torch.zeros(4, device=ctx.device), "an all -inf slice gives zeros, not NaN", "x = [-inf, -inf, -inf, -inf]")
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
    expect_tensor(ctx, ctx.call("softmax", x.clone()), like(_softmax_truth(x), x), "-inf next to values near 1000", f"x {describe(x)}")
    if float64_ok(ctx):
        x = ctx.randn(3, 5, dtype=torch.float64)
        x[1] = float("-inf")
        x[0, 2] = float("-inf")
        expect_tensor(ctx, ctx.call("softmax", x.clone()), _softmax_truth(x).to(ctx.device), "float64 with -inf keeps float64", f"x {describe(x)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- softmax_with_temperature
@check(f"{A}.softmax_with_temperature.values", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_values(ctx):
    """softmax(x / T) along dim for several temperatures, shapes and dims; T -> 0 is one-hot, T -> inf uniform."""
    cases = [((6,), -1, 1.0), ((4, 5), -1, 0.5), ((4, 5), 0, 2.0), ((2, 3, 4), 1, 10.0), ((3, 3), -1, 3), ((3, 4), -1, 0.01)]
    for k, (shape, dim, T) in enumerate(cases):
        x = ctx.randn(*shape, scale=3.0)
        how = "keyword" if k % 2 else "positional"
        got = _call_softmax(ctx, "softmax_with_temperature", x.clone(), dim, how, T)
        expect_tensor(ctx, got, like(_softmax_truth(cpu64(x) / T, dim), x), f"softmax(x / T) with T={T} along dim={dim}", f"x {describe(x)}, temperature {T}, dim={dim}")
    x = ctx.randn(3, 5)
    expect_tensor(ctx, ctx.call("softmax_with_temperature", x.clone(), 1e6), torch.full((3, 5), 0.2, device=ctx.device), "a huge temperature gives uniform weights", f"x {describe(x)}, temperature 1e6")
    ranks = torch.stack([torch.randperm(5, generator=ctx.gen) for _ in range(3)]).to(torch.float32).to(ctx.device)
    x = 0.5 * ranks + ctx.randn(3, 1)  # distinct entries, at least 0.5 apart
    onehot = torch.zeros(3, 5, device=ctx.device).scatter_(-1, x.argmax(-1, keepdim=True), 1.0)
    expect_tensor(ctx, ctx.call("softmax_with_temperature", x.clone(), 1e-4), onehot, "a tiny temperature gives a one-hot vector at the largest entry (stable)", f"x {describe(x)}, temperature 1e-4")
    x = ctx.randn(2, 4)
    x[0, 1] = float("-inf")
    x[1] = float("-inf")
    expect_tensor(ctx, ctx.call("softmax_with_temperature", x.clone(), 0.5), like(_softmax_truth(cpu64(x) / 0.5), x), "-inf entries and all -inf rows as in softmax", f"x {describe(x)}, temperature 0.5")
    if float64_ok(ctx):
        x = ctx.randn(3, 4, dtype=torch.float64)
        got = ctx.call("softmax_with_temperature", x.clone(), 0.7)
        expect_tensor(ctx, got, _softmax_truth(x / 0.7).to(ctx.device), "float64 input keeps float64", f"x {describe(x)}, temperature 0.7", atol=1e-10, rtol=1e-9)


@check(f"{A}.softmax_with_temperature.errors", "softmax_with_temperature", SOFTMAX_FORBIDDEN)
def temperature_errors(ctx):
    """ValueError for a temperature of zero or below."""
    x = ctx.randn(2, 5)
    for T in (0, 0.0, -1.0, -0.5, -3):
        ctx.expect_raises(ValueError, f"ValueError for temperature {T}", "softmax_with_temperature", x.clone(), T)


# ---------------------------------------------------------------- entropy
@check(f"{A}.entropy.values", "entropy", ENTROPY_FORBIDDEN)
def entropy_values(ctx):
    """-sum p log p in nats along dim, for random distributions of several shapes."""
    for k, (shape, dim) in enumerate(SHAPES_DIMS):
        p = _distribution(ctx, ctx.randn(*shape, scale=2.0), dim)
        how = "keyword" if k % 2 else "positional"
        got = _call_softmax(ctx, "entropy", p.clone(), dim, how)
        expect_tensor(ctx, got, like(_entropy_truth(p, dim), p), f"entropy in nats along dim={dim}", f"p {describe(p)}, dim={dim}")
    p = _distribution(ctx, ctx.randn(4, 6), -1)
    expect_tensor(ctx, ctx.call("entropy", p.clone()), like(_entropy_truth(p), p), "default dim is the last one", f"p {describe(p)}")
    for n in (2, 5, 10):
        p = torch.full((3, n), 1.0 / n, device=ctx.device)
        expect_tensor(ctx, ctx.call("entropy", p), torch.full((3,), math.log(n), device=ctx.device), f"uniform over {n} outcomes has entropy log({n}) nats", f"p {describe(p)} uniform")


@check(f"{A}.entropy.zeros", "entropy", ENTROPY_FORBIDDEN)
def entropy_zeros(ctx):
    """0 log 0 = 0: one-hot rows have entropy 0, zeros add nothing, never NaN; float64 kept."""
    p = torch.eye(4, device=ctx.device)
    expect_tensor(ctx, ctx.call("entropy", p.clone()), torch.zeros(4, device=ctx.device), "one-hot distributions have entropy 0", "p = identity (4, 4)")
    for shape, dim in [((5, 6), -1), ((6, 5), 0), ((2, 4, 3), 1)]:
        logits = ctx.randn(*shape)
        logits = logits.masked_fill(torch.rand(*shape, generator=ctx.gen).to(ctx.device) < 0.4, float("-inf"))
        logits.select(dim, 0).fill_(1.0)  # at least one possible outcome per distribution
        p = _distribution(ctx, logits, dim)
        got = ctx.call("entropy", p.clone(), dim=dim)
        expect_tensor(ctx, got, like(_entropy_truth(p, dim), p), "outcomes of probability 0 add nothing (0 log 0 = 0)", f"p {describe(p)} with exact zeros, dim={dim}")
    if float64_ok(ctx):
        p = torch.softmax(ctx.randn(3, 7, dtype=torch.float64), dim=-1)
        p[0] = 0.0
        p[0, 3] = 1.0
        expect_tensor(ctx, ctx.call("entropy", p.clone()), _entropy_truth(p).to(ctx.device), "float64 input keeps float64", f"p {describe(p)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- attention_weights
@check(f"{A}.attention_weights.values", "attention_weights", SOFTMAX_FORBIDDEN)
def attention_weights_values(ctx):
    """softmax(X X^T) over the last dim, shape (..., N, N); rows sum to one."""
    expect_on_shapes(ctx, "attention_weights", MATRIX_SHAPES, _weights_truth, "softmax(X X^T) with each row summing to 1")


@check(f"{A}.attention_weights.edges", "attention_weights", SOFTMAX_FORBIDDEN)
def attention_weights_edges(ctx):
    """Long vectors (scores in the hundreds) stay exact; a zero token spreads its weight evenly; float64 kept."""
    X = ctx.randint(-8, 9, (2, 5, 4)).to(torch.float32)  # integer entries: exact integer scores
    X[0, 0, 0] = 10.0  # at least one score >= 100, beyond float32's exp overflow at 88.7
    got = ctx.call("attention_weights", X.clone())
    expect_tensor(ctx, got, like(_weights_truth(X), X), "exact for long vectors (scores in the hundreds)", f"X {describe(X)} with integer entries up to 10")
    X = ctx.randn(4, 3)
    X[2] = 0.0
    got = ctx.call("attention_weights", X.clone())
    expect_tensor(ctx, got, like(_weights_truth(X), X), "a zero token has score 0 with everything: uniform row", f"X {describe(X)} with a zero row 2")
    if float64_ok(ctx):
        X = ctx.randn(3, 4, 2, dtype=torch.float64)
        expect_tensor(ctx, ctx.call("attention_weights", X.clone()), _weights_truth(X).to(ctx.device), "float64 input keeps float64", f"X {describe(X)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- simple_self_attention
@check(f"{A}.simple_self_attention.values", "simple_self_attention", SOFTMAX_FORBIDDEN)
def simple_attention_values(ctx):
    """softmax(X X^T) X, shape (..., N, D), for several shapes and batches."""
    expect_on_shapes(ctx, "simple_self_attention", MATRIX_SHAPES, _attention_truth, "softmax(X X^T) X")


@check(f"{A}.simple_self_attention.properties", "simple_self_attention", SOFTMAX_FORBIDDEN)
def simple_attention_properties(ctx):
    """One token returns itself; equal tokens stay put; far-apart long tokens attend to themselves; stable; float64 kept."""
    X = ctx.randn(1, 4)
    expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), X, "a single token is its own output", f"X {describe(X)}")
    X = ctx.randn(1, 3).repeat(5, 1)
    expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), X, "identical tokens: every output is that token", f"X {describe(X)} with equal rows")
    X = 30.0 * torch.eye(4, device=ctx.device)[torch.randperm(4, generator=ctx.gen)]  # orthogonal, long
    expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), X, "long orthogonal tokens attend only to themselves (no overflow)", "X = 30 * a permutation matrix (4, 4)")
    X = ctx.randint(-6, 7, (2, 6, 3)).to(torch.float32)  # integer entries: exact integer scores
    X[1, 2, 0] = 10.0  # at least one score >= 100
    expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), like(_attention_truth(X), X), "exact for long vectors (scores in the hundreds)", f"X {describe(X)} with integer entries up to 10")
    if float64_ok(ctx):
        X = ctx.randn(2, 3, 5, dtype=torch.float64)
        expect_tensor(ctx, ctx.call("simple_self_attention", X.clone()), _attention_truth(X).to(ctx.device), "float64 input keeps float64", f"X {describe(X)}", atol=1e-10, rtol=1e-9)
