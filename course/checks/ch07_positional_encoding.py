"""Hidden checks for 07-positional-encoding.

Ground truths: ``torch.linspace`` / ``torch.arange`` for the tables; the
sinusoidal formula evaluated in float64 one column at a time (sine for even
columns, cosine for odd ones); the rotation matrix written out block by block
in float64 and, independently, the shift property ``PE[p+k] = M_k PE[p]``.
The ``PositionalEncoding`` checks are plain functions taking the class name so
the capstone (09) can reuse them on its own copy of the module.
"""
import math

import torch

from autograder.checking import check, describe, expect_tensor

A = ASSIGNMENT = "07"
CONTRACT = [
    "normalized_positions",
    "integer_positions",
    "sinusoidal_positional_encoding",
    "PositionalEncoding",
    "relative_position_matrix",
]


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


# ---------------------------------------------------------------- the two tables
@check(f"{A}.normalized_positions.values", "normalized_positions")
def normalized_values(ctx):
    """i / (n - 1) as float32 for sentences of several lengths."""
    for n in [2, 3, 6, 9, ctx.randrange(10, 60), 101]:
        got = ctx.call("normalized_positions", n)
        expected = torch.linspace(0.0, 1.0, n, dtype=torch.float64).to(torch.float32)
        expect_tensor(ctx, got, expected, "positions i/(n-1) from 0 to 1, float32", f"n = {n}", check_device=False, atol=1e-6)


@check(f"{A}.normalized_positions.edges", "normalized_positions")
def normalized_edges(ctx):
    """n = 1 gives [0.], never NaN; n < 1 raises ValueError."""
    expect_tensor(ctx, ctx.call("normalized_positions", 1), torch.zeros(1), "a single token sits at 0 (not NaN)", "n = 1", check_device=False)
    for bad in [0, -ctx.randrange(1, 5)]:
        ctx.expect_raises(ValueError, f"ValueError for n = {bad}", "normalized_positions", bad)


@check(f"{A}.integer_positions.values", "integer_positions")
def integer_values(ctx):
    """1, 2, ..., n as int64."""
    for n in [1, 2, 6, 9, ctx.randrange(10, 80)]:
        got = ctx.call("integer_positions", n)
        expect_tensor(ctx, got, torch.arange(1, n + 1), "positions counted 1..n, int64", f"n = {n}", check_device=False)


@check(f"{A}.integer_positions.edges", "integer_positions")
def integer_edges(ctx):
    """n < 1 raises ValueError."""
    for bad in [0, -ctx.randrange(1, 5)]:
        ctx.expect_raises(ValueError, f"ValueError for n = {bad}", "integer_positions", bad)


# ---------------------------------------------------------------- sinusoidal_positional_encoding
SIZES = [(1, 2), (10, 4), (100, 20), (50, 64), (7, 6), (2, 10)]


@check(f"{A}.sinusoidal_positional_encoding.values", "sinusoidal_positional_encoding")
def sinusoid_values(ctx):
    """Equals the formula (sin in even columns, cos in odd ones) for several sizes."""
    sizes = SIZES + [(ctx.randrange(3, 200), 2 * ctx.randrange(1, 40))]
    for num_positions, d_model in sizes:
        got = ctx.call("sinusoidal_positional_encoding", num_positions, d_model)
        expected = sinusoid_truth(num_positions, d_model, torch.float32)
        expect_tensor(ctx, got, expected, "PE[p,2i] = sin(p/10000^(2i/d)), PE[p,2i+1] = cos(...)",
                      f"num_positions {num_positions}, d_model {d_model}", check_device=False, atol=1e-4, rtol=1e-4)


