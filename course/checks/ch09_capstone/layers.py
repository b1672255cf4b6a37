"""ch09_capstone: the checks of PositionalEncoding, MultiHeadSelfAttention."""
import torch

from autograder.checking import check, describe, expect_tensor, expect_untouched

from ..ch06_multi_head import closed_form_truth, read_weights, torch_truth
from ..ch07_positional_encoding import pe_buffer_registered, pe_dropout_checks
from .shared import ATTENTION_FORBIDDEN, A


# ---------------------------------------------------------------- PositionalEncoding
def sinusoid(num_positions: int, d_model: int) -> torch.Tensor:
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same), column by column, float64."""
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)
    p = torch.arange(num_positions, dtype=torch.float64)
    for col in range(d_model):
        angle = p / (10000.0 ** (2 * (col // 2) / d_model))
        pe[:, col] = torch.sin(angle) if col % 2 == 0 else torch.cos(angle)
    return pe


@check(f"{A}.PositionalEncoding.buffer", "PositionalEncoding")
def pe_buffer(ctx):
    """`pe` is a registered, non-trainable, saved (state_dict) float32 buffer of shape (max_len, d_model) holding the sinusoid."""
    pe_buffer_registered(ctx)  # registered, not trainable, in the state_dict: as in 07
    for d_model, max_len in [(8, 20), (2 * ctx.randrange(2, 12), ctx.randrange(10, 120))]:
        inputs = f"PositionalEncoding({d_model}, max_len={max_len})"
        module = ctx.call("PositionalEncoding", d_model, max_len)
        expect_tensor(ctx, ctx.attr(module, "pe"), sinusoid(max_len, d_model).float(),
                      "buffer pe of shape (max_len, d_model), float32, holds the sinusoidal encoding", inputs, check_device=False, atol=1e-4)


@check(f"{A}.PositionalEncoding.forward", "PositionalEncoding")
def pe_forward(ctx):
    """forward(x) = x + PE[:N] for several shapes, N = max_len included; shape, dtype and device of x kept."""
    cases = [(2, 5, 8, 20, torch.float32), (1, 1, 4, 10, torch.float32), (3, 12, 6, 12, torch.float32),
             (2, 7, 10, 50, torch.float64), (ctx.randrange(1, 5), ctx.randrange(2, 30), 2 * ctx.randrange(2, 10), 40, torch.float32)]
    for B, N, D, max_len, dtype in cases:
        module = ctx.call("PositionalEncoding", D, max_len)
        ctx.method(module, "to", str(ctx.device))
        x = ctx.randn(B, N, D, dtype=dtype)
        got = ctx.method(module, "__call__", x.clone())
        expected = (x.double() + sinusoid(N, D).to(ctx.device)).to(dtype)
        expect_tensor(ctx, got, expected, "forward returns x + pe[:N] with the shape, dtype and device of x",
                      f"x {describe(x)}, PositionalEncoding({D}, max_len={max_len}) on {ctx.device}", atol=1e-4)


@check(f"{A}.PositionalEncoding.unchanged", "PositionalEncoding")
def pe_unchanged(ctx):
    """forward(x) leaves x as it was."""
    module = ctx.call("PositionalEncoding", 8, 16)
    ctx.method(module, "to", str(ctx.device))
    x = ctx.randn(2, ctx.randrange(2, 16), 8)
    original = x.clone()
    ctx.method(module, "__call__", x)
    expect_tensor(ctx, x, original, "forward(x) leaves x unchanged (no in-place addition)", f"x {describe(x)}, PositionalEncoding(8, max_len=16)", atol=0)
    expect_untouched(ctx, [("x", x)], "forward(x) leaves x unchanged (no in-place addition)", f"x {describe(x)}, PositionalEncoding(8, max_len=16)",
                     who="PositionalEncoding.forward")


@check(f"{A}.PositionalEncoding.errors", "PositionalEncoding")
def pe_errors(ctx):
    """N > max_len raises ValueError."""
    max_len = ctx.randrange(4, 30)
    module = ctx.call("PositionalEncoding", 8, max_len)
    for extra in [1, ctx.randrange(2, 20)]:
        x = ctx.randn(2, max_len + extra, 8)
        ctx.expect_raises_method(ValueError, f"ValueError when N = {max_len + extra} > max_len = {max_len}", module, "__call__", x)


# ---------------------------------------------------------------- MultiHeadSelfAttention
def _call_mhsa(ctx, module, x, **kwargs):
    got = ctx.method(module, "__call__", x.clone(), return_weights=True, **kwargs)
    if not isinstance(got, tuple) or len(got) != 2:
        ctx.fail("return_weights=True returns (output, weights)", f"got {describe(got)}", f"x {describe(x)}")
    return got


def _weights(ctx, module, d_model):
    """{name: (weight, bias or None)} of the four projections, float64 on the CPU, without judging their layout
    (that is the projections clause): the value checks compare with whatever weights the module has."""
    params = {}
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        weight, b = ctx.attr(module, f"{name}.weight"), ctx.attr(module, f"{name}.bias")
        if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != (d_model, d_model):
            ctx.fail(f"{name} is nn.Linear(d_model, d_model)", f"{name}.weight is {describe(weight)}", f"MultiHeadSelfAttention(d_model={d_model}, ...)")
        params[name] = (weight.detach().to("cpu", torch.float64), None if not isinstance(b, torch.Tensor) else b.detach().to("cpu", torch.float64))
    return params


def _expect_weights(ctx, weights, expected, prop, inputs):
    """Compare per-head weights when they have the stated shape (a wrong shape is the shapes clause's failure)."""
    if type(weights) is torch.Tensor and tuple(weights.shape) == tuple(expected.shape):
        expect_tensor(ctx, weights, expected, prop, inputs, atol=1e-5)


def _module(ctx, d_model, heads, bias=True):
    module = ctx.call("MultiHeadSelfAttention", d_model, heads, bias)
    ctx.method(module, "to", str(ctx.device))
    return module


@check(f"{A}.MultiHeadSelfAttention.projections", "MultiHeadSelfAttention")
def mhsa_projections(ctx):
    """q/k/v/out_proj are Linear(d, d, bias) for bias True and False."""
    for d_model, heads, bias in [(8, 2, True), (12, 3, False), (32, 4, True)]:
        read_weights(ctx, _module(ctx, d_model, heads, bias), d_model, bias)  # fails unless every projection is Linear(d_model, d_model, bias=bias)


@check(f"{A}.MultiHeadSelfAttention.errors", "MultiHeadSelfAttention")
def mhsa_errors(ctx):
    """ValueError if d_model % num_heads."""
    for d_model, heads in [(10, 3), (8, 3), (2 * ctx.randrange(3, 10) + 1, 2)]:
        ctx.expect_raises(ValueError, f"ValueError when d_model = {d_model} is not divisible by num_heads = {heads}", "MultiHeadSelfAttention", d_model, heads)


@check(f"{A}.MultiHeadSelfAttention.shapes", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_shapes(ctx):
    """Output (B, N, d); weights (B, H, N, N) with return_weights=True; only the output without it."""
    for d_model, heads, bias in [(8, 2, True), (12, 3, False), (32, 4, True)]:
        module = _module(ctx, d_model, heads, bias)
        B, N = ctx.randrange(1, 4), ctx.randrange(1, 9)
        x = ctx.randn(B, N, d_model)
        inputs = f"x {describe(x)}, MultiHeadSelfAttention({d_model}, {heads}, bias={bias})"
        out, weights = _call_mhsa(ctx, module, x)
        if type(weights) is not torch.Tensor or tuple(weights.shape) != (B, heads, N, N):
            ctx.fail("attention weights of shape (B, num_heads, N, N), one matrix per head", f"got {describe(weights)}", inputs)
        if type(out) is not torch.Tensor or tuple(out.shape) != (B, N, d_model):
            ctx.fail("output of shape (B, N, d_model)", f"got {describe(out)}", inputs)
        plain = ctx.method(module, "__call__", x.clone())
        if type(plain) is not torch.Tensor or tuple(plain.shape) != (B, N, d_model):
            ctx.fail("without return_weights the module returns only the output tensor (B, N, d_model)", f"got {describe(plain)}", inputs)


@check(f"{A}.MultiHeadSelfAttention.values", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_values(ctx):
    """Equals torch.nn.MultiheadAttention with the same weights (outputs and per-head weights)."""
    cases = [(2, 5, 8, 2, True), (1, 1, 6, 3, True), (3, 7, 16, 4, False), (2, 9, 12, 1, True), (ctx.randrange(1, 4), ctx.randrange(2, 12), 24, 4, True)]
    for B, N, d_model, heads, bias in cases:
        module = _module(ctx, d_model, heads, bias)
        x = ctx.randn(B, N, d_model)
        ref_out, ref_weights = torch_truth(_weights(ctx, module, d_model), x, heads)
        out, weights = _call_mhsa(ctx, module, x)
        inputs = f"x {describe(x)}, MultiHeadSelfAttention({d_model}, {heads}, bias={bias})"
        _expect_weights(ctx, weights, ref_weights.to(ctx.device, x.dtype), "per-head weights softmax(q k^T / sqrt(d_model / num_heads))", inputs)
        expect_tensor(ctx, out, ref_out.to(ctx.device, x.dtype), "output equals nn.MultiheadAttention with the same weights", inputs, atol=1e-5)


@check(f"{A}.MultiHeadSelfAttention.batch", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_batch(ctx):
    """One sentence's output does not depend on the other sentences (the merge must not mix batch and heads)."""
    for d_model, heads in [(8, 2), (12, 4)]:
        module = _module(ctx, d_model, heads)
        x = ctx.randn(3, 4, d_model)
        inputs = f"x {describe(x)}, MultiHeadSelfAttention({d_model}, {heads})"
        together = _call_mhsa(ctx, module, x)[0]
        if type(together) is not torch.Tensor or tuple(together.shape) != (3, 4, d_model):
            ctx.fail("output of shape (B, N, d_model)", f"got {describe(together)}", inputs)
        alone = _call_mhsa(ctx, module, x[1:2])[0]
        expect_tensor(ctx, alone, together[1:2].detach(), "a sentence's output does not depend on the rest of the batch", inputs, atol=1e-5)


@check(f"{A}.MultiHeadSelfAttention.dtype", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_dtype(ctx):
    """A float64 module on float64 input stays float64."""
    module = _module(ctx, 8, 2)
    ctx.method(module, "double")
    x = ctx.randn(2, 5, 8, dtype=torch.float64)
    got = _call_mhsa(ctx, module, x)[0]
    if type(got) is not torch.Tensor or got.dtype != torch.float64:
        ctx.fail("a float64 module on float64 input gives a float64 output", f"got {describe(got)}", f"x {describe(x)}, MultiHeadSelfAttention(8, 2).double()")


@check(f"{A}.MultiHeadSelfAttention.mask", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_mask(ctx):
    """Boolean masks (True = may attend), (N, N), causal and key-padding (B, 1, 1, N), give zero weight to masked keys."""
    d_model, heads = 12, 3
    module = _module(ctx, d_model, heads)
    params = _weights(ctx, module, d_model)
    B, N = 2, ctx.randrange(4, 9)
    x = ctx.randn(B, N, d_model)
    square = (torch.rand(N, N, generator=ctx.gen) < 0.5) | torch.eye(N, dtype=torch.bool)  # every query keeps itself
    lengths = [N, ctx.randrange(1, N)]
    padding = (torch.arange(N)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :]  # (B, 1, 1, N)
    for mask, what in [(square, "an (N, N) mask"), (padding, "a key-padding mask (B, 1, 1, N)"), (torch.tril(torch.ones(N, N, dtype=torch.bool)), "a causal mask")]:
        mask = mask.to(ctx.device)
        ref_out, ref_weights = (t.to(ctx.device, x.dtype) for t in closed_form_truth(params, x, heads, mask))
        out, weights = _call_mhsa(ctx, module, x, mask=mask.clone())
        inputs = f"x {describe(x)}, {what}"
        _expect_weights(ctx, weights, ref_weights, f"masked keys get weight 0 ({what}, True = may attend)", inputs)
        expect_tensor(ctx, out, ref_out, f"output with {what}", inputs, atol=1e-5)


@check(f"{A}.MultiHeadSelfAttention.unchanged", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_unchanged(ctx):
    """forward leaves x and mask as they were."""
    module = _module(ctx, 8, 2)
    N = ctx.randrange(3, 8)
    x = ctx.randn(2, N, 8)
    mask = (torch.arange(N)[None, :] < torch.tensor([N, N - 1])[:, None])[:, None, None, :].to(ctx.device)  # key padding (B, 1, 1, N)
    x0, mask0 = x.clone(), mask.clone()
    ctx.method(module, "__call__", x, mask=mask, return_weights=True)
    inputs = f"x {describe(x)}, key-padding mask {describe(mask)}"
    expect_tensor(ctx, x, x0, "forward leaves x unchanged", inputs, atol=0)
    expect_tensor(ctx, mask, mask0, "forward leaves mask unchanged", inputs, atol=0)
    expect_untouched(ctx, [("x", x)], "forward leaves x unchanged", inputs, who="MultiHeadSelfAttention.forward")
    expect_untouched(ctx, [("mask", mask)], "forward leaves mask unchanged", inputs, who="MultiHeadSelfAttention.forward")


# dropout: the check of chapter 7, on this notebook's PositionalEncoding (its dropout argument is stated the same way)
check(f"{A}.PositionalEncoding.dropout", "PositionalEncoding")(pe_dropout_checks)


@check(f"{A}.MultiHeadSelfAttention.gradients", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_gradients(ctx):
    """loss = (output * r).sum(), with and without a mask: backward reaches every weight and bias of the projections."""
    d_model, heads, B, N = 8, 2, 2, 5
    for masked in (False, True):
        module = _module(ctx, d_model, heads)
        x = ctx.randn(B, N, d_model, scale=2.0)
        padding = torch.ones(B, 1, 1, N, dtype=torch.bool, device=ctx.device)
        padding[1, ..., 3:] = False  # the tagger's key-padding form: sentence 1 has 3 words
        kwargs = {"mask": padding} if masked else {}
        inputs = f"MultiHeadSelfAttention({d_model}, {heads}), x {describe(x)}" + (", a padding mask (B, 1, 1, N)" if masked else "")
        with torch.enable_grad():
            out = ctx.method(module, "__call__", x.clone(), **kwargs)
            loss = ctx.method(ctx.method(out, "mul", ctx.randn(B, N, d_model)), "sum")
            ctx.method(loss, "backward")
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            for part in ("weight", "bias"):
                grad = ctx.attr(module, f"{name}.{part}.grad")
                if not isinstance(grad, torch.Tensor) or not bool(torch.isfinite(grad).all()) or float(grad.abs().sum()) == 0.0:
                    shown = "None (no gradient)" if grad is None else ("zero" if isinstance(grad, torch.Tensor) else repr(grad))
                    ctx.fail("backpropagating from the output reaches every projection (the tagger can only learn what gets a gradient)",
                             f"{name}.{part}.grad is {shown}: compute the scores, the mask and the softmax without torch.no_grad() or .detach()", inputs)
