"""Hidden checks for 07-positional-encoding.

Ground truths: ``torch.linspace`` / ``torch.arange`` for the tables; the
sinusoidal formula evaluated in float64 one column at a time (sine for even
columns, cosine for odd ones); the rotation matrix written out block by block
in float64 and, independently, the shift property ``PE[p+k] = M_k PE[p]``; RoPE
written out pair by pair and token by token in float64.
One check per clause (``CLAUSES``): values are compared whatever the dtype, and
the dtype has its own clause, so a float64 answer loses the dtype point only.
The ``PositionalEncoding`` checks are plain functions taking the class name so
the capstone (09) can reuse them on its own copy of the module. Here (07) a ``PositionalEncoding`` that
fails because the student's ``sinusoidal_positional_encoding``, which it calls, is wrong on its
``(max_len, d_model)`` is told to fix that first (``ground_truth.blame_helper``).
"""
import contextlib
import math

import torch

from autograder.checking import check, contract_clauses, describe, expect_dtype, expect_tensor, expect_untouched

from .ground_truth import blame_helper, first_fault

A = ASSIGNMENT = "07"
CONTRACT = [
    "normalized_positions",
    "integer_positions",
    "sinusoidal_positional_encoding",
    "PositionalEncoding",
    "relative_position_matrix",
    "apply_rope",
]

CLAUSES = contract_clauses(__file__, globals())


