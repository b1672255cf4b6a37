"""Hidden checks for 02-inner-products.

Ground truths are computed on the CPU in float64, independently of the student's
code: ``torch.linalg.vecdot`` / ``torch.linalg.vector_norm`` for projections and
cosines, an einsum over every pair of rows for Gram matrices, closed forms for
vectors at a known angle, and a plain Python scan over the rows for
``most_similar``.
"""
import math

import torch

from autograder.checking import check, describe, expect_equal, expect_tensor
from .ground_truth import cpu64, expect_on_shapes, float64_ok, like

A = ASSIGNMENT = "02"
CONTRACT = ["scalar_projection", "cosine_similarity", "gram_matrix", "cosine_similarity_matrix", "most_similar"]

COSINE_FORBIDDEN = ("torch.nn.functional.cosine_similarity", "torch.cosine_similarity", "torch.nn.CosineSimilarity")

# (shape of a, shape of b): plain vectors, a batch of rows, a batch of batches, one-dimensional vectors
SAME_SHAPES = [((5,), (5,)), ((4, 3), (4, 3)), ((2, 5, 3), (2, 5, 3)), ((3, 2, 4, 6), (3, 2, 4, 6)), ((7, 1), (7, 1))]
# matrices X of shape (..., N, D): N < D, N > D, N == D (where X^T X has the shape of X X^T), one row, batched
MATRIX_SHAPES = [(3, 4), (6, 2), (5, 5), (1, 3), (4, 1), (2, 4, 3), (3, 2, 5, 5)]


def _projection_truth(a, b):
    a, b = torch.broadcast_tensors(cpu64(a), cpu64(b))
    return torch.linalg.vecdot(a, b) / torch.linalg.vector_norm(b, dim=-1)


def _cosine_truth(a, b):
    a, b = torch.broadcast_tensors(cpu64(a), cpu64(b))
    na, nb = torch.linalg.vector_norm(a, dim=-1), torch.linalg.vector_norm(b, dim=-1)
    dot = torch.linalg.vecdot(a, b)
    return torch.where((na > 0) & (nb > 0), dot / (na * nb).clamp_min(1e-300), torch.zeros_like(dot))


def _gram_truth(X):
    X = cpu64(X)
    return torch.einsum("...id,...jd->...ij", X, X)


def _cosine_matrix_truth(X):
    X = cpu64(X)
    return _cosine_truth(X.unsqueeze(-2), X.unsqueeze(-3))  # (..., N, 1, D) with (..., 1, N, D) -> (..., N, N)


def _at_angle(ctx, n, theta):
    """n pairs of 2-D vectors (a, b) of random lengths with angle theta between them (closed form)."""
    phi = torch.rand(n, generator=ctx.gen, dtype=torch.float64) * 2 * math.pi
    la = 0.5 + 2 * torch.rand(n, generator=ctx.gen, dtype=torch.float64)
    lb = 0.5 + 2 * torch.rand(n, generator=ctx.gen, dtype=torch.float64)
    b = torch.stack([lb * torch.cos(phi), lb * torch.sin(phi)], dim=-1)
    a = torch.stack([la * torch.cos(phi + theta), la * torch.sin(phi + theta)], dim=-1)
    return a.to(ctx.device), b.to(ctx.device), la


# ---------------------------------------------------------------- scalar_projection
@check(f"{A}.scalar_projection.values", "scalar_projection")
def scalar_projection_values(ctx):
    """a.b / |b| over the last dim, for single vectors and batches of any depth."""
    for sa, sb in SAME_SHAPES:
        a, b = ctx.randn(*sa), ctx.randn(*sb)
        got = ctx.call("scalar_projection", a.clone(), b.clone())
        expect_tensor(ctx, got, like(_projection_truth(a, b), a), "a.b / |b| over the last dim", f"a {describe(a)}, b {describe(b)}")


