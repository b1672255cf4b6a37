"""Hidden checks for 02-inner-products.

Ground truths are computed on the CPU in float64, independently of the student's
code: ``torch.linalg.vecdot`` / ``torch.linalg.vector_norm`` for projections and
cosines, an einsum over every pair of rows for Gram matrices, closed forms for
vectors at a known angle, and a plain Python scan over the rows for
``most_similar``, and for ``subspace_projection`` an orthonormal basis of the span from a
float64 QR decomposition (the student's code is expected to solve the Gram system instead).

Each clause of ``CLAUSES`` is graded by the check of the same name.
"""
import math

import torch

from autograder.checking import call_leaves_unchanged, check, contract_clauses, describe, expect_dtype, expect_equal, expect_tensor, expect_untouched
from .ground_truth import cpu64, float64_ok, like

A = ASSIGNMENT = "02"
CONTRACT = ["scalar_projection", "cosine_similarity", "gram_matrix", "cosine_similarity_matrix", "most_similar", "subspace_projection"]

CLAUSES = contract_clauses(__file__, globals())

COSINE_FORBIDDEN = ("torch.nn.functional.cosine_similarity", "torch.cosine_similarity", "torch.nn.CosineSimilarity")

# (shape of a, shape of b): plain vectors, a batch of rows, a batch of batches, one-dimensional vectors
SAME_SHAPES = [((5,), (5,)), ((4, 3), (4, 3)), ((2, 5, 3), (2, 5, 3)), ((3, 2, 4, 6), (3, 2, 4, 6)), ((7, 1), (7, 1))]


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


# ---------------------------------------------------------------- shared helpers
def _call_float(ctx, name, *args, **kwargs):
    """Call and, for the value checks, compare in the inputs' dtype whatever the student returned
    (dtype is graded by its own clause)."""
    got = ctx.call(name, *args, **kwargs)
    ref = args[0]
    if type(got) is torch.Tensor and got.is_floating_point() and got.dtype != ref.dtype:
        got = torch.Tensor.to(got, ref.dtype)
    return got


def _expect_dtype(ctx, name, args, **kwargs):
    """float64 inputs give a float64 result (where the device has float64)."""
    if float64_ok(ctx):
        expect_dtype(ctx, ctx.call(name, *args, **kwargs), torch.float64, "keeps the input's dtype", ", ".join(describe(a) for a in args),
                     why=" for float64 input", tensor_required=False)


# ---------------------------------------------------------------- scalar_projection
@check(f"{A}.scalar_projection.values", "scalar_projection")
def scalar_projection_values(ctx):
    """a.b / |b| over the last dim for same-shape inputs of any depth; |a| cos(theta) at known angles; |b| does not matter."""
    for sa, sb in SAME_SHAPES:
        a, b = ctx.randn(*sa), ctx.randn(*sb)
        got = _call_float(ctx, "scalar_projection", a.clone(), b.clone())
        expect_tensor(ctx, got, like(_projection_truth(a, b), a), "a.b / |b| over the last dim", f"a {describe(a)}, b {describe(b)}")
    for theta in (0.0, math.pi / 3, math.pi / 2, 2.5, math.pi):
        a, b, la = _at_angle(ctx, 6, theta)
        got = _call_float(ctx, "scalar_projection", a.float(), 7.0 * b.float())
        expected = (la * math.cos(theta)).to(torch.float32).to(ctx.device)
        expect_tensor(ctx, got, expected, "projection equals |a| cos(angle), whatever |b|", f"2-D vectors at angle {theta:.3f}, a {describe(a.float())}")


