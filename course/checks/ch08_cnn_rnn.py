"""Hidden checks for 08-cnn-rnn.

Ground truths: index arithmetic (``|i - j| <= w``, shifts with zero padding), ``F.conv1d``
for the convolutions (centred padding, and left padding with dilation for the causal
one), ``torch.nn.RNN`` with the same weights for the recurrence, and boolean algebra for
the graph mask. One check per clause of ``CLAUSES``: values, dtype, device, inputs left
unchanged and each ValueError are graded separately, so a failure names what is wrong.
"""
import torch
import torch.nn.functional as F

from autograder.checking import check, contract_clauses, describe, expect_tensor, expect_unchanged

from .ground_truth import blame_helper, first_fault

A = ASSIGNMENT = "08"
CONTRACT = ["local_attention_mask", "shift_attention_matrix", "conv1d_via_attention", "rnn_forward", "graph_attention_mask",
            "causal_conv_as_attention"]

# A convolution of any dimensionality or direction does the forbidden job (a conv2d with a height-1 kernel is a
# conv1d): the names for the static scan, and torch.convolution, the ATen operator every one of them reaches
# (aten::convolution), for the recorder whatever routine the code called.
CONV_FORBIDDEN = ("torch.nn.functional.conv1d", "torch.nn.Conv1d", "torch.conv1d",
                  "torch.nn.functional.conv2d", "torch.nn.Conv2d", "torch.conv2d",
                  "torch.nn.functional.conv3d", "torch.nn.Conv3d", "torch.conv3d",
                  "torch.nn.functional.conv_transpose1d", "torch.nn.functional.conv_transpose2d", "torch.nn.functional.conv_transpose3d",
                  "torch.nn.ConvTranspose1d", "torch.nn.ConvTranspose2d", "torch.nn.ConvTranspose3d", "torch.convolution")
RNN_FORBIDDEN = ("torch.nn.RNN", "torch.nn.RNNCell")  # the recorder also finds aten::rnn_tanh(_cell) they reach

CLAUSES = contract_clauses(__file__, globals())


# ---------------------------------------------------------------- helpers
# ---------------------------------------------------------------- local_attention_mask
def _local_truth(n, window):
    i = torch.arange(n)
    return (i[:, None] - i[None, :]).abs() <= window


def _local_cases(ctx):
    n = ctx.randrange(3, 10)
    return [(5, 1), (12, 2), (9, 3), (2, 1), (n, 0), (n, n + 2), (1, 3), (ctx.randrange(10, 40), ctx.randrange(1, 8))]


@check(f"{A}.local_attention_mask.values", "local_attention_mask")
def local_values(ctx):
    """True iff |i - j| <= window (inclusive), for several sizes and windows, window 0, a wide window, n = 1."""
    for n, window in _local_cases(ctx):
        got = ctx.call("local_attention_mask", n, window)
        if type(got) is torch.Tensor and got.dtype != torch.bool:  # the dtype has its own clause
            got = got.detach().cpu() != 0
        expect_tensor(ctx, got, _local_truth(n, window), "mask[i, j] = |i - j| <= window", f"n = {n}, window = {window}", check_device=False)


@check(f"{A}.local_attention_mask.dtype", "local_attention_mask")
def local_dtype(ctx):
    """The mask is a bool tensor."""
    for n, window in [(5, 1), (ctx.randrange(2, 12), ctx.randrange(0, 4))]:
        got = ctx.call("local_attention_mask", n, window)
        if type(got) is not torch.Tensor or got.dtype != torch.bool:
            ctx.fail("the mask's dtype is torch.bool", f"got {describe(got)}", f"n = {n}, window = {window}")


@check(f"{A}.local_attention_mask.errors", "local_attention_mask")
def local_errors(ctx):
    """ValueError for a negative window."""
    ctx.expect_raises(ValueError, "ValueError for a negative window", "local_attention_mask", 5, -1)
    ctx.expect_raises(ValueError, "ValueError for a negative window", "local_attention_mask", ctx.randrange(2, 9), -ctx.randrange(2, 5))