def sinusoid_truth(num_positions: int, d_model: int, dtype=torch.float64) -> torch.Tensor:
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)), column by column."""
    pe = torch.empty(num_positions, d_model, dtype=torch.float64)
    p = torch.arange(num_positions, dtype=torch.float64)
    for col in range(d_model):
        i = col // 2
        angle = p / (10000.0 ** (2 * i / d_model))
        pe[:, col] = torch.sin(angle) if col % 2 == 0 else torch.cos(angle)
    return pe.to(dtype)


def rotation_truth(k: int, d_model: int) -> torch.Tensor:
    """M_k written out: block i is [[cos, sin], [-sin, cos]] of k * 10000^(-2i/d)."""
    M = torch.zeros(d_model, d_model, dtype=torch.float64)
    for i in range(d_model // 2):
        phi = k / (10000.0 ** (2 * i / d_model))
        M[2 * i, 2 * i], M[2 * i, 2 * i + 1] = math.cos(phi), math.sin(phi)
        M[2 * i + 1, 2 * i], M[2 * i + 1, 2 * i + 1] = -math.sin(phi), math.cos(phi)
    return M


def rope_truth(x: torch.Tensor) -> torch.Tensor:
    """RoPE written out token by token and pair by pair in float64 (positions along dim -2)."""
    x = x.detach().to("cpu", torch.float64)
    out = torch.empty_like(x)
    N, d = x.shape[-2], x.shape[-1]
    for n in range(N):
        for i in range(d // 2):
            a = n / (10000.0 ** (2 * i / d))
            c, s = math.cos(a), math.sin(a)
            x0, x1 = x[..., n, 2 * i], x[..., n, 2 * i + 1]
            out[..., n, 2 * i] = x0 * c - x1 * s
            out[..., n, 2 * i + 1] = x0 * s + x1 * c
    return out


# ---------------------------------------------------------------- the two tables
@check(f"{A}.normalized_positions.values", "normalized_positions")
def normalized_values(ctx):
    """i / (n - 1) for sentences of several lengths n >= 2 (compared whatever the dtype)."""
    for n in [2, 3, 6, 9, ctx.randrange(10, 60), 101]:
        got = ctx.call("normalized_positions", n)
        expected = torch.linspace(0.0, 1.0, n, dtype=torch.float64)
        expect_tensor(ctx, got, expected, "positions i/(n-1), from 0 to 1, shape (n,)", f"n = {n}",
                      check_dtype=False, check_device=False, atol=1e-6)


@check(f"{A}.normalized_positions.single", "normalized_positions")
def normalized_single(ctx):
    """n = 1 gives [0.], never NaN."""
    expect_tensor(ctx, ctx.call("normalized_positions", 1), torch.zeros(1), "a single token sits at 0 (not NaN)", "n = 1",
                  check_dtype=False, check_device=False)


@check(f"{A}.normalized_positions.dtype", "normalized_positions")
def normalized_dtype(ctx):
    """float32 for several n, n = 1 included."""
    for n in [1, 2, ctx.randrange(3, 40)]:
        expect_dtype(ctx, ctx.call("normalized_positions", n), torch.float32, "normalized positions are float32", f"n = {n}")


@check(f"{A}.normalized_positions.errors", "normalized_positions")
def normalized_errors(ctx):
    """n < 1 raises ValueError."""
    for bad in [0, -ctx.randrange(1, 5)]:
        ctx.expect_raises(ValueError, f"ValueError for n = {bad}", "normalized_positions", bad)


@check(f"{A}.integer_positions.values", "integer_positions")
def integer_values(ctx):
    """1, 2, ..., n (compared whatever the dtype)."""
    for n in [1, 2, 6, 9, ctx.randrange(10, 80)]:
        got = ctx.call("integer_positions", n)
        expect_tensor(ctx, got, torch.arange(1, n + 1, dtype=torch.float64), "positions counted 1..n, shape (n,)", f"n = {n}",
                      check_dtype=False, check_device=False, atol=0, rtol=0)


@check(f"{A}.integer_positions.dtype", "integer_positions")
def integer_dtype(ctx):
    """int64 for several n."""
    for n in [1, ctx.randrange(2, 40)]:
        expect_dtype(ctx, ctx.call("integer_positions", n), torch.int64, "integer positions are int64", f"n = {n}")


@check(f"{A}.integer_positions.errors", "integer_positions")
def integer_errors(ctx):
    """n < 1 raises ValueError."""
    for bad in [0, -ctx.randrange(1, 5)]:
        ctx.expect_raises(ValueError, f"ValueError for n = {bad}", "integer_positions", bad)


# ---------------------------------------------------------------- sinusoidal_positional_encoding
SIZES = [(1, 2), (10, 4), (100, 20), (50, 64), (7, 6), (2, 10), (300, 8)]


@check(f"{A}.sinusoidal_positional_encoding.values", "sinusoidal_positional_encoding")
def sinusoid_values(ctx):
    """Equals the formula (sin in even columns, cos in odd ones) for several sizes, whatever the dtype."""
    sizes = SIZES + [(ctx.randrange(3, 200), 2 * ctx.randrange(1, 40))]
    for num_positions, d_model in sizes:
        got = ctx.call("sinusoidal_positional_encoding", num_positions, d_model)
        inputs = f"num_positions {num_positions}, d_model {d_model}"
        expected = sinusoid_truth(num_positions, d_model)
        if type(got) is torch.Tensor and tuple(got.shape) == tuple(expected.shape):
            # name the first property that breaks before the element-wise comparison
            g = got.detach().to("cpu", torch.float64)
            expect_tensor(ctx, g[0], expected[0], "position 0 is (sin 0, cos 0, ...) = (0, 1, 0, 1, ...)", inputs, atol=1e-5)
            if num_positions > 1:
                expect_tensor(ctx, g[1, 0:2], expected[1, 0:2], "pair 0 turns at frequency 1: PE[1, 0:2] = (sin 1, cos 1)", inputs, atol=1e-5)
        expect_tensor(ctx, got, expected, "PE[p,2i] = sin(p/10000^(2i/d)), PE[p,2i+1] = cos(p/10000^(2i/d)), shape (num_positions, d_model)",
                      inputs, check_dtype=False, check_device=False, atol=1e-4, rtol=1e-4)


@check(f"{A}.sinusoidal_positional_encoding.dtype", "sinusoidal_positional_encoding")
def sinusoid_dtype(ctx):
    """float32."""
    for num_positions, d_model in [(10, 4), (ctx.randrange(1, 50), 2 * ctx.randrange(1, 20))]:
        expect_dtype(ctx, ctx.call("sinusoidal_positional_encoding", num_positions, d_model), torch.float32,
                  "the encoding is float32", f"num_positions {num_positions}, d_model {d_model}")


@check(f"{A}.sinusoidal_positional_encoding.errors", "sinusoidal_positional_encoding")
def sinusoid_errors(ctx):
    """An odd d_model raises ValueError."""
    for bad in [1, 3, 2 * ctx.randrange(2, 20) + 1]:
        ctx.expect_raises(ValueError, f"ValueError for odd d_model = {bad}", "sinusoidal_positional_encoding", 10, bad)


# ---------------------------------------------------------------- PositionalEncoding (shared with 09)
def _sinusoid_blamed(ctx, cls: str, max_len: int, d_model: int, dtype: bool = False):
    """In 07, blame the student's sinusoidal_positional_encoding(max_len, d_model) when ``cls`` calls it and it is
    wrong there (its values; with ``dtype``, its float32 too); the capstone (09) grades no such function."""
    if not ctx.check.name.startswith(f"{A}."):
        return contextlib.nullcontext()
    truth, what = sinusoid_truth(max_len, d_model), f"num_positions {max_len}, d_model {d_model}"
    probes = [(f"{A}.sinusoidal_positional_encoding.values", (max_len, d_model), truth, what, {"check_dtype": False, "check_device": False, "atol": 1e-4})]
    if dtype:
        probes.append((f"{A}.sinusoidal_positional_encoding.dtype", (max_len, d_model), truth.float(), what, {"check_device": False, "atol": 1e-4}))
    return blame_helper(ctx, cls, "sinusoidal_positional_encoding", lambda: first_fault(ctx, "sinusoidal_positional_encoding", probes))


def pe_buffer_registered(ctx, cls: str = "PositionalEncoding") -> None:
    """`pe` is a registered buffer (get_buffer finds it), not trainable, and saved in the state_dict."""
    for d_model, max_len in [(8, 20), (2 * ctx.randrange(2, 12), ctx.randrange(10, 120))]:
        inputs = f"{cls}({d_model}, max_len={max_len})"
        module = ctx.call(cls, d_model, max_len)
        if ctx.raised_method(module, "get_buffer", "pe") is not None:
            ctx.fail("pe is a registered buffer", "module.get_buffer('pe') fails: store it with self.register_buffer('pe', ...)", inputs)
        if ctx.attr(module, "pe.requires_grad"):
            ctx.fail("pe is not trainable", "pe requires grad: it must be a buffer, not an nn.Parameter", inputs)
        state = ctx.method(module, "state_dict")
        keys = sorted(str(k) for k in dict.keys(state)) if isinstance(state, dict) else []
        if "pe" not in keys:
            ctx.fail("pe is saved with the model (it is in state_dict())", f"state_dict() holds {keys}, no 'pe': a buffer registered with "
                     "persistent=False is not saved; register_buffer('pe', ...) with the default persistent=True is", inputs)


def pe_buffer_values(ctx, cls: str = "PositionalEncoding") -> None:
    """`pe` has shape (max_len, d_model) and holds the sinusoid (any floating dtype)."""
    for d_model, max_len in [(8, 20), (2 * ctx.randrange(2, 12), ctx.randrange(10, 120))]:
        inputs = f"{cls}({d_model}, max_len={max_len})"
        with _sinusoid_blamed(ctx, cls, max_len, d_model):
            module = ctx.call(cls, d_model, max_len)
            expect_tensor(ctx, ctx.attr(module, "pe"), sinusoid_truth(max_len, d_model),
                          "buffer pe of shape (max_len, d_model) holds the sinusoidal encoding", inputs,
                          check_dtype=False, check_device=False, atol=1e-4)


def pe_forward_values(ctx, cls: str = "PositionalEncoding") -> None:
    """forward(x) = x + PE[:N] for several shapes, N = max_len included (values, whatever the dtype)."""
    cases = [(2, 5, 8, 20, torch.float32), (1, 1, 4, 10, torch.float32), (3, 12, 6, 12, torch.float32),
             (2, 7, 10, 50, torch.float64), (ctx.randrange(1, 5), ctx.randrange(2, 30), 2 * ctx.randrange(2, 10), 40, torch.float32)]
    for B, N, D, max_len, dtype in cases:
        with _sinusoid_blamed(ctx, cls, max_len, D):
            module = ctx.call(cls, D, max_len)
            ctx.method(module, "to", str(ctx.device))
            x = ctx.randn(B, N, D, dtype=dtype)
            got = ctx.method(module, "__call__", x.clone())
            expected = x.double() + sinusoid_truth(N, D).to(ctx.device)
            expect_tensor(ctx, got, expected, "forward returns x + pe[:N] (shape of x)",
                          f"x {describe(x)}, {cls}({D}, max_len={max_len}) on {ctx.device}", check_dtype=False, atol=1e-4)
    # the device of x, without a GPU: the module moved to `meta` (its buffer with it), a table made on the CPU in
    # forward (the buffer left aside) meets x there, as it meets a GPU's x (probe_module)
    D, N = 2 * ctx.randrange(2, 8), ctx.randrange(1, 12)
    ctx.probe_module(ctx.call(cls, D, 16), ctx.randn(2, N, D), prop="forward returns x + pe[:N] on the device of x (the module moved there)")


def pe_forward_dtype(ctx, cls: str = "PositionalEncoding") -> None:
    """The output has the dtype of x, float32 and float64."""
    for dtype in [torch.float32, torch.float64]:
        D, N = 2 * ctx.randrange(2, 8), ctx.randrange(1, 10)
        with _sinusoid_blamed(ctx, cls, 16, D, dtype=True):
            module = ctx.call(cls, D, 16)
            ctx.method(module, "to", str(ctx.device))
            x = ctx.randn(2, N, D, dtype=dtype)
            expect_dtype(ctx, ctx.method(module, "__call__", x.clone()), dtype, "forward keeps the dtype of x",
                         f"x {describe(x)}, {cls}({D}, max_len=16)")


def pe_forward_unchanged(ctx, cls: str = "PositionalEncoding") -> None:
    """forward(x) does not modify x."""
    D, N = 2 * ctx.randrange(2, 8), ctx.randrange(1, 12)
    module = ctx.call(cls, D, 16)
    ctx.method(module, "to", str(ctx.device))
    x = ctx.randn(2, N, D)
    before = x.clone()
    ctx.method(module, "__call__", x)
    expect_tensor(ctx, x, before, "forward leaves its input x unchanged", f"x {describe(before)}, {cls}({D}, max_len=16)", atol=0, rtol=0)
    expect_untouched(ctx, [("x", x)], "forward leaves its input x unchanged", f"x {describe(before)}, {cls}({D}, max_len=16)", who=f"{cls}.forward")


def pe_dropout_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """Dropout acts on x + PE: in training each entry is 0 or (x + PE)/(1-p); in eval mode nothing is dropped."""
    D, N = 16, 50
    module = ctx.call(cls, D, 64, 0.5)
    ctx.method(module, "to", str(ctx.device))
    ctx.method(module, "train")
    x = ctx.randn(4, N, D)
    inputs = f"x {describe(x)}, {cls}({D}, max_len=64, dropout=0.5) in train mode"
    got = ctx.method(module, "__call__", x.clone())
    full = (x.double() + sinusoid_truth(N, D).to(ctx.device)).cpu()
    if type(got) is not torch.Tensor or tuple(got.shape) != tuple(x.shape):
        ctx.fail("dropout output has the shape of x", f"got {describe(got)}", inputs)
    g = got.detach().to("cpu", torch.float64)
    dropped = g.abs() < 1e-7
    kept_ok = ((g - 2.0 * full).abs() <= 1e-4 + 1e-4 * full.abs()) | dropped
    if not bool(kept_ok.all()):
        ctx.fail("dropout is applied to x + pe (kept entries are (x + pe) / (1 - p))", "an entry is neither 0 nor 2 (x + pe)", inputs)
    fraction = float(dropped.double().mean())
    if not 0.35 <= fraction <= 0.65:
        ctx.fail("dropout drops about a fraction p of the entries", f"{fraction:.2f} of the entries are zero, expected about 0.5", inputs)
    ctx.method(module, "eval")
    expect_tensor(ctx, ctx.method(module, "__call__", x.clone()), full.to(ctx.device),
                  "in eval mode dropout does nothing", inputs.replace("train mode", "eval mode"), check_dtype=False, atol=1e-4)


def pe_error_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """N > max_len raises ValueError."""
    max_len = ctx.randrange(4, 30)
    module = ctx.call(cls, 8, max_len)
    for extra in [1, ctx.randrange(2, 20)]:
        x = ctx.randn(2, max_len + extra, 8)
        ctx.expect_raises_method(ValueError, f"ValueError when N = {max_len + extra} > max_len = {max_len}", module, "__call__", x)


def pe_buffer_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """Bundled (the capstone's check): a registered, non-trainable buffer of shape (max_len, d_model) holding the sinusoid."""
    pe_buffer_registered(ctx, cls)
    pe_buffer_values(ctx, cls)


def pe_forward_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """Bundled (the capstone's check): forward(x) = x + PE[:N], N = max_len included, with the dtype of x."""
    pe_forward_values(ctx, cls)
    pe_forward_dtype(ctx, cls)


def register_positional_encoding_checks(prefix: str, dropout: bool = True, split: bool = False) -> None:
    """Register the PositionalEncoding checks as ``<prefix>.PositionalEncoding.<property>``.

    ``split=True`` (07): one check per clause (buffer, buffer_values, forward, dtype, unchanged,
    errors, dropout). ``split=False`` (the capstone 09, unchanged names): buffer, forward, errors and
    optionally dropout, each bundling the split checks.
    """
    if split:
        properties = {"buffer": pe_buffer_registered, "buffer_values": pe_buffer_values, "forward": pe_forward_values,
                      "dtype": pe_forward_dtype, "unchanged": pe_forward_unchanged, "errors": pe_error_checks}
    else:
        properties = {"buffer": pe_buffer_checks, "forward": pe_forward_checks, "errors": pe_error_checks}
    if dropout:
        properties["dropout"] = pe_dropout_checks
    for name, func in properties.items():
        check(f"{prefix}.PositionalEncoding.{name}", "PositionalEncoding")(func)


register_positional_encoding_checks(A, split=True)


# ---------------------------------------------------------------- relative_position_matrix
@check(f"{A}.relative_position_matrix.values", "relative_position_matrix")
def relative_values(ctx):
    """PE[p + k] = M_k PE[p] for every p, then the blocks written out, for several k and d_model (whatever the dtype)."""
    d_model = 2 * ctx.randrange(2, 20)
    pe = sinusoid_truth(120, d_model)
    for k in [1, -2, ctx.randrange(3, 50), -ctx.randrange(3, 50)]:
        M = ctx.call("relative_position_matrix", k, d_model)
        inputs = f"k = {k}, d_model = {d_model}"
        if type(M) is not torch.Tensor or tuple(M.shape) != (d_model, d_model):
            ctx.fail("M_k has shape (d_model, d_model)", f"got {describe(M)}", inputs)
        p = torch.arange(max(0, -k), 120 - max(0, k))
        shifted = pe[p] @ M.detach().to("cpu", torch.float64).T  # row-wise M_k @ PE[p]
        expect_tensor(ctx, shifted, pe[p + k], "PE[p + k] = M_k PE[p] for every position p", inputs, atol=1e-4)
    cases = [(0, 4), (1, 2), (3, 8), (-1, 8), (17, 16), (-40, 6), (ctx.randrange(-60, 60), 2 * ctx.randrange(1, 33))]
    for k, d_model in cases:
        expect_tensor(ctx, ctx.call("relative_position_matrix", k, d_model), rotation_truth(k, d_model),
                      "M_k: blocks [[cos, sin], [-sin, cos]] of k*10000^(-2i/d) on the diagonal, 0 elsewhere",
                      f"k = {k}, d_model = {d_model}", check_dtype=False, check_device=False, atol=1e-5)


@check(f"{A}.relative_position_matrix.dtype", "relative_position_matrix")
def relative_dtype(ctx):
    """float32."""
    for k, d_model in [(3, 8), (ctx.randrange(-30, 30), 2 * ctx.randrange(1, 20))]:
        expect_dtype(ctx, ctx.call("relative_position_matrix", k, d_model), torch.float32, "M_k is float32", f"k = {k}, d_model = {d_model}")


# ---------------------------------------------------------------- apply_rope
ROPE_SHAPES = [(1, 2), (5, 4), (12, 8), (3, 7, 6), (2, 3, 9, 16), (40, 32)]


@check(f"{A}.apply_rope.values", "apply_rope")
def rope_values(ctx):
    """Pairs rotated by n * omega_i, token n counted along dim -2, for 2-, 3- and 4-dimensional x (whatever the dtype)."""
    # first the point of RoPE, as a readable diagnostic: the same q and k score the same at every offset
    d = 2 * ctx.randrange(2, 10)
    q, k = ctx.randn(1, d), ctx.randn(1, d)
    rq = ctx.call("apply_rope", q.expand(30, d).contiguous().clone())
    rk = ctx.call("apply_rope", k.expand(30, d).contiguous().clone())
    if type(rq) is torch.Tensor and type(rk) is torch.Tensor and rq.shape == rk.shape == (30, d):
        scores = rq.detach().to("cpu", torch.float64) @ rk.detach().to("cpu", torch.float64).T
        offset = ctx.randrange(1, 10)
        diag = torch.diagonal(scores, offset)
        expect_tensor(ctx, diag, diag[:1].expand_as(diag), f"the same q and k, {offset} tokens apart, score the same at every position",
                      f"q, k of size {d} repeated over 30 tokens", atol=1e-4)
    shapes = ROPE_SHAPES + [(ctx.randrange(1, 4), ctx.randrange(2, 30), 2 * ctx.randrange(1, 12))]
    for shape in shapes:
        x = ctx.randn(*shape)
        got = ctx.call("apply_rope", x.clone())
        expect_tensor(ctx, got, rope_truth(x).to(ctx.device),
                      "token n has pair (x_2i, x_2i+1) rotated by n * 10000^(-2i/d): (x_2i cos - x_2i+1 sin, x_2i sin + x_2i+1 cos)",
                      f"x {describe(x)}", check_dtype=False, check_device=False, atol=1e-4, rtol=1e-4)


@check(f"{A}.apply_rope.dtype", "apply_rope")
def rope_dtype(ctx):
    """float32 in, float32 out; float64 in, float64 out."""
    for dtype in [torch.float32, torch.float64]:
        x = ctx.randn(2, ctx.randrange(1, 10), 2 * ctx.randrange(1, 8), dtype=dtype)
        expect_dtype(ctx, ctx.call("apply_rope", x.clone()), dtype, "apply_rope keeps the dtype of x", f"x {describe(x)}")


@check(f"{A}.apply_rope.device", "apply_rope")
def rope_device(ctx):
    """The result stays on x's device (a meta tensor stands in for a GPU); no tensor of its own on the CPU."""
    for shape in [(5, 8), (2, 3, ctx.randrange(2, 10), 2 * ctx.randrange(1, 8))]:
        ctx.probe_device("apply_rope", ctx.randn(*shape), prop="apply_rope returns its result on the device of x")


@check(f"{A}.apply_rope.unchanged", "apply_rope")
def rope_unchanged(ctx):
    """The input tensor is not modified."""
    for shape in [(6, 8), (2, ctx.randrange(2, 12), 2 * ctx.randrange(1, 8))]:
        x = ctx.randn(*shape)
        before = x.clone()
        ctx.call("apply_rope", x)
        expect_tensor(ctx, x, before, "apply_rope leaves its input unchanged", f"x {describe(before)}", atol=0, rtol=0)
        expect_untouched(ctx, [("x", x)], "apply_rope leaves its input unchanged", f"x {describe(before)}", who="apply_rope")


@check(f"{A}.apply_rope.errors", "apply_rope")
def rope_errors(ctx):
    """An odd last dimension raises ValueError."""
    for d in [1, 3, 2 * ctx.randrange(2, 10) + 1]:
        x = ctx.randn(2, 4, d)
        ctx.expect_raises(ValueError, f"ValueError for an odd last dimension d = {d}", "apply_rope", x)