def _expect_broadcasts(ctx, name):
    """name(a, b) with shapes that broadcast equals name on the explicitly expanded inputs (the
    student's own answer there: the values themselves are graded by the values clause)."""
    for sa, sb in [((6, 4), (4,)), ((2, 3, 5), (5,)), ((3,), (4, 3))]:
        a, b = ctx.randn(*sa), ctx.randn(*sb)
        ea, eb = (t.contiguous() for t in torch.broadcast_tensors(a, b))
        same = _call_float(ctx, name, ea.clone(), eb.clone())
        got = _call_float(ctx, name, a.clone(), b.clone())
        if type(same) is not torch.Tensor:
            continue  # a wrong type is graded by the values clause
        expect_tensor(ctx, got, torch.Tensor.detach(same), "a and b broadcast against each other (same result as with both expanded to a common shape)", f"a {describe(a)}, b {describe(b)}")


@check(f"{A}.scalar_projection.broadcast", "scalar_projection")
def scalar_projection_broadcast(ctx):
    """Rows of a onto one b, and one a onto a batch of b."""
    _expect_broadcasts(ctx, "scalar_projection")


@check(f"{A}.scalar_projection.dtype", "scalar_projection")
def scalar_projection_dtype(ctx):
    """float64 input keeps float64."""
    _expect_dtype(ctx, "scalar_projection", [ctx.randn(5, dtype=torch.float64), ctx.randn(5, dtype=torch.float64)])


@check(f"{A}.scalar_projection.unchanged", "scalar_projection")
def scalar_projection_unchanged(ctx):
    """a and b are not modified."""
    call_leaves_unchanged(ctx, "scalar_projection", [ctx.randn(3, scale=2.0), ctx.randn(3, scale=2.0)], ["a", "b"])


# ---------------------------------------------------------------- cosine_similarity
@check(f"{A}.cosine_similarity.values", "cosine_similarity")
def cosine_similarity_values(ctx):
    """a.b / (|a| |b|) over the last dim; cos(theta) for vectors at a known angle; scale-invariant."""
    for sa, sb in SAME_SHAPES:
        a, b = ctx.randn(*sa), ctx.randn(*sb)
        got = _call_float(ctx, "cosine_similarity", a.clone(), b.clone())
        expect_tensor(ctx, got, like(_cosine_truth(a, b), a), "a.b / (|a| |b|) over the last dim", f"a {describe(a)}, b {describe(b)}")
    for theta in (0.0, math.pi / 4, math.pi / 2, 2.0, math.pi):
        a, b, _ = _at_angle(ctx, 5, theta)
        got = _call_float(ctx, "cosine_similarity", a.float(), b.float())
        expected = torch.full((5,), math.cos(theta), dtype=torch.float32, device=ctx.device)
        expect_tensor(ctx, got, expected, "cosine equals cos(angle), whatever the lengths", f"2-D vectors at angle {theta:.3f}")


@check(f"{A}.cosine_similarity.broadcast", "cosine_similarity")
def cosine_similarity_broadcast(ctx):
    """Rows of a against one b, one a against a batch of b."""
    _expect_broadcasts(ctx, "cosine_similarity")


@check(f"{A}.cosine_similarity.zero", "cosine_similarity")
def cosine_similarity_zero(ctx):
    """A zero vector gives 0, never NaN."""
    a, b = ctx.randn(4, 3), ctx.randn(4, 3)
    a[1] = 0.0
    b[2] = 0.0
    a[3] = 0.0
    b[3] = 0.0
    got = _call_float(ctx, "cosine_similarity", a.clone(), b.clone())
    rows = [1, 2, 3]
    if type(got) is torch.Tensor and got.shape == (4,):
        got = got[rows]
    expect_tensor(ctx, got, torch.zeros(3, device=ctx.device), "a zero vector has cosine 0 with anything (no NaN); entries 1, 2, 3", f"a {describe(a)} with zero rows 1 and 3, b with zero rows 2 and 3")