# ---------------------------------------------------------------- shift_attention_matrix
def _shift_truth(n, offset):
    S = torch.zeros(n, n)
    for i in range(n):
        if 0 <= i + offset < n:
            S[i, i + offset] = 1.0
    return S


@check(f"{A}.shift_attention_matrix.values", "shift_attention_matrix")
def shift_values(ctx):
    """S[i, i + offset] = 1 inside the sequence, zero elsewhere, for positive, negative and out-of-range offsets;
    so (S x)_i = x_(i + offset) with zeros outside (no wrap-around)."""
    n = ctx.randrange(4, 15)
    cases = [(5, 1), (5, -1), (6, 0), (7, 3), (7, -6), (4, 4), (4, -9), (1, 0), (3, 1), (n, ctx.randrange(-n, n)), (n, -ctx.randrange(1, n))]
    for n_, offset in cases:
        got = ctx.call("shift_attention_matrix", n_, offset)
        if type(got) is torch.Tensor and got.dtype != torch.float32:  # the dtype has its own clause
            got = got.detach().cpu().to(torch.float32)
        expect_tensor(ctx, got, _shift_truth(n_, offset), "S[i, i + offset] = 1 where 0 <= i + offset < n, 0 elsewhere (no wrap-around)",
                      f"n = {n_}, offset = {offset}", check_device=False)


@check(f"{A}.shift_attention_matrix.dtype", "shift_attention_matrix")
def shift_dtype(ctx):
    """The matrix is float32."""
    for n, offset in [(5, 1), (ctx.randrange(2, 9), -1)]:
        got = ctx.call("shift_attention_matrix", n, offset)
        if type(got) is not torch.Tensor or got.dtype != torch.float32:
            ctx.fail("the matrix's dtype is torch.float32", f"got {describe(got)}", f"n = {n}, offset = {offset}")


