"""Hidden checks for 01-text-representations.

Ground truths: ``F.one_hot`` for one-hot vectors, ``F.pad`` + slicing for the
window features, the definitions in the course spec written as plain
comprehensions over all position pairs for the word2vec examples, and for the
negative-sampling loss a float64 sum over explicit dot products with the stable
identity ``-log sigmoid(x) = max(-x, 0) + log1p(exp(-|x|))``.

Each clause of ``CLAUSES`` is graded by the check of the same name.
"""
import torch
import torch.nn.functional as F

from autograder.checking import check, contract_clauses, describe, expect_equal, expect_tensor, expect_untouched

A = ASSIGNMENT = "01"
CONTRACT = ["build_vocab", "one_hot", "skipgram_pairs", "cbow_examples", "window_features", "sgns_loss"]
WORDS = ["i", "saw", "a", "the", "cat", "dog", "sat", "on", "mat", "早", "上", "好", "ran", "can", "see"]

CLAUSES = contract_clauses(__file__, globals())


def _random_tokens(ctx, n, alphabet_size):
    alphabet = WORDS[:alphabet_size]
    return [alphabet[ctx.randrange(0, len(alphabet))] for _ in range(n)]


def _vocab_truth(tokens):
    vocab = {}
    for t in tokens:
        if t not in vocab:
            vocab[t] = len(vocab)
    return vocab


def _as_dict(got):
    """Any dict subclass (OrderedDict, defaultdict, ...) is a dict: compare it as a plain one."""
    return dict(got) if isinstance(got, dict) else got


# ---------------------------------------------------------------- build_vocab
@check(f"{A}.build_vocab.values", "build_vocab")
def build_vocab_values(ctx):
    """ids 0, 1, 2, ... in order of first occurrence, on random and CJK token lists; dict subclasses are fine."""
    cases = [_random_tokens(ctx, n, alphabet) for n, alphabet in [(6, 4), (20, 8), (50, 15), (9, 3)]]
    cases += [["saw"], ["saw"] * 5, ["早", "上", "好", "早"], ["I", "saw", "a", "saw"]]
    for tokens in cases:
        got = ctx.call("build_vocab", list(tokens))
        expect_equal(ctx, _as_dict(got), _vocab_truth(tokens), "ids 0, 1, 2, ... by first occurrence", f"{len(tokens)} tokens {tokens[:6]}...")


@check(f"{A}.build_vocab.empty", "build_vocab")
def build_vocab_empty(ctx):
    """An empty token list gives an empty dict."""
    expect_equal(ctx, _as_dict(ctx.call("build_vocab", [])), {}, "an empty token list gives an empty dict", "tokens []")


@check(f"{A}.build_vocab.unchanged", "build_vocab")
def build_vocab_unchanged(ctx):
    """The token list is not modified."""
    for tokens in [_random_tokens(ctx, 12, 5), ["早", "上", "好", "早"]]:
        copy = list(tokens)
        ctx.call("build_vocab", copy)
        if copy != tokens:
            ctx.fail("the token list is left unchanged", f"it was modified to {copy!r}", repr(tokens))
        expect_untouched(ctx, [("the token list", copy)], "the token list is left unchanged", repr(tokens), who="build_vocab")


# ---------------------------------------------------------------- one_hot
ONE_HOT_FORBIDDEN = ("torch.nn.functional.one_hot",)
ONE_HOT_CASES = [((5,), 7), ((3, 4), 10), ((2, 3, 4), 5), ((1,), 1), ((6,), 50)]


@check(f"{A}.one_hot.values", "one_hot")
def one_hot_values(ctx):
    """Exactly the rows of the identity, shape ids.shape + (V,), for ids of any shape (dtype graded apart)."""
    for shape, vocab in ONE_HOT_CASES:
        ids = ctx.randint(0, vocab, shape)
        got = ctx.call("one_hot", ids.clone(), vocab)
        expected = F.one_hot(ids, vocab).to(torch.float32)
        if type(got) is torch.Tensor:
            got = torch.Tensor.float(got)
        expect_tensor(ctx, got, expected, "one-hot values, shape ids.shape + (vocab_size,), on the device of ids", f"ids {describe(ids)}, vocab_size {vocab}")
    vocab = ctx.randrange(4, 12)
    ids = torch.randperm(vocab, generator=ctx.gen).to(ctx.device)
    got = ctx.call("one_hot", ids.clone(), vocab)
    if type(got) is torch.Tensor:
        got = torch.Tensor.float(got)
    expect_tensor(ctx, got, torch.eye(vocab, device=ctx.device)[ids], "one-hot of a permutation of the vocabulary", f"ids {describe(ids)}, vocab_size {vocab}")