@check(f"{A}.cosine_similarity.eps", "cosine_similarity")
def cosine_similarity_eps(ctx):
    """With a huge eps every cosine is at most |a.b| / eps: the argument is used."""
    a = ctx.randn(5, 4)
    eps = 1e3
    got = ctx.call("cosine_similarity", a.clone(), a.clone(), eps=eps)
    if type(got) is not torch.Tensor or got.shape != (5,):
        ctx.fail("eps keyword is used", f"expected a tensor of shape (5,), got {describe(got)}", f"a {describe(a)}, eps={eps}")
    bound = (a * a).sum(-1) / eps  # every usual convention divides by at least eps here
    ok = (got >= 0) & (got <= bound * (1 + 1e-5) + 1e-12)
    if not bool(ok.all()):
        ctx.fail("eps keyword is used", f"with eps={eps:g} and |a|^2 about 4 the cosine of a with itself must be at most |a|^2/eps, got {got.tolist()}", f"a {describe(a)}")


@check(f"{A}.cosine_similarity.dtype", "cosine_similarity")
def cosine_similarity_dtype(ctx):
    """float64 input keeps float64."""
    _expect_dtype(ctx, "cosine_similarity", [ctx.randn(6, dtype=torch.float64), ctx.randn(6, dtype=torch.float64)])


@check(f"{A}.cosine_similarity.unchanged", "cosine_similarity")
def cosine_similarity_unchanged(ctx):
    """a and b are not modified."""
    call_leaves_unchanged(ctx, "cosine_similarity", [ctx.randn(3, scale=2.0), ctx.randn(3, scale=2.0)], ["a", "b"])


@check(f"{A}.cosine_similarity.builtin", "cosine_similarity", COSINE_FORBIDDEN)
def cosine_similarity_builtin(ctx):
    """No forbidden cosine routine is called."""
    ctx.call("cosine_similarity", ctx.randn(4), ctx.randn(4))


# ---------------------------------------------------------------- gram_matrix
def _expect_batched(ctx, name, prop):
    """name(X) for X (..., N, D) equals name applied to each (N, D) matrix on its own (the
    student's own answers there: the values themselves are graded by the values clause)."""
    for shape in [(2, 4, 3), (3, 2, 5, 5), (2, 1, 3), (1, 3, 2)]:
        X = ctx.randn(*shape)
        flat = X.reshape(-1, *shape[-2:])
        parts = [_call_float(ctx, name, flat[k].clone()) for k in range(flat.shape[0])]
        if any(type(p) is not torch.Tensor for p in parts):
            return  # a wrong type is graded by the values clause
        expected = torch.stack([torch.Tensor.detach(p) for p in parts]).reshape(*shape[:-2], *parts[0].shape)
        got = _call_float(ctx, name, X.clone())
        expect_tensor(ctx, got, expected, prop, f"X {describe(X)}")


@check(f"{A}.gram_matrix.values", "gram_matrix")
def gram_matrix_values(ctx):
    """X X^T for 2-D X (N < D, N > D, N == D, one row); orthonormal rows give I; diagonal = squared lengths."""
    for shape in [(3, 4), (6, 2), (5, 5), (1, 3), (4, 1)]:
        X = ctx.randn(*shape)
        got = _call_float(ctx, "gram_matrix", X.clone())
        expect_tensor(ctx, got, like(_gram_truth(X), X), "entry (i, j) is row i . row j, shape (N, N)", f"X {describe(X)}")
    n = ctx.randrange(2, 6)
    Qm, _ = torch.linalg.qr(torch.randn(n, n, generator=ctx.gen, dtype=torch.float64))
    Qm = Qm.to(torch.float32).to(ctx.device)
    got = _call_float(ctx, "gram_matrix", Qm.clone())
    expect_tensor(ctx, got, torch.eye(n, device=ctx.device), "orthonormal rows give the identity", f"X {describe(Qm)} with orthonormal rows")


@check(f"{A}.gram_matrix.batch", "gram_matrix")
def gram_matrix_batch(ctx):
    """Any number of leading batch dimensions."""
    _expect_batched(ctx, "gram_matrix", "one Gram matrix per batch entry, shape (..., N, N)")


@check(f"{A}.gram_matrix.dtype", "gram_matrix")
def gram_matrix_dtype(ctx):
    """float64 input keeps float64."""
    _expect_dtype(ctx, "gram_matrix", [ctx.randn(3, 4, dtype=torch.float64)])