# ---------------------------------------------------------------- conv1d_via_attention
def _conv_truth(x, weight):
    K = weight.shape[-1]
    return F.conv1d(x.detach().cpu().double().transpose(1, 2), weight.detach().cpu().double(), padding=K // 2).transpose(1, 2)


def _shifts_blamed(ctx, N, K):
    """A conv1d_via_attention that calls the student's shift_attention_matrix(N, k - K // 2) and fails because
    one of those matrices is wrong (or raises) is told to fix it first (``blame_helper``)."""
    def probes():
        for offset in range(-(K // 2), K // 2 + 1):
            truth, what = _shift_truth(N, offset), f"n = {N}, offset = {offset}"
            yield f"{A}.shift_attention_matrix.values", (N, offset), truth, what, {"check_device": False, "check_dtype": False}
            yield f"{A}.shift_attention_matrix.dtype", (N, offset), truth, what, {"check_device": False}

    return blame_helper(ctx, "conv1d_via_attention", "shift_attention_matrix", lambda: first_fault(ctx, "shift_attention_matrix", probes()))


@check(f"{A}.conv1d_via_attention.values", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_values(ctx):
    """Equals F.conv1d(x^T, weight, padding=K//2)^T for several batch sizes, lengths, channels and kernels (float32)."""
    cases = [(2, 10, 3, 4, 5), (1, 7, 1, 1, 3), (3, 6, 2, 5, 1), (2, 3, 4, 3, 7), (1, 1, 3, 2, 3), (2, 2, 3, 3, 5),
             (ctx.randrange(1, 4), ctx.randrange(4, 30), ctx.randrange(1, 6), ctx.randrange(1, 6), 2 * ctx.randrange(0, 4) + 1)]
    for B, N, C_in, C_out, K in cases:
        x, weight = ctx.randn(B, N, C_in), ctx.randn(C_out, C_in, K)
        with _shifts_blamed(ctx, N, K):
            got = ctx.call("conv1d_via_attention", x.clone(), weight.clone())
            expect_tensor(ctx, _as64(got), _conv_truth(x, weight), "equals F.conv1d with padding K//2 (cross-correlation, zero padding)",
                          f"x {describe(x)}, weight {describe(weight)}", atol=1e-4, check_device=False)


@check(f"{A}.conv1d_via_attention.dtype", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_dtype(ctx):
    """The result has x's dtype: float32 and float64."""
    for dtype in (torch.float32, torch.float64):
        x, weight = ctx.randn(2, 9, 3, dtype=dtype), ctx.randn(2, 3, 3, dtype=dtype)
        with _shifts_blamed(ctx, 9, 3):
            got = ctx.call("conv1d_via_attention", x.clone(), weight.clone())
            if type(got) is not torch.Tensor or got.dtype != dtype:
                ctx.fail("the result has the dtype of x", f"got {describe(got)}", f"x {describe(x)}, weight {describe(weight)}")


@check(f"{A}.conv1d_via_attention.device", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_device(ctx):
    """The result is on x's device (probed with meta-device inputs on a CPU-only grader)."""
    x, weight = ctx.randn(2, 7, 3), ctx.randn(4, 3, 3)
    got = ctx.call("conv1d_via_attention", x.clone(), weight.clone())
    if type(got) is torch.Tensor and got.device.type != x.device.type:
        ctx.fail("the result is on the device of x", f"result on {got.device}, x on {x.device}", f"x {describe(x)}, weight {describe(weight)}")
    ctx.probe_device("conv1d_via_attention", x, weight, prop="the result is on the device of x")


@check(f"{A}.conv1d_via_attention.unchanged", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_unchanged(ctx):
    """x and weight keep their values and shapes."""
    x, weight = ctx.randn(2, 8, 3), ctx.randn(4, 3, 5)
    x_in, w_in = x.clone(), weight.clone()
    ctx.call("conv1d_via_attention", x_in, w_in)
    expect_unchanged(ctx, [("x", x_in, x), ("weight", w_in, weight)], "x and weight left unchanged", f"x {describe(x)}, weight {describe(weight)}", who="conv1d_via_attention")


@check(f"{A}.conv1d_via_attention.even_kernel", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_even_kernel(ctx):
    """ValueError for an even kernel size."""
    x = ctx.randn(1, 8, 3)
    for K in (2, 2 * ctx.randrange(2, 4)):
        ctx.expect_raises(ValueError, "ValueError for an even kernel size", "conv1d_via_attention", x, ctx.randn(2, 3, K))


@check(f"{A}.conv1d_via_attention.channels", "conv1d_via_attention", CONV_FORBIDDEN)
def conv_channels(ctx):
    """ValueError when weight's C_in differs from x's channel count."""
    x = ctx.randn(1, 8, 3)
    for C_w in (4, 2, 1):
        ctx.expect_raises(ValueError, "ValueError when weight's C_in differs from x's channels", "conv1d_via_attention", x, ctx.randn(2, C_w, 3))


# ---------------------------------------------------------------- rnn_forward
def _rnn_truth(x, W_xh, W_hh, b_h, h0=None):
    """torch.nn.RNN (tanh) in float64 with weight_ih = W_xh^T, weight_hh = W_hh^T, bias_ih = b_h, bias_hh = 0."""
    x, W_xh, W_hh, b_h = (t.detach().cpu().double() for t in (x, W_xh, W_hh, b_h))
    D, H = W_xh.shape
    rnn = torch.nn.RNN(D, H, batch_first=True).double()
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(W_xh.T)
        rnn.weight_hh_l0.copy_(W_hh.T)
        rnn.bias_ih_l0.copy_(b_h)
        rnn.bias_hh_l0.zero_()
        states, last = rnn(x, None if h0 is None else h0.detach().cpu().double().unsqueeze(0))
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
    for part, value, truth in [("all states (B, N, H)", got[0], expected[0]), ("last state (B, H)", got[1], expected[1])]:
        if type(value) is torch.Tensor and value.is_floating_point():  # dtype and device have their own clauses
            value = value.detach().cpu().double()
        expect_tensor(ctx, value, truth, f"{prop}: {part}", inputs, atol=atol, check_device=False)


@check(f"{A}.rnn_forward.values", "rnn_forward", RNN_FORBIDDEN)
def rnn_values(ctx):
    """Equals torch.nn.RNN with the same weights (h0 = 0), several shapes including N = 1 and square W_hh."""
    cases = [(2, 5, 3, 4), (1, 1, 2, 3), (3, 12, 5, 5), (2, 7, 1, 6), (ctx.randrange(1, 4), ctx.randrange(2, 25), ctx.randrange(1, 7), ctx.randrange(1, 9))]
    for B, N, D, H in cases:
        x, W_xh, W_hh, b_h, _ = _rnn_inputs(ctx, B, N, D, H)
        got = ctx.call("rnn_forward", x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone())
        _expect_rnn(ctx, got, _rnn_truth(x, W_xh, W_hh, b_h), "h_t = tanh(x_t W_xh + h_(t-1) W_hh + b_h) from h_0 = 0",
                    f"x {describe(x)}, W_xh {describe(W_xh)}, W_hh {describe(W_hh)}, b_h {describe(b_h)}")


@check(f"{A}.rnn_forward.h0", "rnn_forward", RNN_FORBIDDEN)
def rnn_h0(ctx):
    """A given h0 is the state before step 1: starting from the state your function reached after a first
    input x_0 and reading x gives the same states as reading x_0 then x from zeros (keyword and positional h0).
    A consistency check, so a wrong update formula is graded by .values alone."""
    for B, N, D, H in [(2, 6, 3, 4), (1, 1, 2, 2), (3, 4, 4, 5)]:
        x, W_xh, W_hh, b_h, _ = _rnn_inputs(ctx, B, N + 1, D, H)
        first, rest = x[:, :1].contiguous(), x[:, 1:].contiguous()
        got = ctx.call("rnn_forward", first.clone(), W_xh.clone(), W_hh.clone(), b_h.clone())
        whole = ctx.call("rnn_forward", x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone())
        if not (isinstance(got, tuple) and len(got) == 2 and isinstance(whole, tuple) and len(whole) == 2
                and type(got[0]) is torch.Tensor and type(whole[0]) is torch.Tensor and tuple(whole[0].shape[:2]) == (B, N + 1)):
            return  # no (states, last) pair to compare: .values reports the shape
        h0 = got[0][:, -1].detach().clone()
        expected = whole[0][:, 1:].detach().cpu().double()
        inputs = f"x {describe(rest)}, W_xh {describe(W_xh)}, W_hh {describe(W_hh)}, h0 {describe(h0)} (your state after one step)"
        for how, result in [("keyword h0=", ctx.call("rnn_forward", rest.clone(), W_xh.clone(), W_hh.clone(), b_h.clone(), h0=h0.clone())),
                            ("positional h0", ctx.call("rnn_forward", rest.clone(), W_xh.clone(), W_hh.clone(), b_h.clone(), h0.clone()))]:
            states = result[0] if isinstance(result, tuple) and len(result) == 2 else result
            expect_tensor(ctx, _as64(states), expected, f"the recurrence starts from the given h0 ({how}): states equal those of x_0 then x from zeros",
                          inputs, atol=1e-5, check_device=False)


@check(f"{A}.rnn_forward.dtype", "rnn_forward", RNN_FORBIDDEN)
def rnn_dtype(ctx):
    """The states have x's dtype (float32, float64), with and without h0."""
    for dtype, with_h0 in ((torch.float32, False), (torch.float64, False), (torch.float64, True)):
        x, W_xh, W_hh, b_h, h0 = _rnn_inputs(ctx, 2, 5, 3, 4, dtype=dtype, h0=with_h0)
        got = ctx.call("rnn_forward", x, W_xh, W_hh, b_h, h0)
        if not isinstance(got, tuple) or len(got) != 2:
            ctx.fail("the states have the dtype of x", f"expected a tuple (states, last), got {type(got).__name__}", f"x {describe(x)}")
        for part, value in zip(("states", "last"), got):
            if type(value) is not torch.Tensor or value.dtype != dtype:
                ctx.fail("the states have the dtype of x", f"{part} is {describe(value)}, expected {dtype}", f"x {describe(x)}, h0 {describe(h0)}")


@check(f"{A}.rnn_forward.device", "rnn_forward", RNN_FORBIDDEN)
def rnn_device(ctx):
    """states and last stay on x's device (probed with meta-device inputs on a CPU-only grader), with and without h0."""
    # B == N: probe_device first calls with these very tensors, so a shape-changing in-place bug
    # (graded by .unchanged) must not turn the meta call into a shape error here
    x, W_xh, W_hh, b_h, h0 = _rnn_inputs(ctx, 3, 3, 4, 5, h0=True)
    ctx.probe_device("rnn_forward", x, W_xh, W_hh, b_h, prop="states and last on the device of x (h0 omitted)")
    ctx.probe_device("rnn_forward", x, W_xh, W_hh, b_h, h0, prop="states and last on the device of x (h0 given)")


@check(f"{A}.rnn_forward.unchanged", "rnn_forward", RNN_FORBIDDEN)
def rnn_unchanged(ctx):
    """x, W_xh, W_hh, b_h and h0 keep their values and shapes."""
    x, W_xh, W_hh, b_h, h0 = _rnn_inputs(ctx, 2, 5, 3, 4, h0=True)
    inputs = [x.clone(), W_xh.clone(), W_hh.clone(), b_h.clone(), h0.clone()]
    ctx.call("rnn_forward", *inputs)
    expect_unchanged(ctx, list(zip(("x", "W_xh", "W_hh", "b_h", "h0"), inputs, (x, W_xh, W_hh, b_h, h0))), "inputs left unchanged",
                     f"x {describe(x)}, h0 {describe(h0)}", who="rnn_forward")


# ---------------------------------------------------------------- graph_attention_mask
def _random_adjacency(ctx, n, density=0.3):
    return (torch.rand(n, n, generator=ctx.gen) < density).to(ctx.device)


def _graph_truth(adjacency):
    a = adjacency.detach().cpu().bool()
    return a | a.T | torch.eye(a.shape[0], dtype=torch.bool)


@check(f"{A}.graph_attention_mask.values", "graph_attention_mask")
def graph_values(ctx):
    """adjacency | adjacency^T | I for random directed graphs, a single one-way edge, empty and full graphs."""
    n = ctx.randrange(4, 12)
    single = torch.zeros(n, n, dtype=torch.bool, device=ctx.device)
    single[ctx.randrange(0, n // 2), ctx.randrange(n // 2, n)] = True
    graphs = [_random_adjacency(ctx, m, density) for m, density in [(1, 0.5), (2, 0.5), (5, 0.3), (9, 0.2), (ctx.randrange(3, 30), 0.15), (6, 0.0), (4, 1.0)]]
    for adjacency in graphs + [single]:
        got = ctx.call("graph_attention_mask", adjacency.clone())
        if type(got) is torch.Tensor and got.dtype != torch.bool:  # the dtype has its own clause
            got = got.detach() != 0
        expect_tensor(ctx, got, _graph_truth(adjacency), "an edge in either direction, or i == j, and nothing else",
                      f"adjacency {describe(adjacency)} with edges {adjacency.nonzero().tolist()[:12]}", check_device=False)


@check(f"{A}.graph_attention_mask.dtype", "graph_attention_mask")
def graph_dtype(ctx):
    """The mask is a bool tensor."""
    adjacency = _random_adjacency(ctx, 5, 0.3)
    got = ctx.call("graph_attention_mask", adjacency.clone())
    if type(got) is not torch.Tensor or got.dtype != torch.bool:
        ctx.fail("the mask's dtype is torch.bool", f"got {describe(got)}", f"adjacency {describe(adjacency)}")


@check(f"{A}.graph_attention_mask.device", "graph_attention_mask")
def graph_device(ctx):
    """The mask stays on adjacency's device (probed with a meta-device adjacency on a CPU-only grader)."""
    ctx.probe_device("graph_attention_mask", _random_adjacency(ctx, ctx.randrange(3, 9), 0.3), prop="the mask on the device of adjacency")


@check(f"{A}.graph_attention_mask.unchanged", "graph_attention_mask")
def graph_unchanged(ctx):
    """adjacency keeps its values (a one-way edge stays one-way in the caller's tensor)."""
    n = ctx.randrange(4, 10)
    adjacency = _random_adjacency(ctx, n, 0.3)
    adjacency[0, n - 1], adjacency[n - 1, 0] = True, False
    given = adjacency.clone()
    ctx.call("graph_attention_mask", given)
    expect_unchanged(ctx, [("adjacency", given, adjacency)], "adjacency left unchanged", f"adjacency {describe(adjacency)}", who="graph_attention_mask")


@check(f"{A}.graph_attention_mask.errors", "graph_attention_mask")
def graph_errors(ctx):
    """ValueError for a non-square or a 1-D adjacency."""
    ctx.expect_raises(ValueError, "ValueError for a non-square adjacency", "graph_attention_mask", torch.zeros(3, 4, dtype=torch.bool, device=ctx.device))
    ctx.expect_raises(ValueError, "ValueError for a 1-D adjacency", "graph_attention_mask", torch.zeros(4, dtype=torch.bool, device=ctx.device))
    ctx.expect_raises(ValueError, "ValueError for a 3-D adjacency", "graph_attention_mask", torch.zeros(2, 3, 3, dtype=torch.bool, device=ctx.device))


# ---------------------------------------------------------------- causal_conv_as_attention
def _causal_truth(kernel, n, dilation=1):
    """A with A[i, i - (K - 1 - k) d] = kernel[k], read off F.conv1d applied to the unit vectors."""
    k = kernel.detach().cpu().double()
    K = k.shape[0]
    eye = torch.eye(n, dtype=torch.float64).unsqueeze(1)                       # (n, 1, n): column j is the unit vector e_j
    out = F.conv1d(F.pad(eye, ((K - 1) * dilation, 0)), k.view(1, 1, K), dilation=dilation)   # (n, 1, n): row j is A e_j
    return out[:, 0, :].T                                                        # (n, n)


def _causal_cases(ctx):
    return [(3, 6), (1, 4), (5, 3), (4, 1), (2, 2), (ctx.randrange(1, 6), ctx.randrange(1, 20))]


def _as64(got):
    return got.detach().cpu().double() if type(got) is torch.Tensor and got.is_floating_point() else got


@check(f"{A}.causal_conv_as_attention.values", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_values(ctx):
    """A[i, j] = kernel[K - 1 - (i - j)] on the K diagonals at and below the main one, zero elsewhere (K > n, K = 1 too)."""
    for K, n in _causal_cases(ctx):
        kernel = ctx.randn(K)
        got = ctx.call("causal_conv_as_attention", kernel.clone(), n)
        expect_tensor(ctx, _as64(got), _causal_truth(kernel, n), "A @ x equals F.conv1d with K - 1 zeros on the left (A[i, j] = kernel[K - 1 - (i - j)])",
                      f"kernel {describe(kernel)} = {[round(v, 4) for v in kernel.tolist()]}, n = {n}", atol=1e-6, check_device=False)


@check(f"{A}.causal_conv_as_attention.dilation", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_dilation(ctx):
    """dilation d gives the matrix of the kernel spread out with d - 1 zeros between its taps (dilation 1):
    a consistency check between two calls, so a wrong placement of the taps is graded by .values alone."""
    for K, n, d in [(3, 9, 2), (2, 8, 3), (3, 4, 2), (1, 5, 4), (ctx.randrange(2, 5), ctx.randrange(5, 20), ctx.randrange(2, 5))]:
        kernel = ctx.randn(K)
        spread = torch.zeros((K - 1) * d + 1, dtype=kernel.dtype, device=kernel.device)
        spread[::d] = kernel
        dilated = ctx.call("causal_conv_as_attention", kernel.clone(), n, dilation=d)
        plain = ctx.call("causal_conv_as_attention", spread.clone(), n)
        if type(plain) is not torch.Tensor:
            return  # .values reports what came back
        expect_tensor(ctx, _as64(dilated), _as64(plain), "dilation d equals dilation 1 with d - 1 zeros between the kernel's taps",
                      f"kernel {describe(kernel)} = {[round(v, 4) for v in kernel.tolist()]}, n = {n}, dilation = {d}; "
                      f"spread kernel {[round(v, 4) for v in spread.tolist()]}", atol=1e-6, check_device=False)


@check(f"{A}.causal_conv_as_attention.dtype", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_dtype(ctx):
    """The matrix has the kernel's dtype."""
    for dtype in (torch.float32, torch.float64):
        kernel = ctx.randn(3, dtype=dtype)
        got = ctx.call("causal_conv_as_attention", kernel.clone(), 5)
        if type(got) is not torch.Tensor or got.dtype != dtype:
            ctx.fail("the matrix has the dtype of kernel", f"got {describe(got)}", f"kernel {describe(kernel)}, n = 5")


@check(f"{A}.causal_conv_as_attention.device", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_device(ctx):
    """The matrix is on the kernel's device (probed with a meta-device kernel on a CPU-only grader)."""
    kernel = ctx.randn(3)
    got = ctx.call("causal_conv_as_attention", kernel.clone(), 6)
    if type(got) is torch.Tensor and got.device.type != kernel.device.type:
        ctx.fail("the matrix is on the device of kernel", f"result on {got.device}, kernel on {kernel.device}", f"kernel {describe(kernel)}, n = 6")
    ctx.probe_device("causal_conv_as_attention", kernel, 6, prop="the matrix is on the device of kernel")


@check(f"{A}.causal_conv_as_attention.unchanged", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_unchanged(ctx):
    """kernel keeps its values and shape."""
    kernel = ctx.randn(ctx.randrange(2, 6))
    given = kernel.clone()
    ctx.call("causal_conv_as_attention", given, 7)
    expect_unchanged(ctx, [("kernel", given, kernel)], "kernel left unchanged", f"kernel {describe(kernel)}, n = 7", who="causal_conv_as_attention")


@check(f"{A}.causal_conv_as_attention.bad_kernel", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_bad_kernel(ctx):
    """ValueError for a 2-D, a 0-D or an empty kernel."""
    for kernel, why in [(ctx.randn(1, 3), "a 2-D kernel"), (ctx.randn(3)[0], "a 0-D kernel"), (ctx.randn(0), "an empty kernel")]:
        ctx.expect_raises(ValueError, f"ValueError for {why}", "causal_conv_as_attention", kernel, 5)


@check(f"{A}.causal_conv_as_attention.bad_sizes", "causal_conv_as_attention", CONV_FORBIDDEN)
def causal_bad_sizes(ctx):
    """ValueError for n < 1 and for dilation < 1."""
    kernel = ctx.randn(3)
    ctx.expect_raises(ValueError, "ValueError for n = 0", "causal_conv_as_attention", kernel, 0)
    ctx.expect_raises(ValueError, "ValueError for dilation = 0", "causal_conv_as_attention", kernel, 5, dilation=0)
    ctx.expect_raises(ValueError, "ValueError for a negative dilation", "causal_conv_as_attention", kernel, 5, dilation=-1)