@check(f"{A}.one_hot.dtype", "one_hot")
def one_hot_dtype(ctx):
    """float32 result."""
    for shape, vocab in ONE_HOT_CASES[:3]:
        ids = ctx.randint(0, vocab, shape)
        got = ctx.call("one_hot", ids.clone(), vocab)
        if type(got) is torch.Tensor and got.dtype != torch.float32:
            ctx.fail("the result is float32", f"dtype {got.dtype}", f"ids {describe(ids)}, vocab_size {vocab}")


@check(f"{A}.one_hot.unchanged", "one_hot")
def one_hot_unchanged(ctx):
    """ids keeps its shape and values."""
    for shape, vocab in ONE_HOT_CASES[:3]:
        ids = ctx.randint(0, vocab, shape)
        before = ids.clone()
        ctx.call("one_hot", ids, vocab)
        if ids.shape != before.shape or not torch.equal(ids, before):
            ctx.fail("ids is left unchanged", f"ids changed from shape {tuple(before.shape)} to {tuple(ids.shape)} or in its values", f"ids {describe(before)}, vocab_size {vocab}")
        expect_untouched(ctx, [("ids", ids)], "ids is left unchanged", f"ids {describe(before)}, vocab_size {vocab}", who="one_hot")


@check(f"{A}.one_hot.errors", "one_hot")
def one_hot_errors(ctx):
    """ValueError for an id outside [0, vocab_size)."""
    vocab = ctx.randrange(3, 9)
    for bad in [vocab, vocab + 3, -1]:
        ids = ctx.randint(0, vocab, (4,))
        ids[ctx.randrange(0, 4)] = bad
        ctx.expect_raises(ValueError, f"ValueError for id {bad} with vocab_size {vocab}", "one_hot", ids, vocab)
    ids = ctx.randint(0, vocab, (2, 3))
    ids[1, 2] = vocab
    ctx.expect_raises(ValueError, "ValueError for an out-of-range id in a batched input", "one_hot", ids, vocab)


@check(f"{A}.one_hot.builtin", "one_hot", ONE_HOT_FORBIDDEN)
def one_hot_builtin(ctx):
    """F.one_hot is not called (the call itself is watched, and the source is read)."""
    ids = ctx.randint(0, 5, (3,))
    ctx.call("one_hot", ids, 5)


# ---------------------------------------------------------------- skipgram_pairs / cbow_examples
def _skipgram_truth(ids, window):
    n = len(ids)
    return [(ids[i], ids[j]) for i in range(n) for j in range(n) if j != i and abs(i - j) <= window]


def _cbow_truth(ids, window):
    n = len(ids)
    return [([ids[j] for j in range(n) if j != i and abs(i - j) <= window], ids[i]) for i in range(n)]


def _random_ids(ctx, n, vocab=20):
    return [ctx.randrange(0, vocab) for _ in range(n)]


@check(f"{A}.skipgram_pairs.values", "skipgram_pairs")
def skipgram_values(ctx):
    """(centre, context) pairs in order of centre, then context position; window 0, long windows, one token, repeats."""
    cases = [(_random_ids(ctx, n), w) for n, w in [(7, 1), (10, 2), (12, 4), (5, 3)]]
    cases += [(_random_ids(ctx, 5), 0), (_random_ids(ctx, 4), 10), ([3], 2), ([1, 1, 1], 1)]
    for ids, window in cases:
        got = ctx.call("skipgram_pairs", list(ids), window)
        expect_equal(ctx, got, _skipgram_truth(ids, window), "skip-gram pairs in order", f"ids {ids}, window {window}")


@check(f"{A}.cbow_examples.values", "cbow_examples")
def cbow_values(ctx):
    """(context ids in position order, centre id) for every position; window 0, long windows, one token."""
    cases = [(_random_ids(ctx, n), w) for n, w in [(7, 1), (10, 2), (12, 4), (6, 3)]]
    cases += [(_random_ids(ctx, 4), 0), (_random_ids(ctx, 3), 7), ([5], 3)]
    for ids, window in cases:
        got = ctx.call("cbow_examples", list(ids), window)
        expect_equal(ctx, got, _cbow_truth(ids, window), "CBOW examples in order", f"ids {ids}, window {window}")