@check(f"{A}.gram_matrix.unchanged", "gram_matrix")
def gram_matrix_unchanged(ctx):
    """X is not modified."""
    call_leaves_unchanged(ctx, "gram_matrix", [ctx.randn(4, 3, scale=3.0)], ["X"])


# ---------------------------------------------------------------- cosine_similarity_matrix
@check(f"{A}.cosine_similarity_matrix.values", "cosine_similarity_matrix")
def cosine_matrix_values(ctx):
    """Entry (i, j) is cos(row i, row j) for 2-D X; scaling a row changes nothing."""
    for shape in [(3, 4), (6, 2), (5, 5), (1, 3), (4, 1)]:
        X = ctx.randn(*shape)
        got = _call_float(ctx, "cosine_similarity_matrix", X.clone())
        expect_tensor(ctx, got, like(_cosine_matrix_truth(X), X), "entry (i, j) is the cosine of rows i and j", f"X {describe(X)}")
    X = ctx.randn(5, 3)
    scales = (torch.rand(5, 1, generator=ctx.gen) * 10 + 0.1).to(ctx.device)
    got = _call_float(ctx, "cosine_similarity_matrix", X * scales)
    expect_tensor(ctx, got, like(_cosine_matrix_truth(X), X), "rows of very different lengths (cosine ignores length)", f"X {describe(X)} with rows scaled by 0.1..10")


@check(f"{A}.cosine_similarity_matrix.batch", "cosine_similarity_matrix")
def cosine_matrix_batch(ctx):
    """Any number of leading batch dimensions."""
    _expect_batched(ctx, "cosine_similarity_matrix", "one cosine matrix per batch entry, shape (..., N, N)")


@check(f"{A}.cosine_similarity_matrix.zero_rows", "cosine_similarity_matrix")
def cosine_matrix_zero_rows(ctx):
    """Zero rows give 0 in their row and column (never NaN); the other diagonal entries are 1."""
    X = ctx.randn(5, 3)
    X[1] = 0.0
    X[4] = 0.0
    got = _call_float(ctx, "cosine_similarity_matrix", X.clone())
    if type(got) is torch.Tensor and got.shape == (5, 5):
        got = torch.cat([got[[1, 4]].flatten(), got[:, [1, 4]].flatten()])
    expect_tensor(ctx, got, torch.zeros(20, device=ctx.device), "zero rows give 0 in their row and column, diagonal included, never NaN (rows 1 and 4, then columns 1 and 4, flattened)", f"X {describe(X)} with zero rows 1 and 4")


@check(f"{A}.cosine_similarity_matrix.eps", "cosine_similarity_matrix")
def cosine_matrix_eps(ctx):
    """With a huge eps every entry is at most |x_i . x_j| / eps: the argument is used."""
    X = ctx.randn(4, 4)
    eps = 1e3
    got = ctx.call("cosine_similarity_matrix", X.clone(), eps=eps)
    if type(got) is not torch.Tensor or got.shape != (4, 4):
        ctx.fail("eps keyword is used", f"expected a tensor of shape (4, 4), got {describe(got)}", f"X {describe(X)}, eps={eps}")
    bound = (X @ X.T).abs() / eps
    if not bool((got.abs() <= bound * (1 + 1e-5) + 1e-12).all()):
        ctx.fail("eps keyword is used", f"with eps={eps:g} every entry must be at most |x_i . x_j| / eps, got diagonal {torch.diagonal(got).tolist()}", f"X {describe(X)}")


@check(f"{A}.cosine_similarity_matrix.dtype", "cosine_similarity_matrix")
def cosine_matrix_dtype(ctx):
    """float64 input keeps float64."""
    _expect_dtype(ctx, "cosine_similarity_matrix", [ctx.randn(6, 2, dtype=torch.float64)])


@check(f"{A}.cosine_similarity_matrix.unchanged", "cosine_similarity_matrix")
def cosine_matrix_unchanged(ctx):
    """X is not modified."""
    call_leaves_unchanged(ctx, "cosine_similarity_matrix", [ctx.randn(4, 3, scale=3.0)], ["X"])


