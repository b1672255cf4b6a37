"""ch05_scaling: the checks of score_variance, restoring_scale."""
import math

import torch

from autograder.checking import check

from .shared import A


# ---------------------------------------------------------------- score_variance
def _variance_standard_error(d: int, n: int) -> float:
    """Standard deviation of the unbiased variance estimate of S = q·k from n samples.

    S is a sum of d independent products q_i k_i with variance 1 and fourth moment 9,
    so Var(S) = d and E[S^4] = 3d^2 + 6d; Var(s^2) = (mu4 - sigma^4 (n-3)/(n-1)) / n.
    """
    mu4, sigma4 = 3 * d * d + 6 * d, d * d
    return math.sqrt((mu4 - sigma4 * (n - 3) / (n - 1)) / n)


def _seed_global_rng(ctx) -> None:
    """Seed torch's global RNG from the check's seed, so that a failure can be reproduced."""
    torch.manual_seed(ctx.randrange(0, 2**31))


def _expect_float(ctx, value, prop, inputs):
    if isinstance(value, bool) or not isinstance(value, float):
        ctx.fail(prop, f"expected a Python float, got {type(value).__module__}.{type(value).__qualname__}", inputs)
    if not math.isfinite(value):
        ctx.fail(prop, f"got {value}", inputs)