# ---------------------------------------------------------------- window_features
def _window_truth(X, window):
    n = X.shape[0]
    padded = F.pad(X, (0, 0, window, window))  # (N + 2w, D), zero rows outside
    return torch.cat([padded[k : k + n] for k in range(2 * window + 1)], dim=1)


@check(f"{A}.window_features.values", "window_features")
def window_values(ctx):
    """Row i concatenates X[i-w], ..., X[i+w], zeros outside the sequence; window 0, one token, wide windows."""
    for n, d, window in [(6, 3, 1), (9, 4, 2), (5, 2, 3), (12, 8, 2), (5, 3, 0), (1, 4, 2), (3, 2, 5)]:
        X = ctx.randn(n, d)
        got = ctx.call("window_features", X.clone(), window)
        expect_tensor(ctx, got, _window_truth(X, window), "window features: shape (N, (2*window+1)*D), zeros outside", f"X {describe(X)}, window {window}")


@check(f"{A}.window_features.dtype", "window_features")
def window_dtype(ctx):
    """float64 input gives a float64 result."""
    if ctx.device.type == "mps":
        return
    X = ctx.randn(4, 3, dtype=torch.float64)
    got = ctx.call("window_features", X.clone(), 1)
    if type(got) is torch.Tensor and got.dtype != torch.float64:
        ctx.fail("the result has the dtype of X", f"dtype {got.dtype}, expected torch.float64", f"X {describe(X)}, window 1")


@check(f"{A}.window_features.unchanged", "window_features")
def window_unchanged(ctx):
    """X is not modified."""
    for window in (1, 2):
        X = ctx.randn(5, 3)
        before = X.clone()
        ctx.call("window_features", X, window)
        if X.shape != before.shape or not torch.equal(X, before):
            ctx.fail("X is left unchanged", "window_features modified X in place", f"X {describe(before)}, window {window}")
        expect_untouched(ctx, [("X", X)], "X is left unchanged", f"X {describe(before)}, window {window}", who="window_features")


# ---------------------------------------------------------------- sgns_loss
def _neg_log_sigmoid(x):
    """-log sigmoid(x) in float64, stable for any x."""
    return torch.clamp(-x, min=0) + torch.log1p(torch.exp(-x.abs()))


def _sgns_truth(centre, context, negatives):
    v, u, n = (t.detach().to("cpu", torch.float64) for t in (centre, context, negatives))
    positive = (u * v).sum(-1)  # (...)
    negative = (n * v.unsqueeze(-2)).sum(-1)  # (..., K)
    return _neg_log_sigmoid(positive) + _neg_log_sigmoid(-negative).sum(-1)


def _sgns_inputs(ctx, lead, k, d, scale=1.0, dtype=torch.float32):
    return ctx.randn(*lead, d, scale=scale, dtype=dtype), ctx.randn(*lead, d, scale=scale, dtype=dtype), ctx.randn(*lead, k, d, scale=scale, dtype=dtype)


def _describe3(c, o, n):
    return f"centre {describe(c)}, context {describe(o)}, negatives {describe(n)}"


SGNS_SHAPES = [((6,), 3, 4), ((2, 5), 2, 8), ((), 4, 5), ((7,), 1, 3), ((2, 2, 3), 5, 2)]


@check(f"{A}.sgns_loss.values", "sgns_loss")
def sgns_values(ctx):
    """One loss per example, shape (...), equal to the formula, for several leading shapes and K (dtype graded apart)."""
    for lead, k, d in SGNS_SHAPES:
        c, o, n = _sgns_inputs(ctx, lead, k, d)
        got = ctx.call("sgns_loss", c.clone(), o.clone(), n.clone())
        if type(got) is torch.Tensor and got.is_floating_point():
            got = torch.Tensor.float(got)
        expect_tensor(ctx, got, _sgns_truth(c, o, n).to(torch.float32).to(ctx.device), "one loss per example, -log s(u_o.v_c) - sum_k log s(-u_k.v_c)", _describe3(c, o, n), atol=1e-5, rtol=1e-5)
    c, o, n = _sgns_inputs(ctx, (6,), 3, 8, scale=2.5)  # scores of a few tens: every formula is still finite here
    got = ctx.call("sgns_loss", c.clone(), o.clone(), n.clone())
    if type(got) is torch.Tensor and got.is_floating_point():
        got = torch.Tensor.float(got)
    expect_tensor(ctx, got, _sgns_truth(c, o, n).to(torch.float32).to(ctx.device), "one loss per example, also for scores of a few tens", _describe3(c, o, n), atol=1e-4, rtol=1e-5)


