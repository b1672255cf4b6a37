"""Hidden checks for 05-scaling.

Ground truths: the closed form Var(q·k) = d and the sampling error of a variance
estimate (score_variance); ``F.scaled_dot_product_attention`` and the formula
softmax(Q K^T / sqrt(d_k)) V evaluated in float64 on the CPU (attention); for the
module, the same formula applied to the q/k/v weights read back from the
student's layers.
"""
import math

import torch
import torch.nn.functional as F

from autograder.checking import check, describe, expect_tensor

A = ASSIGNMENT = "05"
CONTRACT = ["score_variance", "scaled_dot_product_attention", "SelfAttention"]
SDPA_FORBIDDEN = ("torch.nn.functional.scaled_dot_product_attention",)


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


@check(f"{A}.score_variance.close_to_d", "score_variance")
def score_variance_close_to_d(ctx):
    """Within 6 standard errors of d (false alarm < 1e-8), for d from 1 to 256, default and explicit n_samples."""
    _seed_global_rng(ctx)
    for d, n in [(1, 20000), (1, None), (ctx.randrange(2, 8), 20000), (ctx.randrange(10, 40), None), (64, 20000), (256, None)]:
        if n is None:  # the default n_samples is 10000
            got, n = ctx.call("score_variance", d), 10000
        else:
            got = ctx.call("score_variance", d, n)
        inputs = f"d={d}, n_samples={n}"
        _expect_float(ctx, got, "returns a Python float", inputs)
        # six standard errors, plus d/n in case the biased (divide by n) estimate is used
        tol = 6 * _variance_standard_error(d, n) + d / n
        if abs(got - d) > tol:
            ctx.fail("variance of q·k is close to d", f"got {got:.4g}, expected {d} ± {tol:.3g} (6 standard errors)", inputs)


@check(f"{A}.score_variance.sampling_error", "score_variance")
def score_variance_sampling_error(ctx):
    """n_samples is honoured: 100 estimates from 20 samples scatter as much as theory says."""
    _seed_global_rng(ctx)
    d, n, reps = 4, 20, 100
    estimates = torch.tensor([ctx.call("score_variance", d, n) for _ in range(reps)], dtype=torch.float64)
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
    mean_tol = 6 * theory / math.sqrt(reps) + d / n
    if abs(float(estimates.mean()) - d) > mean_tol:
        ctx.fail("variance of q·k is close to d", f"mean of 100 estimates {float(estimates.mean()):.3g}, expected {d} ± {mean_tol:.2g}", f"d={d}, n_samples={n}")


def _call_with_generator(ctx, d, n, seed):
    """score_variance(d[, n], generator=<seeded>) (the sandbox sends the generator as its state)."""
    args = (d,) if n is None else (d, n)
    return ctx.call("score_variance", *args, generator=torch.Generator().manual_seed(seed))


@check(f"{A}.score_variance.generator", "score_variance")
def score_variance_generator(ctx):
    """The same seeded generator gives the same float; another seed another; default n_samples is 10000."""
    d = ctx.randrange(2, 30)
    seed = ctx.randrange(0, 2**31)
    first = _call_with_generator(ctx, d, 300, seed)
    second = _call_with_generator(ctx, d, 300, seed)
    _expect_float(ctx, first, "returns a Python float", f"d={d}, n_samples=300")
    if first != second:
        ctx.fail("reproducible with a seeded generator", f"two generators seeded {seed} gave {first!r} and {second!r} (pass generator to every random call)", f"d={d}")
    other = _call_with_generator(ctx, d, 300, seed + 1)
    if other == first:
        ctx.fail("the samples come from the generator", f"seeds {seed} and {seed + 1} gave the same value {first!r}", f"d={d}")
    default, explicit = _call_with_generator(ctx, d, None, seed), _call_with_generator(ctx, d, 10000, seed)
    if default != explicit:
        ctx.fail("n_samples defaults to 10000", f"score_variance(d) gave {default!r}, score_variance(d, 10000) gave {explicit!r} with the same seed", f"d={d}")


@check(f"{A}.score_variance.errors", "score_variance")
def score_variance_errors(ctx):
    """ValueError for d < 1 or n_samples < 2."""
    for args in [(0,), (-ctx.randrange(1, 5),), (4, 1), (4, 0)]:
        ctx.expect_raises(ValueError, "ValueError for d < 1 or n_samples < 2", "score_variance", *args)


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