def _number(ctx, value, prop, inputs) -> float:
    """A finite number from a float, an int or a one-element tensor (the type itself is the float clause)."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = float(torch.Tensor.detach(value).cpu().reshape(()))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ctx.fail(prop, f"expected a number, got {type(value).__module__}.{type(value).__qualname__}", inputs)
    if not math.isfinite(value):
        ctx.fail(prop, f"got {value}", inputs)
    return float(value)


@check(f"{A}.score_variance.close_to_d", "score_variance")
def score_variance_close_to_d(ctx):
    """Within 6 standard errors of d (false alarm < 1e-8), for d from 1 to 256."""
    _seed_global_rng(ctx)
    for d, n in [(1, 20000), (1, 10000), (ctx.randrange(2, 8), 20000), (ctx.randrange(10, 40), 10000), (64, 20000), (256, 10000)]:
        got = ctx.call("score_variance", d, n)  # n_samples explicit: its default is the default_n clause
        inputs = f"d={d}, n_samples={n}"
        got = _number(ctx, got, "variance of q·k is close to d", inputs)
        # six standard errors, plus d/n in case the biased (divide by n) estimate is used
        tol = 6 * _variance_standard_error(d, n) + d / n
        if abs(got - d) > tol:
            ctx.fail("variance of q·k is close to d", f"got {got:.4g}, expected {d} ± {tol:.3g} (6 standard errors)", inputs)


@check(f"{A}.score_variance.sampling_error", "score_variance")
def score_variance_sampling_error(ctx):
    """n_samples is honoured: 100 estimates from 20 samples scatter as much as theory says."""
    _seed_global_rng(ctx)
    d, n, reps = 4, 20, 100
    estimates = torch.tensor([_number(ctx, ctx.call("score_variance", d, n), "the estimate uses n_samples samples", f"d={d}, n_samples={n}") for _ in range(reps)], dtype=torch.float64)
    theory = _variance_standard_error(d, n)
    ratio = float(estimates.std()) / theory
    # Simulated over 20000 repetitions of this check, the ratio stays within [0.63, 2.1]
    # (biased or unbiased estimator); an estimate from 10000 samples gives about 0.04.
    if not 0.4 <= ratio <= 3.0:
        ctx.fail(
            "the estimate uses n_samples samples",
            f"100 estimates from n_samples=20 have standard deviation {float(estimates.std()):.3g}, sampling theory says about {theory:.3g}",
            f"d={d}, n_samples={n}",
        )



def _call_with_generator(ctx, d, n, seed):
    """score_variance(d[, n], generator=<seeded>) (the sandbox sends the generator as its state)."""
    args = (d,) if n is None else (d, n)
    return ctx.call("score_variance", *args, generator=torch.Generator().manual_seed(seed))


@check(f"{A}.score_variance.generator", "score_variance")
def score_variance_generator(ctx):
    """The same seeded generator gives the same value; another seed another."""
    d = ctx.randrange(2, 30)
    seed = ctx.randrange(0, 2**31)
    inputs = f"d={d}, n_samples=300"
    first = _number(ctx, _call_with_generator(ctx, d, 300, seed), "reproducible with a seeded generator", inputs)
    second = _number(ctx, _call_with_generator(ctx, d, 300, seed), "reproducible with a seeded generator", inputs)
    if first != second:
        ctx.fail("reproducible with a seeded generator", f"two generators seeded {seed} gave {first!r} and {second!r} (pass generator to every random call)", inputs)
    other = _number(ctx, _call_with_generator(ctx, d, 300, seed + 1), "the samples come from the generator", inputs)
    if other == first:
        ctx.fail("the samples come from the generator", f"seeds {seed} and {seed + 1} gave the same value {first!r}", inputs)


@check(f"{A}.score_variance.default_n", "score_variance")
def score_variance_default_n(ctx):
    """score_variance(d, generator=g) equals score_variance(d, 10000, generator=g) for the same seed."""
    d, seed = ctx.randrange(2, 30), ctx.randrange(0, 2**31)
    default = _number(ctx, _call_with_generator(ctx, d, None, seed), "n_samples defaults to 10000", f"d={d}")
    explicit = _number(ctx, _call_with_generator(ctx, d, 10000, seed), "n_samples defaults to 10000", f"d={d}")
    again = _number(ctx, _call_with_generator(ctx, d, 10000, seed), "n_samples defaults to 10000", f"d={d}")
    if explicit != again:
        return  # not reproducible with a seeded generator: that is the generator clause, nothing to compare here
    if default != explicit:
        ctx.fail("n_samples defaults to 10000", f"score_variance(d) gave {default!r}, score_variance(d, 10000) gave {explicit!r} with the same seed", f"d={d}")


@check(f"{A}.score_variance.float", "score_variance")
def score_variance_float(ctx):
    """The result is a Python float."""
    for d, n in [(3, 50), (ctx.randrange(1, 20), 200)]:
        _expect_float(ctx, ctx.call("score_variance", d, n), "returns a Python float", f"d={d}, n_samples={n}")


@check(f"{A}.score_variance.errors", "score_variance")
def score_variance_errors(ctx):
    """ValueError for d < 1 or n_samples < 2."""
    for args in [(0,), (-ctx.randrange(1, 5),), (4, 1), (4, 0)]:
        ctx.expect_raises(ValueError, "ValueError for d < 1 or n_samples < 2", "score_variance", *args)


# ---------------------------------------------------------------- restoring_scale
def _restoring_truth(d, sigma_q, sigma_k):
    """Var(q·k) = sum of d independent products, each of variance E[q_i^2] E[k_i^2] = sigma_q^2 sigma_k^2."""
    variance = d * sigma_q**2 * sigma_k**2
    return variance, 1.0 / math.sqrt(variance)


RESTORING_CASES = [(1, 1.0, 1.0), (64, 1.0, 1.0), (16, 2.0, 0.5), (8, 3.0, 1.5), (100, 0.1, 0.2), (3, 0.5, 4.0)]


def _restoring_pair(ctx, d, sq, sk, prop):
    inputs = f"d={d}, sigma_q={sq}, sigma_k={sk}"
    got = ctx.call("restoring_scale", d, sq, sk)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        ctx.fail(prop, f"expected two numbers (variance, scale), got {type(got).__name__}", inputs)
    return _number(ctx, got[0], prop, inputs), _number(ctx, got[1], prop, inputs)


def _restoring_cases(ctx) -> list[tuple[int, float, float]]:
    """The fixed cases, and one with a fresh d and fresh sigmas."""
    sigma = lambda: round(0.1 + 3 * float(torch.rand((), generator=ctx.gen)), 3)  # noqa: E731
    return RESTORING_CASES + [(ctx.randrange(1, 500), sigma(), sigma())]


@check(f"{A}.restoring_scale.variance", "restoring_scale")
def restoring_variance(ctx):
    """variance = d sigma_q^2 sigma_k^2 (closed form), for several d and sigmas."""
    cases = _restoring_cases(ctx)
    for d, sq, sk in cases:
        variance, _ = _restoring_pair(ctx, d, sq, sk, "variance = Var(q·k)")
        truth, _ = _restoring_truth(d, sq, sk)
        if not math.isclose(variance, truth, rel_tol=1e-6):
            ctx.fail("variance = Var(q·k) = d sigma_q^2 sigma_k^2", f"got {variance:.10g}, expected {truth:.10g}", f"d={d}, sigma_q={sq}, sigma_k={sk}")


@check(f"{A}.restoring_scale.scale", "restoring_scale")
def restoring_scale_value(ctx):
    """scale = 1 / sqrt(variance): closed form, and a Monte Carlo draw of scale · q·k has variance 1."""
    cases = _restoring_cases(ctx)
    for d, sq, sk in cases:
        _, scale = _restoring_pair(ctx, d, sq, sk, "scale makes Var(scale · q·k) = 1")
        _, truth = _restoring_truth(d, sq, sk)
        inputs = f"d={d}, sigma_q={sq}, sigma_k={sk}"
        if not math.isclose(scale, truth, rel_tol=1e-6):
            ctx.fail("scale > 0 makes Var(scale · q·k) = 1", f"got {scale:.10g}, expected {truth:.10g}", inputs)
    # an independent Monte Carlo estimate for one case, with the sampling error of the variance
    d, sq, sk, n = 32, 1.7, 0.6, 40000
    _, scale = _restoring_pair(ctx, d, sq, sk, "scale makes Var(scale · q·k) = 1")
    q = torch.randn(n, d, generator=ctx.gen, dtype=torch.float64) * sq
    k = torch.randn(n, d, generator=ctx.gen, dtype=torch.float64) * sk
    measured = float((scale * (q * k).sum(-1)).var())
    tol = 6 * _variance_standard_error(d, n) / d
    if abs(measured - 1) > tol:
        ctx.fail("scale > 0 makes Var(scale · q·k) = 1", f"{n} sampled pairs give Var(scale · q·k) = {measured:.6f}, expected 1 ± {tol:.3g}", f"d={d}, sigma_q={sq}, sigma_k={sk}, scale={scale:.10g}")


@check(f"{A}.restoring_scale.floats", "restoring_scale")
def restoring_floats(ctx):
    """A tuple of two Python floats."""
    for d, sq, sk in [(16, 2.0, 0.5), (4, 1, 3)]:
        got = ctx.call("restoring_scale", d, sq, sk)
        inputs = f"d={d}, sigma_q={sq!r}, sigma_k={sk!r}"
        if type(got) is not tuple or len(got) != 2:
            ctx.fail("returns a tuple (variance, scale)", f"got {type(got).__name__}" + (f" of length {len(got)}" if isinstance(got, (tuple, list)) else ""), inputs)
        for name, v in zip(("variance", "scale"), got):
            _expect_float(ctx, v, f"{name} is a Python float", inputs)


@check(f"{A}.restoring_scale.errors", "restoring_scale")
def restoring_errors(ctx):
    """ValueError for d < 1 or a standard deviation <= 0."""
    for args in [(0, 1.0, 1.0), (-3, 1.0, 1.0), (4, 0.0, 1.0), (4, 1.0, -2.0), (4, -1.0, 1.0)]:
        ctx.expect_raises(ValueError, "ValueError when d < 1 or sigma_q <= 0 or sigma_k <= 0", "restoring_scale", *args)