@check(f"{A}.sgns_loss.stable", "sgns_loss")
def sgns_stable(ctx):
    """Scores of a few hundred (both signs) in float32 give finite losses."""
    for lead, k, d in [((8,), 3, 16), ((3, 4), 5, 8)]:
        c, o, n = _sgns_inputs(ctx, lead, k, d, scale=5.0)  # dot products up to a few hundred
        got = ctx.call("sgns_loss", c.clone(), o.clone(), n.clone())
        largest = float(torch.cat([(o * c).sum(-1).flatten(), (n * c.unsqueeze(-2)).sum(-1).flatten()]).abs().max())
        if type(got) is not torch.Tensor:
            ctx.fail("finite for large scores", f"expected a tensor, got {describe(got)}", _describe3(c, o, n))
        bad = ~torch.isfinite(torch.Tensor.detach(got))
        if bool(bad.any()):
            idx = tuple(int(i) for i in torch.nonzero(bad)[0]) if bad.dim() else ()
            ctx.fail("finite for large scores", f"value at {idx} is {got[idx].item()} (largest |score| in the input {largest:.0f})", _describe3(c, o, n))


@check(f"{A}.sgns_loss.dtype", "sgns_loss")
def sgns_dtype(ctx):
    """float64 inputs give a float64 result; float32 gives float32."""
    if ctx.device.type == "mps":
        return
    for dtype in (torch.float64, torch.float32):
        c, o, n = _sgns_inputs(ctx, (4,), 3, 5, dtype=dtype)
        got = ctx.call("sgns_loss", c.clone(), o.clone(), n.clone())
        if type(got) is torch.Tensor and got.dtype != dtype:
            ctx.fail("the result has the dtype of the inputs", f"dtype {got.dtype}, expected {dtype}", _describe3(c, o, n))


@check(f"{A}.sgns_loss.unchanged", "sgns_loss")
def sgns_unchanged(ctx):
    """No input is modified."""
    for lead, k, d in SGNS_SHAPES[:3]:
        inputs = _sgns_inputs(ctx, lead, k, d)
        before = [t.clone() for t in inputs]
        ctx.call("sgns_loss", *inputs)
        for name, t, b in zip(("centre", "context", "negatives"), inputs, before):
            if t.shape != b.shape or not torch.equal(t, b):
                ctx.fail(f"{name} is left unchanged", f"sgns_loss modified {name} in place", _describe3(*before))
            expect_untouched(ctx, [(name, t)], f"{name} is left unchanged", _describe3(*before), who="sgns_loss")


@check(f"{A}.sgns_loss.gradients", "sgns_loss")
def sgns_gradients(ctx):
    """backward() of the summed losses reaches every input with a finite, non-zero gradient.

    The tensors are made, differentiated and read where the student's code runs (through
    ``ctx.method`` / ``ctx.attr``), so this also holds in the sandboxed grader."""
    lead, k, d = (5,), 3, 4
    c, o, n = _sgns_inputs(ctx, lead, k, d)
    probe = ctx.call("sgns_loss", c.clone(), o.clone(), n.clone())
    if type(probe) is not torch.Tensor:
        ctx.fail("the loss is differentiable", f"expected a tensor, got {describe(probe)}", _describe3(c, o, n))
    leaves, inputs = [], []
    for t in (c, o, n):
        leaf = ctx.method(probe, "new_tensor", t.tolist())  # a fresh tensor (dtype, device of the loss) beside the student's code
        leaf = ctx.method(leaf, "requires_grad_", True)
        leaves.append(leaf)
        inputs.append(ctx.method(leaf, "mul", 1.0))  # non-leaf inputs, as inside a model
    got = ctx.call("sgns_loss", *inputs)
    if type(got) is not torch.Tensor or not ctx.attr(got, "requires_grad"):
        ctx.fail("the loss is differentiable", "the result does not require grad (was it detached, or built from Python numbers?)", _describe3(c, o, n))
    total = ctx.method(got, "sum")
    ctx.method(total, "backward")
    for name, leaf in zip(("centre", "context", "negatives"), leaves):
        g = ctx.attr(leaf, "grad")
        if type(g) is not torch.Tensor or not bool(torch.isfinite(g).all()) or not bool((g != 0).any()):
            what = "no gradient" if g is None else "a zero or non-finite gradient"
            ctx.fail("the gradient reaches centre, context and negatives", f"{what} reached {name}", _describe3(c, o, n))
