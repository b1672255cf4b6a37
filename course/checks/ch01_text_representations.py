"""Hidden checks for 01-text-representations.

Ground truths: ``F.one_hot`` for one-hot vectors, ``F.pad`` + slicing for the
window features, and the definitions in the course spec written as plain
comprehensions over all position pairs for the word2vec examples.
"""
import torch
import torch.nn.functional as F

from autograder.checking import check, describe, expect_equal, expect_tensor

A = ASSIGNMENT = "01"
CONTRACT = ["build_vocab", "one_hot", "skipgram_pairs", "cbow_examples", "window_features"]
WORDS = ["i", "saw", "a", "the", "cat", "dog", "sat", "on", "mat", "早", "上", "好", "ran", "can", "see"]


def _random_tokens(ctx, n, alphabet_size):
    alphabet = WORDS[:alphabet_size]
    return [alphabet[ctx.randrange(0, len(alphabet))] for _ in range(n)]


def _vocab_truth(tokens):
    vocab = {}
    for t in tokens:
        if t not in vocab:
            vocab[t] = len(vocab)
    return vocab


# ---------------------------------------------------------------- build_vocab
@check(f"{A}.build_vocab.values", "build_vocab")
def build_vocab_values(ctx):
    """ids 0, 1, 2, ... in order of first occurrence, on random token lists."""
    for n, alphabet in [(6, 4), (20, 8), (50, 15), (9, 3)]:
        tokens = _random_tokens(ctx, n, alphabet)
        got = ctx.call("build_vocab", list(tokens))
        expect_equal(ctx, got, _vocab_truth(tokens), "ids by first occurrence", f"{n} random tokens {tokens[:6]}...")


@check(f"{A}.build_vocab.edges", "build_vocab")
def build_vocab_edges(ctx):
    """Empty list, one token, one repeated token, CJK tokens; the input is not modified."""
    for tokens in [[], ["saw"], ["saw"] * 5, ["早", "上", "好", "早"], ["I", "saw", "a", "saw"]]:
        copy = list(tokens)
        got = ctx.call("build_vocab", copy)
        expect_equal(ctx, got, _vocab_truth(tokens), "ids by first occurrence", repr(tokens))
        if copy != tokens:
            ctx.fail("input left unchanged", f"the token list was modified to {copy!r}", repr(tokens))


# ---------------------------------------------------------------- one_hot
ONE_HOT_FORBIDDEN = ("torch.nn.functional.one_hot",)


@check(f"{A}.one_hot.values", "one_hot", ONE_HOT_FORBIDDEN)
def one_hot_values(ctx):
    """Exactly F.one_hot(ids, V) as float32, for ids of any shape."""
    for shape, vocab in [((5,), 7), ((3, 4), 10), ((2, 3, 4), 5), ((1,), 1), ((6,), 50)]:
        ids = ctx.randint(0, vocab, shape)
        got = ctx.call("one_hot", ids.clone(), vocab)
        expected = F.one_hot(ids, vocab).to(torch.float32)
        expect_tensor(ctx, got, expected, "one-hot values, shape ids.shape + (V,), float32", f"ids {describe(ids)}, vocab_size {vocab}")


@check(f"{A}.one_hot.properties", "one_hot", ONE_HOT_FORBIDDEN)
def one_hot_properties(ctx):
    """Rows are orthonormal (Gram matrix = identity); the result stays on the ids' device."""
    vocab = ctx.randrange(4, 12)
    ids = torch.randperm(vocab, generator=ctx.gen).to(ctx.device)
    got = ctx.call("one_hot", ids, vocab)
    expected = torch.eye(vocab, device=ctx.device)[ids]
    expect_tensor(ctx, got, expected, "one-hot of a permutation of the vocabulary", f"ids {describe(ids)}, vocab_size {vocab}")
    gram = got @ got.T
    expect_tensor(ctx, gram, torch.eye(vocab, device=ctx.device), "distinct one-hot vectors are orthonormal", f"ids {describe(ids)}")
    empty = torch.zeros(0, dtype=torch.long, device=ctx.device)
    expect_tensor(ctx, ctx.call("one_hot", empty, 3), torch.zeros(0, 3, device=ctx.device), "empty input gives shape (0, V)", "ids tensor(0,)")