@check(f"{A}.scaled_dot_product_attention.robust", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_robust(ctx):
    """float64 kept, device kept, huge scores without overflow, inputs left unchanged, rows sum to one."""
    Q, K, V = _qkv(ctx, (2,), 4, 5, 6, 3, dtype=torch.float64)
    _expect_attention(ctx, Q, K, V, None, "float64 inputs give float64 results", atol=1e-10)
    Q, K, V = _qkv(ctx, (2,), 3, 4, 8, 2, scale=60.0)
    _, weights = _expect_attention(ctx, Q, K, V, None, "scores in the hundreds do not overflow", atol=1e-4)
    sums = torch.Tensor.detach(weights).sum(-1)
    expect_tensor(ctx, sums, torch.ones_like(sums), "each row of weights sums to 1", f"Q {describe(Q)}", atol=1e-5)
    Q, K, V = _qkv(ctx, (3,), 4, 4, 4, 4)
    copies = [t.clone() for t in (Q, K, V)]
    ctx.call("scaled_dot_product_attention", Q, K, V)
    for name, t, c in zip("QKV", (Q, K, V), copies):
        expect_tensor(ctx, t, c, f"the input {name} is left unchanged", f"Q {describe(Q)}")


@check(f"{A}.scaled_dot_product_attention.mask", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_mask(ctx):
    """Boolean masks that broadcast: causal (N, N), padding (B, 1, Nk), per key (Nk,), full (B, H, Nq, Nk)."""
    n = ctx.randrange(3, 7)
    Q, K, V = _qkv(ctx, (2,), n, n, 4, 3)
    causal = torch.ones(n, n, dtype=torch.bool, device=ctx.device).tril()
    _expect_attention(ctx, Q, K, V, causal, "causal mask (N, N) on a batch")
    Q, K, V = _qkv(ctx, (3,), 4, 6, 5, 2)
    _expect_attention(ctx, Q, K, V, _rand_mask(ctx, (3, 1, 6)), "padding mask (B, 1, Nk)")
    Q, K, V = _qkv(ctx, (), 3, 5, 4, 4)
    _expect_attention(ctx, Q, K, V, _rand_mask(ctx, (1, 5)), "one mask row shared by every query")
    Q, K, V = _qkv(ctx, (2, 3), 4, 5, 8, 3)
    mask = _rand_mask(ctx, (2, 3, 4, 5))
    out, _ = _expect_attention(ctx, Q, K, V, mask, "full mask (B, H, Nq, Nk)")
    builtin = F.scaled_dot_product_attention(*(t.to("cpu", torch.float64) for t in (Q, K, V)), attn_mask=mask.cpu())
    expect_tensor(ctx, out, builtin.to(Q.device, Q.dtype), "agrees with torch's scaled_dot_product_attention (True = may attend)", f"mask {describe(mask)}")


@check(f"{A}.scaled_dot_product_attention.fully_masked", "scaled_dot_product_attention", SDPA_FORBIDDEN)
def sdpa_fully_masked(ctx):
    """A query with nothing to attend gets zero weights and zero output (no NaN); other rows unaffected."""
    Q, K, V = _qkv(ctx, (2,), 5, 4, 3, 6)
    mask = _rand_mask(ctx, (2, 5, 4))
    mask[0, 1] = False
    mask[1, 4] = False
    mask[1, 0] = False
    _expect_attention(ctx, Q, K, V, mask, "fully masked rows give zeros")
    Q, K, V = _qkv(ctx, (), 3, 3, 2, 2)
    _expect_attention(ctx, Q, K, V, torch.zeros(3, 3, dtype=torch.bool, device=ctx.device), "a mask with no True at all gives zeros")
    Q, K, V = _qkv(ctx, (4,), 1, 1, 3, 2)
    mask = torch.tensor([True, False, True, False], device=ctx.device).view(4, 1, 1)
    _expect_attention(ctx, Q, K, V, mask, "a single key, masked in half of the batch")


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


def self_attention_truth(ctx, module, x, mask, input_dim, dim_k, dim_v):
    (wq, bq), (wk, bk), (wv, bv) = (_linear_weights(ctx, module, n, o, input_dim) for n, o in (("q", dim_k), ("k", dim_k), ("v", dim_v)))
    x64 = x.detach().to("cpu", torch.float64)
    out, _ = attention_truth(x64 @ wq.T + bq, x64 @ wk.T + bk, x64 @ wv.T + bv, mask)
    return out.to(x.device, x.dtype)


def _expect_layer(ctx, module, x, mask, dims, prop, atol=1e-4):
    inputs = f"SelfAttention{dims}, x {describe(x)}" + ("" if mask is None else f", mask {describe(mask)}")
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


@check(f"{A}.SelfAttention.dtype_device", "SelfAttention", SDPA_FORBIDDEN)
def self_attention_dtype_device(ctx):
    """A float64 layer on float64 input gives float64, on the input's device."""
    dims = (5, 3, 2)
    module = _layer(ctx, *dims, dtype=torch.float64)
    _expect_layer(ctx, module, ctx.randn(2, 4, 5, dtype=torch.float64, scale=2.0), None, dims, "float64 layer and input give float64 output", atol=1e-10)