@check(f"{A}.sinusoidal_positional_encoding.properties", "sinusoidal_positional_encoding")
def sinusoid_properties(ctx):
    """Row 0 is (0, 1, 0, 1, ...), pairs lie on the unit circle, pair i turns at 10000^(-2i/d); odd d raises."""
    d_model = 2 * ctx.randrange(2, 16)
    got = ctx.call("sinusoidal_positional_encoding", 300, d_model)
    inputs = f"num_positions 300, d_model {d_model}"
    if type(got) is not torch.Tensor or tuple(got.shape) != (300, d_model):
        ctx.fail("shape (num_positions, d_model)", f"got {describe(got)}", inputs)
    got = got.detach().to("cpu", torch.float64)
    expect_tensor(ctx, got[0], torch.tensor([0.0, 1.0] * (d_model // 2), dtype=torch.float64), "position 0 is (sin 0, cos 0, ...)", inputs)
    expect_tensor(ctx, got[:, 0::2] ** 2 + got[:, 1::2] ** 2, torch.ones(300, d_model // 2, dtype=torch.float64),
                  "each (column 2i, column 2i+1) pair has sin^2 + cos^2 = 1", inputs, atol=1e-4)
    i = ctx.randrange(0, d_model // 2)
    p = ctx.randrange(1, 300)
    angle = p / 10000 ** (2 * i / d_model)
    expect_tensor(ctx, got[p, 2 * i : 2 * i + 2], torch.tensor([math.sin(angle), math.cos(angle)], dtype=torch.float64),
                  f"pair i = {i} at position {p} is (sin, cos) of p / 10000^(2i/d)", inputs, atol=1e-4)
    for bad in [1, 3, 2 * ctx.randrange(2, 20) + 1]:
        ctx.expect_raises(ValueError, f"ValueError for odd d_model = {bad}", "sinusoidal_positional_encoding", 10, bad)


# ---------------------------------------------------------------- PositionalEncoding (shared with 09)
def pe_buffer_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """`pe` is a registered, non-trainable buffer of shape (max_len, d_model) holding the sinusoid."""
    for d_model, max_len in [(8, 20), (2 * ctx.randrange(2, 12), ctx.randrange(10, 120))]:
        inputs = f"{cls}({d_model}, max_len={max_len})"
        module = ctx.call(cls, d_model, max_len)
        if ctx.raised_method(module, "get_buffer", "pe") is not None:
            ctx.fail("pe is a registered buffer", "module.get_buffer('pe') fails: store it with self.register_buffer('pe', ...)", inputs)
        if ctx.attr(module, "pe.requires_grad"):
            ctx.fail("pe is not trainable", "pe requires grad: it must be a buffer, not an nn.Parameter", inputs)
        expect_tensor(ctx, ctx.attr(module, "pe"), sinusoid_truth(max_len, d_model, torch.float32),
                      "buffer pe of shape (max_len, d_model) holds the sinusoidal encoding", inputs, check_device=False, atol=1e-4)


def pe_forward_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """forward(x) = x + PE[:N] for several shapes, N = max_len included; dtype and device of x kept."""
    cases = [(2, 5, 8, 20, torch.float32), (1, 1, 4, 10, torch.float32), (3, 12, 6, 12, torch.float32),
             (2, 7, 10, 50, torch.float64), (ctx.randrange(1, 5), ctx.randrange(2, 30), 2 * ctx.randrange(2, 10), 40, torch.float32)]
    for B, N, D, max_len, dtype in cases:
        module = ctx.call(cls, D, max_len)
        ctx.method(module, "to", str(ctx.device))
        x = ctx.randn(B, N, D, dtype=dtype)
        got = ctx.method(module, "__call__", x.clone())
        expected = (x.double() + sinusoid_truth(N, D).to(ctx.device)).to(dtype)
        expect_tensor(ctx, got, expected, "forward returns x + pe[:N] (shape, dtype, device of x)",
                      f"x {describe(x)}, {cls}({D}, max_len={max_len}) on {ctx.device}", atol=1e-4)


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
    expect_tensor(ctx, ctx.method(module, "__call__", x.clone()), full.to(ctx.device, torch.float32),
                  "in eval mode dropout does nothing", inputs.replace("train mode", "eval mode"), atol=1e-4)


def pe_error_checks(ctx, cls: str = "PositionalEncoding") -> None:
    """N > max_len raises ValueError."""
    max_len = ctx.randrange(4, 30)
    module = ctx.call(cls, 8, max_len)
    for extra in [1, ctx.randrange(2, 20)]:
        x = ctx.randn(2, max_len + extra, 8)
        ctx.expect_raises_method(ValueError, f"ValueError when N = {max_len + extra} > max_len = {max_len}", module, "__call__", x)


def register_positional_encoding_checks(prefix: str, dropout: bool = True) -> None:
    """Register the PositionalEncoding checks as ``<prefix>.PositionalEncoding.<property>`` (07, and the capstone 09)."""
    properties = {"buffer": pe_buffer_checks, "forward": pe_forward_checks, "errors": pe_error_checks}
    if dropout:
        properties["dropout"] = pe_dropout_checks
    for name, func in properties.items():
        check(f"{prefix}.PositionalEncoding.{name}", "PositionalEncoding")(func)


register_positional_encoding_checks(A)


# ---------------------------------------------------------------- relative_position_matrix
@check(f"{A}.relative_position_matrix.values", "relative_position_matrix")
def relative_values(ctx):
    """The block-diagonal rotation, written out block by block, for several k and d_model."""
    cases = [(0, 4), (1, 2), (3, 8), (-1, 8), (17, 16), (-40, 6), (ctx.randrange(-60, 60), 2 * ctx.randrange(1, 33))]
    for k, d_model in cases:
        got = ctx.call("relative_position_matrix", k, d_model)
        expect_tensor(ctx, got, rotation_truth(k, d_model).float(), "M_k: blocks [[cos, sin], [-sin, cos]] of k*10000^(-2i/d), float32",
                      f"k = {k}, d_model = {d_model}", check_device=False, atol=1e-5)


@check(f"{A}.relative_position_matrix.shift", "relative_position_matrix")
def relative_shift(ctx):
    """PE[p + k] = M_k PE[p] for every p; M_0 = I; M_j M_k = M_(j+k)."""
    d_model = 2 * ctx.randrange(2, 20)
    pe = sinusoid_truth(120, d_model)
    for k in [1, -2, ctx.randrange(3, 50), -ctx.randrange(3, 50)]:
        M = ctx.call("relative_position_matrix", k, d_model)
        if type(M) is not torch.Tensor or tuple(M.shape) != (d_model, d_model):
            ctx.fail("shape (d_model, d_model)", f"got {describe(M)}", f"k = {k}, d_model = {d_model}")
        p = torch.arange(max(0, -k), 120 - max(0, k))
        shifted = pe[p] @ M.detach().to("cpu", torch.float64).T  # row-wise M_k @ PE[p]
        expect_tensor(ctx, shifted, pe[p + k], f"PE[p + k] = M_k PE[p] for every position p", f"k = {k}, d_model = {d_model}", atol=1e-4)
    expect_tensor(ctx, ctx.call("relative_position_matrix", 0, d_model), torch.eye(d_model), "M_0 is the identity",
                  f"k = 0, d_model = {d_model}", check_device=False, atol=1e-6)
    j, k = ctx.randrange(-20, 20), ctx.randrange(-20, 20)
    Mj = ctx.call("relative_position_matrix", j, d_model).detach().to("cpu", torch.float64)
    Mk = ctx.call("relative_position_matrix", k, d_model).detach().to("cpu", torch.float64)
    expect_tensor(ctx, Mj @ Mk, rotation_truth(j + k, d_model), "shifting by j then by k is shifting by j + k",
                  f"j = {j}, k = {k}, d_model = {d_model}", atol=1e-4)
