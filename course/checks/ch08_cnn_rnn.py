"""Hidden checks for 08-cnn-rnn.

Ground truths: index arithmetic (``|i - j| <= w``, ``torch.diag`` for shifts, row
shifts with zero padding), ``F.conv1d`` for the convolution, ``torch.nn.RNN`` with
the same weights for the recurrence, and boolean algebra for the graph mask.
"""
import torch
import torch.nn.functional as F

from autograder.checking import check, describe, expect_tensor

A = ASSIGNMENT = "08"
CONTRACT = ["local_attention_mask", "shift_attention_matrix", "conv1d_via_attention", "rnn_forward", "graph_attention_mask"]

CONV_FORBIDDEN = ("torch.nn.functional.conv1d", "torch.nn.Conv1d", "torch.conv1d")
RNN_FORBIDDEN = ("torch.nn.RNN", "torch.nn.RNNCell", "torch.rnn_tanh", "torch.rnn_tanh_cell")


# ---------------------------------------------------------------- local_attention_mask
def _local_truth(n, window):
    i = torch.arange(n)
    return (i[:, None] - i[None, :]).abs() <= window


@check(f"{A}.local_attention_mask.values", "local_attention_mask")
def local_values(ctx):
    """True iff |i - j| <= window (inclusive), as bool, for several sizes and windows."""
    cases = [(5, 1), (12, 2), (9, 3), (2, 1), (ctx.randrange(10, 40), ctx.randrange(1, 8))]
    for n, window in cases:
        got = ctx.call("local_attention_mask", n, window)
        expect_tensor(ctx, got, _local_truth(n, window), "mask[i, j] = |i - j| <= window (bool)", f"n = {n}, window = {window}", check_device=False)


@check(f"{A}.local_attention_mask.edges", "local_attention_mask")
def local_edges(ctx):
    """window 0 is the identity, a window wider than the sequence allows all, n = 1; negative window raises."""
    n = ctx.randrange(3, 10)
    for n_, window, prop in [(n, 0, "window 0 lets each token see only itself"), (n, n + 2, "a window wider than the sequence allows every pair"),
                             (1, 3, "a single token sees itself")]:
        expect_tensor(ctx, ctx.call("local_attention_mask", n_, window), _local_truth(n_, window), prop, f"n = {n_}, window = {window}", check_device=False)
    ctx.expect_raises(ValueError, "ValueError for a negative window", "local_attention_mask", 5, -1)


# ---------------------------------------------------------------- shift_attention_matrix
def _shift_truth(n, offset):
    S = torch.zeros(n, n)
    for i in range(n):
        if 0 <= i + offset < n:
            S[i, i + offset] = 1.0
    return S


@check(f"{A}.shift_attention_matrix.values", "shift_attention_matrix")
def shift_values(ctx):
    """S[i, i + offset] = 1 inside the sequence, float32, for positive, negative and out-of-range offsets."""
    n = ctx.randrange(4, 15)
    cases = [(5, 1), (5, -1), (6, 0), (7, 3), (7, -6), (4, 4), (4, -9), (1, 0), (n, ctx.randrange(-n, n))]
    for n_, offset in cases:
        got = ctx.call("shift_attention_matrix", n_, offset)
        expect_tensor(ctx, got, _shift_truth(n_, offset), "S[i, i + offset] = 1 where 0 <= i + offset < n, float32",
                      f"n = {n_}, offset = {offset}", check_device=False)


@check(f"{A}.shift_attention_matrix.properties", "shift_attention_matrix")
def shift_properties(ctx):
    """(S x)_i = x_(i + offset) with zeros outside (no wrap-around); S_o^T = S_(-o)."""
    n, d = ctx.randrange(5, 20), ctx.randrange(1, 6)
    X = ctx.randn(n, d).cpu()
    for offset in [1, -1, 2, -ctx.randrange(1, n)]:
        S = ctx.call("shift_attention_matrix", n, offset)
        if type(S) is not torch.Tensor or tuple(S.shape) != (n, n):
            ctx.fail("shape (n, n)", f"got {describe(S)}", f"n = {n}, offset = {offset}")
        shifted = torch.zeros_like(X)
        for i in range(n):
            if 0 <= i + offset < n:
                shifted[i] = X[i + offset]
        expect_tensor(ctx, S.detach().cpu().to(X.dtype) @ X, shifted, "S x moves token i + offset to row i, zeros outside (no wrap-around)",
                      f"X {describe(X)}, offset = {offset}")
        back = ctx.call("shift_attention_matrix", n, -offset)
        expect_tensor(ctx, back, S.detach().T.contiguous(), "S_(-o) is the transpose of S_o", f"n = {n}, offset = {offset}", check_device=False)