@check(f"{A}.cosine_similarity_matrix.builtin", "cosine_similarity_matrix", COSINE_FORBIDDEN)
def cosine_matrix_builtin(ctx):
    """No forbidden cosine routine is called."""
    ctx.call("cosine_similarity_matrix", ctx.randn(3, 4))


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


def _other_beats_self(X, i):
    """Some other row scores above both 0 and row i's score with itself."""
    scores = cpu64(X) @ cpu64(X)[i]
    own = float(scores[i])
    scores[i] = float("-inf")
    return float(scores.max()) > max(own, 0.0)


@check(f"{A}.most_similar.values", "most_similar")
def most_similar_values(ctx):
    """The j != i with the largest dot product with row i, as a Python int (random matrices where row i is not the longest and some score is positive)."""
    for n, d in [(5, 3), (8, 4), (12, 6), (2, 3), (6, 2), (7, 3), (9, 2), (10, 5)]:
        for attempt in range(20):
            lengths = (0.2 + 3 * torch.rand(n, 1, generator=ctx.gen)).to(ctx.device)  # lengths matter for a dot product
            X = ctx.randn(n, d) * lengths
            i = ctx.randrange(0, n)
            X[i] = X[i] * 0.3  # row i short: its own score does not win
            if _other_beats_self(X, i):
                break
        got = ctx.call("most_similar", X.clone(), i)
        expect_equal(ctx, got, _most_similar_truth(X, i), "the most similar other row (a Python int)", f"X {describe(X)}, i={i}")


@check(f"{A}.most_similar.self", "most_similar")
def most_similar_self(ctx):
    """Never i itself: row i by far the longest (any j != i is accepted there), and every other row scoring below 0."""
    for n in (6, 4):
        for attempt in range(20):
            X = ctx.randn(n, 4)
            i = ctx.randrange(0, n)
            X[i] = X[i] * 20  # row i has by far the largest dot product with itself
            scores = X @ X[i]
            if bool((torch.cat([scores[:i], scores[i + 1 :]]) > 0).any()):
                break
        got = ctx.call("most_similar", X.clone(), i)
        if type(got) is int and got == i:
            ctx.fail("never i itself", f"returned i={i}, the row whose dot product with itself is the largest", f"X {describe(X)}, i={i}")
    # every other row is a negative multiple of row i, shorter ones first: the best is the first j != i
    n = 5
    i = ctx.randrange(0, n)
    x = ctx.randn(3).abs() + 0.2
    factors = torch.linspace(0.5, 2.0, n - 1, device=ctx.device)
    rows = [x if k == i else -factors[k if k < i else k - 1] * x for k in range(n)]
    X = torch.stack(rows)
    expect_equal(ctx, ctx.call("most_similar", X.clone(), i), _most_similar_truth(X, i), "never i itself, also when every other row scores below 0 (the least negative wins)", f"X {describe(X)}, i={i}")


@check(f"{A}.most_similar.ties", "most_similar")
def most_similar_ties(ctx):
    """Exact ties (integer entries) go to the smallest j."""
    for n in (5, 7):
        X = ctx.randint(-2, 3, (n, 4)).to(torch.float32)
        i = ctx.randrange(1, n - 1)
        X[i] = X[i].abs()
        X[i, 0] = 1.0  # row i is not zero
        best = 5 * X[i]
        for j1, j2 in [(0, n - 1), (i + 1, n - 1)]:
            Y = X.clone()
            Y[j1], Y[j2] = best, best
            expect_equal(ctx, ctx.call("most_similar", Y.clone(), i), _most_similar_truth(Y, i), "ties go to the smallest j", f"X {describe(Y)} with rows {j1} and {j2} equal, i={i}")
    X = ctx.randint(1, 4, (1, 3)).to(torch.float32).repeat(4, 1)  # integer entries: exact ties
    expect_equal(ctx, ctx.call("most_similar", X.clone(), 2), 0, "ties go to the smallest j", "four equal rows, i=2")


