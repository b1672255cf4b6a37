"""ch06_multi_head: the checks of split_heads / merge_heads, stack_head_projections."""
import torch

from autograder.checking import check, describe, expect_tensor, expect_untouched

from .shared import A


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
    """Head h of token n is x[b, n, h*Dh:(h+1)*Dh]; shapes incl. B, N, H or Dh = 1; non-contiguous x; dtype kept."""
    for B, N, H, Dh in SPLIT_SHAPES:
        x = ctx.randn(B, N, H * Dh)
        expect_tensor(ctx, ctx.call("split_heads", x.clone(), H), _split_truth(x, H), "split_heads gives (B, H, N, Dh), head h = features h*Dh:(h+1)*Dh", f"x {describe(x)}, num_heads {H}")
    for B, N, H, Dh in SPLIT_SHAPES[:3]:
        t = ctx.randn(B, H * Dh, N).transpose(1, 2)  # (B, N, H*Dh), not contiguous
        expect_tensor(ctx, ctx.call("split_heads", t, H), _split_truth(t, H), "split_heads accepts a non-contiguous x", f"x {describe(t)} (non-contiguous), num_heads {H}")
    x = ctx.randn(2, 3, 6, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("split_heads", x.clone(), 3), _split_truth(x, 3), "float64 input keeps float64", f"x {describe(x)}, num_heads 3")
    ids = ctx.randint(0, 100, (2, 4, 6))
    expect_tensor(ctx, ctx.call("split_heads", ids.clone(), 2), _split_truth(ids, 2), "integer input keeps its dtype", f"x {describe(ids)}, num_heads 2")


@check(f"{A}.split_heads.errors", "split_heads")
def split_heads_errors(ctx):
    """ValueError when the last dimension is not divisible by num_heads (or num_heads < 1)."""
    for shape, h in [((2, 3, 10), 4), ((1, 1, 6), 4), ((2, 2, 3), 2), ((1, 4, 5), 3), ((2, 3, 4), 0)]:
        ctx.expect_raises(ValueError, f"ValueError for last dimension {shape[-1]} and num_heads {h}", "split_heads", ctx.randn(*shape), h)


@check(f"{A}.split_heads.device", "split_heads")
def split_heads_device(ctx):
    """The result stays on x's device (probed with meta tensors standing in for a GPU)."""
    ctx.probe_device("split_heads", ctx.randn(2, 3, 6), 3, prop="split_heads returns its result on the device of x")


@check(f"{A}.merge_heads.values", "merge_heads")
def merge_heads_values(ctx):
    """Token n's features h*Dh:(h+1)*Dh come from head h; contiguous and non-contiguous inputs; dtype kept."""
    for B, N, H, Dh in SPLIT_SHAPES:
        y = ctx.randn(B, H, N, Dh)
        expect_tensor(ctx, ctx.call("merge_heads", y.clone()), _merge_truth(y), "merge_heads gives (B, N, H*Dh), head h -> features h*Dh:(h+1)*Dh", f"x {describe(y)}")
        z = ctx.randn(B, N, H, Dh).transpose(1, 2)  # (B, H, N, Dh), not contiguous, as split_heads returns it
        expect_tensor(ctx, ctx.call("merge_heads", z), _merge_truth(z), "merge_heads accepts a non-contiguous (transposed) input", f"x {describe(z)} (non-contiguous)")
    y = ctx.randn(2, 3, 4, 2, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("merge_heads", y.clone()), _merge_truth(y), "float64 input keeps float64", f"x {describe(y)}")


@check(f"{A}.merge_heads.device", "merge_heads")
def merge_heads_device(ctx):
    """The result stays on x's device (probed with meta tensors standing in for a GPU)."""
    ctx.probe_device("merge_heads", ctx.randn(2, 3, 4, 2), prop="merge_heads returns its result on the device of x")


# ---------------------------------------------------------------- stack_head_projections
STACK_SHAPES = [(8, 2, 4), (6, 3, 2), (5, 1, 3), (4, 4, 1), (12, 4, 3), (3, 6, 2)]  # (d_model, H, d_head)