# ---------------------------------------------------------------- conv1d_via_attention
def _conv_truth(x, weight):
    K = weight.shape[-1]
    return F.conv1d(x.transpose(1, 2), weight, padding=K // 2).transpose(1, 2)


@check(f"{A}.conv1d_via_attention.values", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_values(ctx):
    """Equals F.conv1d(x^T, weight, padding=K//2)^T for several batch sizes, lengths, channels and kernels."""
    cases = [(2, 10, 3, 4, 5), (1, 7, 1, 1, 3), (3, 6, 2, 5, 1), (2, 3, 4, 3, 7), (1, 1, 3, 2, 3), (2, 2, 3, 3, 5),
             (ctx.randrange(1, 4), ctx.randrange(4, 30), ctx.randrange(1, 6), ctx.randrange(1, 6), 2 * ctx.randrange(0, 4) + 1)]
    for B, N, C_in, C_out, K in cases:
        x, weight = ctx.randn(B, N, C_in), ctx.randn(C_out, C_in, K)
        got = ctx.call("conv1d_via_attention", x.clone(), weight.clone())
        expect_tensor(ctx, got, _conv_truth(x, weight), "equals F.conv1d with padding K//2 (cross-correlation, zero padding)",
                      f"x {describe(x)}, weight {describe(weight)}", atol=1e-4)


@check(f"{A}.conv1d_via_attention.dtype", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_dtype(ctx):
    """float64 inputs give float64 outputs on the input's device."""
    x, weight = ctx.randn(2, 9, 3, dtype=torch.float64), ctx.randn(2, 3, 3, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("conv1d_via_attention", x.clone(), weight.clone()), _conv_truth(x, weight),
                  "float64 input keeps float64 (and the device)", f"x {describe(x)}, weight {describe(weight)}", atol=1e-9)


@check(f"{A}.conv1d_via_attention.errors", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_errors(ctx):
    """ValueError for an even kernel size and for mismatched channels."""
    x = ctx.randn(1, 8, 3)
    ctx.expect_raises(ValueError, "ValueError for an even kernel size", "conv1d_via_attention", x, ctx.randn(2, 3, 2 * ctx.randrange(1, 4)))
    ctx.expect_raises(ValueError, "ValueError when weight's C_in differs from x's channels", "conv1d_via_attention", x, ctx.randn(2, 4, 3))


# ---------------------------------------------------------------- rnn_forward
def _rnn_truth(x, W_xh, W_hh, b_h, h0=None):
    """torch.nn.RNN (tanh) with weight_ih = W_xh^T, weight_hh = W_hh^T, bias_ih = b_h, bias_hh = 0."""
    D, H = W_xh.shape
    rnn = torch.nn.RNN(D, H, batch_first=True).to(x.device, x.dtype)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh.T)
        rnn.weight_hh_l0.copy_(W_hh.T)
        rnn.bias_ih_l0.copy_(b_h)
        rnn.bias_hh_l0.zero_()
        states, last = rnn(x, None if h0 is None else h0.unsqueeze(0))
    return states, last[0]


def _rnn_inputs(ctx, B, N, D, H, dtype=torch.float32, h0=False):
    x = ctx.randn(B, N, D, dtype=dtype)
    W_xh = ctx.randn(D, H, dtype=dtype, scale=D ** -0.5)
    W_hh = ctx.randn(H, H, dtype=dtype, scale=H ** -0.5)
    b_h = ctx.randn(H, dtype=dtype, scale=0.5)
    return x, W_xh, W_hh, b_h, (ctx.randn(B, H, dtype=dtype) if h0 else None)


def _expect_rnn(ctx, got, expected, prop, inputs, atol=1e-5):
    if not isinstance(got, tuple) or len(got) != 2:
        ctx.fail(prop, f"expected a tuple (states, last), got {type(got).__name__}", inputs)
    expect_tensor(ctx, got[0], expected[0], prop + ": all states (B, N, H)", inputs, atol=atol)
    expect_tensor(ctx, got[1], expected[1], prop + ": last state (B, H)", inputs, atol=atol)


@check(f"{A}.rnn_forward.values", "rnn_forward", RNN_FORBIDDEN)
def rnn_values(ctx):
    """Equals torch.nn.RNN with the same weights (h0 = 0), several shapes including N = 1 and square W_hh."""
    cases = [(2, 5, 3, 4), (1, 1, 2, 3), (3, 12, 5, 5), (2, 7, 1, 6), (ctx.randrange(1, 4), ctx.randrange(2, 25), ctx.randrange(1, 7), ctx.randrange(1, 9))]
    for B, N, D, H in cases:
        x, W_xh, W_hh, b_h, _ = _rnn_inputs(ctx, B, N, D, H)
        got = ctx.call("rnn_forward", x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone())
        _expect_rnn(ctx, got, _rnn_truth(x, W_xh, W_hh, b_h), "h_t = tanh(x_t W_xh + h_(t-1) W_hh + b_h), h_0 = 0",
                    f"x {describe(x)}, W_xh {describe(W_xh)}, W_hh {describe(W_hh)}")


@check(f"{A}.rnn_forward.h0", "rnn_forward", RNN_FORBIDDEN)
def rnn_h0(ctx):
    """A given initial state h0 is used (as a keyword and positionally)."""
    for B, N, D, H in [(2, 6, 3, 4), (1, 1, 2, 2), (3, 4, 4, 5)]:
        x, W_xh, W_hh, b_h, h0 = _rnn_inputs(ctx, B, N, D, H, h0=True)
        expected = _rnn_truth(x, W_xh, W_hh, b_h, h0)
        inputs = f"x {describe(x)}, h0 {describe(h0)}"
        _expect_rnn(ctx, ctx.call("rnn_forward", x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone(), h0=h0.clone()), expected,
                    "the recurrence starts from the given h0", inputs)
        _expect_rnn(ctx, ctx.call("rnn_forward", x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone(), h0.clone()), expected,
                    "h0 passed positionally", inputs)


@check(f"{A}.rnn_forward.dtype", "rnn_forward", RNN_FORBIDDEN)
def rnn_dtype(ctx):
    """float64 inputs give float64 states on the input's device."""
    x, W_xh, W_hh, b_h, h0 = _rnn_inputs(ctx, 2, 5, 3, 4, dtype=torch.float64, h0=True)
    got = ctx.call("rnn_forward", x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone(), h0.clone())
    _expect_rnn(ctx, got, _rnn_truth(x, W_xh, W_hh, b_h, h0), "float64 input keeps float64 (and the device)", f"x {describe(x)}", atol=1e-9)


# ---------------------------------------------------------------- graph_attention_mask
def _random_adjacency(ctx, n, density=0.3):
    return (torch.rand(n, n, generator=ctx.gen) < density).to(ctx.device)


@check(f"{A}.graph_attention_mask.values", "graph_attention_mask")
def graph_values(ctx):
    """adjacency | adjacency^T | I as bool on the adjacency's device, for random directed graphs."""
    for n, density in [(1, 0.5), (2, 0.5), (5, 0.3), (9, 0.2), (ctx.randrange(3, 30), 0.15), (6, 0.0), (4, 1.0)]:
        adjacency = _random_adjacency(ctx, n, density)
        expected = adjacency | adjacency.T | torch.eye(n, dtype=torch.bool, device=ctx.device)
        got = ctx.call("graph_attention_mask", adjacency.clone())
        expect_tensor(ctx, got, expected, "an edge in either direction, or i == j (bool, same device)", f"adjacency {describe(adjacency)}, density {density}")


@check(f"{A}.graph_attention_mask.properties", "graph_attention_mask")
def graph_properties(ctx):
    """A one-way edge is allowed both ways, self-loops always, non-edges never; a non-square input raises."""
    n = ctx.randrange(4, 12)
    adjacency = torch.zeros(n, n, dtype=torch.bool, device=ctx.device)
    a, b = ctx.randrange(0, n // 2), ctx.randrange(n // 2, n)
    adjacency[a, b] = True
    got = ctx.call("graph_attention_mask", adjacency.clone())
    expected = torch.eye(n, dtype=torch.bool, device=ctx.device)
    expected[a, b] = expected[b, a] = True
    expect_tensor(ctx, got, expected, f"a single edge {a} -> {b}: both directions and the diagonal, nothing else", f"adjacency {describe(adjacency)}")
    ctx.expect_raises(ValueError, "ValueError for a non-square adjacency", "graph_attention_mask", torch.zeros(3, 4, dtype=torch.bool, device=ctx.device))
    ctx.expect_raises(ValueError, "ValueError for a 1-D adjacency", "graph_attention_mask", torch.zeros(4, dtype=torch.bool, device=ctx.device))