@check(f"{A}.one_hot.errors", "one_hot", ONE_HOT_FORBIDDEN)
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
    """(centre, context) pairs in order of centre, then context position."""
    for n, window in [(7, 1), (10, 2), (12, 4), (5, 3)]:
        ids = _random_ids(ctx, n)
        got = ctx.call("skipgram_pairs", list(ids), window)
        expect_equal(ctx, got, _skipgram_truth(ids, window), "skip-gram pairs in order", f"ids of length {n}, window {window}")


@check(f"{A}.skipgram_pairs.edges", "skipgram_pairs")
def skipgram_edges(ctx):
    """Window 0, window longer than the sentence, one or zero tokens, repeated ids."""
    for ids, window in [(_random_ids(ctx, 5), 0), (_random_ids(ctx, 4), 10), ([3], 2), ([], 1), ([1, 1, 1], 1)]:
        got = ctx.call("skipgram_pairs", list(ids), window)
        expect_equal(ctx, got, _skipgram_truth(ids, window), "skip-gram pairs at the edges", f"ids {ids}, window {window}")


@check(f"{A}.cbow_examples.values", "cbow_examples")
def cbow_values(ctx):
    """(context ids in position order, centre id) for every position."""
    for n, window in [(7, 1), (10, 2), (12, 4), (6, 3)]:
        ids = _random_ids(ctx, n)
        got = ctx.call("cbow_examples", list(ids), window)
        expect_equal(ctx, got, _cbow_truth(ids, window), "CBOW examples in order", f"ids of length {n}, window {window}")


@check(f"{A}.cbow_examples.edges", "cbow_examples")
def cbow_edges(ctx):
    """Window 0 (empty contexts), a window longer than the sentence, one token, no tokens."""
    for ids, window in [(_random_ids(ctx, 4), 0), (_random_ids(ctx, 3), 7), ([5], 3), ([], 2)]:
        got = ctx.call("cbow_examples", list(ids), window)
        expect_equal(ctx, got, _cbow_truth(ids, window), "CBOW examples at the edges", f"ids {ids}, window {window}")


# ---------------------------------------------------------------- window_features
def _window_truth(X, window):
    n = X.shape[0]
    padded = F.pad(X, (0, 0, window, window))  # (N + 2w, D), zero rows outside
    return torch.cat([padded[k : k + n] for k in range(2 * window + 1)], dim=1)


@check(f"{A}.window_features.values", "window_features")
def window_values(ctx):
    """Row i concatenates X[i-w], ..., X[i+w], zeros outside the sequence."""
    for n, d, window in [(6, 3, 1), (9, 4, 2), (5, 2, 3), (12, 8, 2)]:
        X = ctx.randn(n, d)
        got = ctx.call("window_features", X.clone(), window)
        expect_tensor(ctx, got, _window_truth(X, window), "window features (N, (2w+1)D)", f"X {describe(X)}, window {window}")


@check(f"{A}.window_features.edges", "window_features")
def window_edges(ctx):
    """Window 0 returns X, one token, a window wider than the sentence; dtype and device kept."""
    X = ctx.randn(5, 3)
    expect_tensor(ctx, ctx.call("window_features", X.clone(), 0), X, "window 0 gives X itself", f"X {describe(X)}")
    X = ctx.randn(1, 4)
    expect_tensor(ctx, ctx.call("window_features", X.clone(), 2), _window_truth(X, 2), "a single token", f"X {describe(X)}, window 2")
    X = ctx.randn(3, 2)
    expect_tensor(ctx, ctx.call("window_features", X.clone(), 5), _window_truth(X, 5), "window wider than the sentence", f"X {describe(X)}, window 5")
    X = ctx.randn(4, 3, dtype=torch.float64)
    expect_tensor(ctx, ctx.call("window_features", X.clone(), 1), _window_truth(X, 1), "float64 input keeps float64", f"X {describe(X)}, window 1")