@check(f"{A}.scalar_projection.geometry", "scalar_projection")
def scalar_projection_geometry(ctx):
    """|a| cos(theta) for vectors at a known angle; independent of |b|; rows onto one b (broadcast); float64 kept."""
    for theta in (0.0, math.pi / 3, math.pi / 2, 2.5, math.pi):
        a, b, la = _at_angle(ctx, 6, theta)
        got = ctx.call("scalar_projection", a.float(), b.float())
        expected = (la * math.cos(theta)).to(torch.float32).to(ctx.device)
        expect_tensor(ctx, got, expected, "projection equals |a| cos(angle)", f"2-D vectors at angle {theta:.3f}, a {describe(a.float())}")
    a, b = ctx.randn(6, 4), ctx.randn(4)
    got = ctx.call("scalar_projection", a.clone(), 7.0 * b)
    expect_tensor(ctx, got, like(_projection_truth(a, b), a), "every row projected onto one b (broadcast); the length of b does not matter", f"a {describe(a)}, b {describe(b)}")
    if float64_ok(ctx):
        a, b = ctx.randn(3, 5, dtype=torch.float64), ctx.randn(3, 5, dtype=torch.float64)
        got = ctx.call("scalar_projection", a.clone(), b.clone())
        expect_tensor(ctx, got, _projection_truth(a, b).to(ctx.device), "float64 input keeps float64", f"a {describe(a)}, b {describe(b)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- cosine_similarity
@check(f"{A}.cosine_similarity.values", "cosine_similarity", COSINE_FORBIDDEN)
def cosine_similarity_values(ctx):
    """a.b / (|a| |b|) over the last dim; cos(theta) for vectors at a known angle; scale-invariant."""
    for sa, sb in SAME_SHAPES + [((6, 4), (4,))]:
        a, b = ctx.randn(*sa), ctx.randn(*sb)
        got = ctx.call("cosine_similarity", a.clone(), b.clone())
        expect_tensor(ctx, got, like(_cosine_truth(a, b), a), "a.b / (|a| |b|) over the last dim", f"a {describe(a)}, b {describe(b)}")
    for theta in (0.0, math.pi / 4, math.pi / 2, 2.0, math.pi):
        a, b, _ = _at_angle(ctx, 5, theta)
        got = ctx.call("cosine_similarity", a.float(), b.float())
        expected = torch.full((5,), math.cos(theta), dtype=torch.float32, device=ctx.device)
        expect_tensor(ctx, got, expected, "cosine equals cos(angle), whatever the lengths", f"2-D vectors at angle {theta:.3f}")


@check(f"{A}.cosine_similarity.edges", "cosine_similarity", COSINE_FORBIDDEN)
def cosine_similarity_edges(ctx):
    """A zero vector gives 0, never NaN; eps is used; float64 kept."""
    a, b = ctx.randn(4, 3), ctx.randn(4, 3)
    a[1] = 0.0
    b[2] = 0.0
    a[3] = 0.0
    b[3] = 0.0
    got = ctx.call("cosine_similarity", a.clone(), b.clone())
    expect_tensor(ctx, got, like(_cosine_truth(a, b), a), "a zero vector has cosine 0 with anything (no NaN)", f"a {describe(a)} with zero rows 1 and 3, b with zero rows 2 and 3")
    a = ctx.randn(5, 4)
    eps = 1e3
    got = ctx.call("cosine_similarity", a.clone(), a.clone(), eps=eps)
    if type(got) is not torch.Tensor or got.shape != (5,):
        ctx.fail("eps keyword is used", f"expected a tensor of shape (5,), got {describe(got)}", f"a {describe(a)}, eps={eps}")
    bound = (a * a).sum(-1) / eps  # every usual convention divides by at least eps here
    ok = (got >= 0) & (got <= bound * (1 + 1e-5) + 1e-12)
    if not bool(ok.all()):
        ctx.fail("eps keyword is used", f"with eps={eps:g} and |a|^2 about 4 the cosine of a with itself must be at most |a|^2/eps, got {got.tolist()}", f"a {describe(a)}")
    if float64_ok(ctx):
        a, b = ctx.randn(2, 3, 6, dtype=torch.float64), ctx.randn(2, 3, 6, dtype=torch.float64)
        got = ctx.call("cosine_similarity", a.clone(), b.clone())
        expect_tensor(ctx, got, _cosine_truth(a, b).to(ctx.device), "float64 input keeps float64", f"a {describe(a)}, b {describe(b)}", atol=1e-6, rtol=1e-6)


# ---------------------------------------------------------------- gram_matrix
@check(f"{A}.gram_matrix.values", "gram_matrix")
def gram_matrix_values(ctx):
    """X X^T over the last two dims, shape (..., N, N), for several shapes and batches."""
    expect_on_shapes(ctx, "gram_matrix", MATRIX_SHAPES, _gram_truth, "entry (i, j) is row i . row j, shape (..., N, N)")


@check(f"{A}.gram_matrix.properties", "gram_matrix")
def gram_matrix_properties(ctx):
    """Orthonormal rows give the identity; the diagonal holds squared lengths; float64 and the input kept."""
    n = ctx.randrange(2, 6)
    Qm, _ = torch.linalg.qr(torch.randn(n, n, generator=ctx.gen, dtype=torch.float64))
    Qm = Qm.to(torch.float32).to(ctx.device)
    got = ctx.call("gram_matrix", Qm.clone())
    expect_tensor(ctx, got, torch.eye(n, device=ctx.device), "orthonormal rows give the identity", f"X {describe(Qm)} with orthonormal rows")
    X = ctx.randn(4, 3, scale=3.0)
    before = X.clone()
    got = ctx.call("gram_matrix", X)
    if type(got) is torch.Tensor and got.shape == (4, 4):
        expect_tensor(ctx, torch.diagonal(got), like((cpu64(before) ** 2).sum(-1), before), "the diagonal holds the squared lengths of the rows", f"X {describe(X)}")
    if not torch.equal(X, before):
        ctx.fail("input left unchanged", "gram_matrix modified X in place", f"X {describe(X)}")
    if float64_ok(ctx):
        X = ctx.randn(2, 3, 4, dtype=torch.float64)
        got = ctx.call("gram_matrix", X.clone())
        expect_tensor(ctx, got, _gram_truth(X).to(ctx.device), "float64 input keeps float64", f"X {describe(X)}", atol=1e-10, rtol=1e-9)


# ---------------------------------------------------------------- cosine_similarity_matrix
@check(f"{A}.cosine_similarity_matrix.values", "cosine_similarity_matrix", COSINE_FORBIDDEN)
def cosine_matrix_values(ctx):
    """Entry (i, j) is cos(row i, row j), shape (..., N, N); scaling a row changes nothing."""
    expect_on_shapes(ctx, "cosine_similarity_matrix", MATRIX_SHAPES, _cosine_matrix_truth, "entry (i, j) is the cosine of rows i and j")
    X = ctx.randn(5, 3)
    scales = (torch.rand(5, 1, generator=ctx.gen) * 10 + 0.1).to(ctx.device)
    got = ctx.call("cosine_similarity_matrix", X * scales)
    expect_tensor(ctx, got, like(_cosine_matrix_truth(X), X), "rows of very different lengths (cosine ignores length)", f"X {describe(X)} with rows scaled by 0.1..10")


@check(f"{A}.cosine_similarity_matrix.zero_rows", "cosine_similarity_matrix", COSINE_FORBIDDEN)
def cosine_matrix_zero_rows(ctx):
    """Zero rows give 0 (never NaN), the other diagonal entries are 1; eps is used; float64 kept."""
    X = ctx.randn(2, 5, 3)
    X[0, 1] = 0.0
    X[1, 0] = 0.0
    X[1, 4] = 0.0
    got = ctx.call("cosine_similarity_matrix", X.clone())
    expect_tensor(ctx, got, like(_cosine_matrix_truth(X), X), "zero rows give 0 in their row and column, never NaN", f"X {describe(X)} with zero rows")
    X = ctx.randn(4, 4)
    eps = 1e3
    got = ctx.call("cosine_similarity_matrix", X.clone(), eps=eps)
    if type(got) is not torch.Tensor or got.shape != (4, 4):
        ctx.fail("eps keyword is used", f"expected a tensor of shape (4, 4), got {describe(got)}", f"X {describe(X)}, eps={eps}")
    bound = (X @ X.T).abs() / eps
    if not bool((got.abs() <= bound * (1 + 1e-5) + 1e-12).all()):
        ctx.fail("eps keyword is used", f"with eps={eps:g} every entry must be at most |x_i . x_j| / eps, got diagonal {torch.diagonal(got).tolist()}", f"X {describe(X)}")
    if float64_ok(ctx):
        X = ctx.randn(3, 6, 2, dtype=torch.float64)
        X[1, 2] = 0.0
        got = ctx.call("cosine_similarity_matrix", X.clone())
        expect_tensor(ctx, got, _cosine_matrix_truth(X).to(ctx.device), "float64 input keeps float64", f"X {describe(X)}", atol=1e-6, rtol=1e-6)


# ---------------------------------------------------------------- most_similar
def _most_similar_truth(X, i):
    X = cpu64(X)
    best, best_j = None, None
    for j in range(X.shape[0]):
        if j == i:
            continue
        score = float(X[i] @ X[j])
        if best is None or score > best:  # strict: a later tie does not replace an earlier j
            best, best_j = score, j
    return best_j


@check(f"{A}.most_similar.values", "most_similar")
def most_similar_values(ctx):
    """The j != i with the largest dot product with row i, as a Python int, on random matrices."""
    for n, d in [(5, 3), (8, 4), (12, 6), (2, 3), (6, 1)]:
        X = ctx.randn(n, d)
        for i in sorted({0, n - 1, ctx.randrange(0, n)}):
            got = ctx.call("most_similar", X.clone(), i)
            expect_equal(ctx, got, _most_similar_truth(X, i), "the most similar other row (an int)", f"X {describe(X)}, i={i}")


@check(f"{A}.most_similar.edges", "most_similar")
def most_similar_edges(ctx):
    """Never i itself (even when i is the longest row); negative scores; ties go to the smallest j; float64."""
    X = ctx.randn(6, 4)
    i = ctx.randrange(0, 6)
    X[i] = X[i] * 20  # row i has by far the largest dot product with itself
    expect_equal(ctx, ctx.call("most_similar", X.clone(), i), _most_similar_truth(X, i), "j != i even when row i is the longest", f"X {describe(X)}, i={i}")
    # every other row points away from row i: all their scores are negative
    X = ctx.randn(5, 3).abs()
    i = ctx.randrange(0, 5)
    X = torch.where(torch.arange(5, device=ctx.device).unsqueeze(1) == i, X, -X)
    expect_equal(ctx, ctx.call("most_similar", X.clone(), i), _most_similar_truth(X, i), "the largest score even when all scores are negative", f"X {describe(X)}, i={i}")
    # exact ties (integer entries): two copies of the best row, on both sides of i and on one side
    for n in (5, 7):
        X = ctx.randint(-2, 3, (n, 4)).to(torch.float32)
        i = ctx.randrange(1, n - 1)
        X[i, 0] = 1.0  # row i is not zero
        best = 5 * X[i]
        for j1, j2 in [(0, n - 1), (i + 1, n - 1)]:
            Y = X.clone()
            Y[j1], Y[j2] = best, best
            expect_equal(ctx, ctx.call("most_similar", Y.clone(), i), _most_similar_truth(Y, i), "ties go to the smallest j", f"X {describe(Y)} with rows {j1} and {j2} equal, i={i}")
    # a tie between every other row
    X = ctx.randint(1, 4, (1, 3)).to(torch.float32).repeat(4, 1)  # integer entries: exact ties
    expect_equal(ctx, ctx.call("most_similar", X.clone(), 0), 1, "ties go to the smallest j", "four equal rows, i=0")
    expect_equal(ctx, ctx.call("most_similar", X.clone(), 2), 0, "ties go to the smallest j", "four equal rows, i=2")
    if float64_ok(ctx):
        X = ctx.randn(7, 5, dtype=torch.float64)
        expect_equal(ctx, ctx.call("most_similar", X.clone(), 3), _most_similar_truth(X, 3), "works on float64", f"X {describe(X)}, i=3")