def _stack_truth(per_head):
    return torch.cat([w.T for w in per_head], dim=0)  # (H*d_head, d_model): head h's rows h*d_head:(h+1)*d_head


def _per_head(ctx, d_model, H, d_head, dtype=torch.float32):
    return [ctx.randn(d_model, d_head, dtype=dtype) for _ in range(H)]


def _stack_inputs(per_head):
    return f"per_head = {len(per_head)} matrices {describe(per_head[0])}" if per_head else "per_head = []"


@check(f"{A}.stack_head_projections.values", "stack_head_projections")
def stack_values(ctx):
    """W of shape (H*d_head, d_model) with rows h*d_head:(h+1)*d_head = W_h^T; split_heads(x @ W.T)[:, h] == x @ W_h."""
    for d_model, H, d_head in STACK_SHAPES:
        per_head = _per_head(ctx, d_model, H, d_head)
        inputs = _stack_inputs(per_head)
        got = ctx.call("stack_head_projections", [w.clone() for w in per_head])
        expected = _stack_truth(per_head)
        if type(got) is not torch.Tensor or tuple(got.shape) != tuple(expected.shape):
            ctx.fail("the result is the nn.Linear weight (H*d_head, d_model)", f"got {describe(got) if isinstance(got, torch.Tensor) else type(got).__name__}, expected {tuple(expected.shape)}", inputs)
        x = ctx.randn(2, 3, d_model)
        heads = _split_truth(x @ torch.Tensor.detach(got).T, H)  # (2, H, 3, d_head) from the student's stacked weight
        for h in range(H):
            expect_tensor(ctx, heads[:, h], x @ per_head[h], f"head {h} of split_heads(x @ W.T, H) is x @ per_head[{h}]", inputs + f", x {describe(x)}", atol=1e-5)
        expect_tensor(ctx, got, expected, "rows h*d_head:(h+1)*d_head of W are per_head[h] transposed", inputs, atol=1e-6)
    per_head = _per_head(ctx, 6, 3, 2, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("stack_head_projections", [w.clone() for w in per_head]), _stack_truth(per_head), "float64 matrices give a float64 weight", _stack_inputs(per_head), atol=1e-12)


@check(f"{A}.stack_head_projections.unchanged", "stack_head_projections")
def stack_unchanged(ctx):
    """The matrices of per_head are left as they were."""
    for d_model, H, d_head in STACK_SHAPES[:3]:
        per_head = _per_head(ctx, d_model, H, d_head)
        before = [w.clone() for w in per_head]
        inputs = _stack_inputs(per_head)
        ctx.call("stack_head_projections", per_head)
        if len(per_head) != len(before):
            ctx.fail("stack_head_projections leaves the list per_head unchanged", f"it now has {len(per_head)} entries, expected {len(before)}", inputs)
        for h, (w, b) in enumerate(zip(per_head, before)):
            expect_tensor(ctx, w, b, f"per_head[{h}] is unchanged", inputs, atol=0.0, rtol=0.0)
        expect_untouched(ctx, [("the list per_head", per_head)] + [(f"per_head[{h}]", w) for h, w in enumerate(per_head)],
                         "stack_head_projections leaves the list per_head unchanged", inputs, who="stack_head_projections")


@check(f"{A}.stack_head_projections.errors", "stack_head_projections")
def stack_errors(ctx):
    """ValueError for an empty list or matrices of different shapes."""
    cases = [[], [ctx.randn(6, 2), ctx.randn(6, 3)], [ctx.randn(6, 2), ctx.randn(4, 2)], [ctx.randn(4, 2), ctx.randn(4, 2), ctx.randn(4, 1)]]
    for per_head in cases:
        shapes = [tuple(w.shape) for w in per_head]
        ctx.expect_raises(ValueError, f"ValueError for per_head of shapes {shapes}", "stack_head_projections", per_head)


@check(f"{A}.stack_head_projections.device", "stack_head_projections")
def stack_device(ctx):
    """W stays on the matrices' device (probed with meta tensors standing in for a GPU)."""
    ctx.probe_device("stack_head_projections", _per_head(ctx, 6, 3, 2), prop="stack_head_projections returns W on the device of per_head")