@check(f"{A}.most_similar.unchanged", "most_similar")
def most_similar_unchanged(ctx):
    """X is not modified."""
    X = ctx.randn(6, 3, scale=2.0)
    before = X.clone()
    ctx.call("most_similar", X, 2)
    if X.shape != before.shape or not torch.equal(X, before):
        ctx.fail("X is left unchanged", "most_similar modified X in place", f"X {describe(before)}, i=2")
    expect_untouched(ctx, [("X", X)], "X is left unchanged", f"X {describe(before)}, i=2", who="most_similar")


# ---------------------------------------------------------------- subspace_projection
def _basis(ctx, k, d, dtype=torch.float32):
    """K linearly independent, clearly non-orthogonal rows of different lengths, well conditioned
    (condition number a few units: float32 answers are then accurate to about 1e-5)."""
    Qm, _ = torch.linalg.qr(torch.randn(d, k, generator=ctx.gen, dtype=torch.float64))  # (D, K) orthonormal columns
    mix = torch.eye(k, dtype=torch.float64) + 0.6 * torch.triu(torch.ones(k, k, dtype=torch.float64), 1)
    B = mix @ Qm.T  # (K, D): rows lean on each other (not perpendicular)
    lengths = 0.5 + 2.5 * torch.rand(k, 1, generator=ctx.gen, dtype=torch.float64)
    B = B / B.norm(dim=-1, keepdim=True) * lengths
    return B.to(dtype).to(ctx.device)


def _subspace_truth(X, B):
    Qm, _ = torch.linalg.qr(cpu64(B).T)  # (D, K): orthonormal basis of the span
    return cpu64(X) @ Qm @ Qm.T


@check(f"{A}.subspace_projection.values", "subspace_projection")
def subspace_values(ctx):
    """The closest point of span(rows of B) for each row of X (N, D); non-orthogonal bases; K = 1 and K = D."""
    for n, k, d in [(5, 2, 3), (4, 3, 6), (6, 1, 4), (3, 4, 4), (7, 2, 5)]:
        X, B = ctx.randn(n, d), _basis(ctx, k, d)
        got = _call_float(ctx, "subspace_projection", X.clone(), B.clone())
        expect_tensor(ctx, got, like(_subspace_truth(X, B), X), "the closest point of the span of the rows of B", f"X {describe(X)}, B {describe(B)} (rows not orthogonal)", atol=1e-4, rtol=1e-3)


@check(f"{A}.subspace_projection.batch", "subspace_projection")
def subspace_batch(ctx):
    """X of shape (..., D): a single vector, and batches of batches."""
    for shape, k in [((4,), 2), ((2, 3, 5), 3), ((2, 2, 2, 3), 2)]:
        d = shape[-1]
        X, B = ctx.randn(*shape), _basis(ctx, k, d)
        flat = _call_float(ctx, "subspace_projection", X.reshape(-1, d).clone(), B.clone())  # the student's own 2-D answer
        if type(flat) is not torch.Tensor or flat.numel() != X.numel():
            return  # graded by the values clause
        got = _call_float(ctx, "subspace_projection", X.clone(), B.clone())
        expect_tensor(ctx, got, torch.Tensor.detach(flat).reshape(shape), "X of shape (..., D) gives the shape of X (same vectors as with X reshaped to (-1, D))", f"X {describe(X)}, B {describe(B)}", atol=1e-5, rtol=1e-4)


@check(f"{A}.subspace_projection.dtype", "subspace_projection")
def subspace_dtype(ctx):
    """float64 inputs keep float64."""
    _expect_dtype(ctx, "subspace_projection", [ctx.randn(4, 5, dtype=torch.float64), _basis(ctx, 2, 5, dtype=torch.float64)])


@check(f"{A}.subspace_projection.unchanged", "subspace_projection")
def subspace_unchanged(ctx):
    """X and B are not modified."""
    call_leaves_unchanged(ctx, "subspace_projection", [ctx.randn(4, 5), _basis(ctx, 3, 5)], ["X", "B"])
