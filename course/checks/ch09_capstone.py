"""Hidden checks for 09-capstone ("I saw a saw").

The capstone notebook defines its own ``PositionalEncoding`` (checked as in 07)
and ``MultiHeadSelfAttention`` (the ground truths of 06: ``torch.nn.MultiheadAttention``
loaded with the student's weights, and the masked closed form), then
``TinyTagger`` and ``train_tagger``.
The graded run trains a fresh ``TinyTagger`` with a fixed seed on the data of
``course.tagging_data`` and needs at least 0.9 accuracy on the ambiguous
tokens of held-out sentences, within the stated CPU budget, with predictions that
depend on word order.
"""
import math
import time

import torch
import torch.nn.functional as F

from .. import tagging_data as data
from .ch06_multi_head import MHSA_FORBIDDEN, closed_form_truth, read_weights, torch_truth
from .ch07_positional_encoding import register_positional_encoding_checks
from autograder.checking import check, describe, expect_tensor

A = ASSIGNMENT = "09"
CONTRACT = ["PositionalEncoding", "MultiHeadSelfAttention", "TinyTagger", "train_tagger"]

ATTENTION_FORBIDDEN = MHSA_FORBIDDEN + ("torch.nn.TransformerEncoderLayer", "torch.nn.TransformerEncoder", "torch.nn.Transformer")

# The graded run (stated in the notebook): seed, data, epochs, learning rate, budget.
GRADED_SEED, GRADED_EPOCHS, GRADED_LR = 0, 6, 3e-3
TRAIN_SIZE, TEST_SIZE = 2000, 1000
CPU_BUDGET_S = 60.0          # seconds of training on an idle machine with 2 CPU cores
CALIBRATION_IDLE_S = 0.2     # seconds the calibration loop below takes on such a machine
ACCURACY_THRESHOLD = 0.9


def calibration_seconds(steps: int = 200) -> float:
    """Wall-clock seconds this machine needs, right now, for a fixed small training loop.

    The graded run may take CPU_BUDGET_S scaled by how much slower than an idle
    2-core machine the grader currently is, so a busy grader does not fail a
    model that fits the budget (the budget never drops below CPU_BUDGET_S).
    """
    gen = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(43, 32), torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 9))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ids, tags = torch.randint(0, 43, (32, 12), generator=gen), torch.randint(0, 9, (32, 12), generator=gen)
    start = time.perf_counter()
    for _ in range(steps):
        loss = F.cross_entropy(model(ids).flatten(0, 1), tags.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


# ---------------------------------------------------------------- PositionalEncoding (as in 07)
register_positional_encoding_checks(A, dropout=False)


# ---------------------------------------------------------------- MultiHeadSelfAttention (as in 06)
def _call_mhsa(ctx, module, x, **kwargs):
    got = ctx.method(module, "__call__", x.clone(), return_weights=True, **kwargs)
    if not isinstance(got, tuple) or len(got) != 2:
        ctx.fail("return_weights=True returns (output, weights)", f"got {type(got).__name__}", f"x {describe(x)}")
    return got


def _module(ctx, d_model, heads, bias=True):
    module = ctx.call("MultiHeadSelfAttention", d_model, heads, bias)
    ctx.method(module, "to", str(ctx.device))
    return module


@check(f"{A}.MultiHeadSelfAttention.shapes", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_shapes(ctx):
    """q/k/v/out_proj are Linear(d, d, bias); output (B, N, d), weights (B, H, N, N) with rows summing to 1; ValueError if d % H."""
    for d_model, heads, bias in [(8, 2, True), (12, 3, False), (32, 4, True)]:
        module = _module(ctx, d_model, heads, bias)
        inputs = f"MultiHeadSelfAttention({d_model}, {heads}, bias={bias})"
        read_weights(ctx, module, d_model, bias)  # fails unless every projection is Linear(d_model, d_model, bias=bias)
        B, N = ctx.randrange(1, 4), ctx.randrange(1, 9)
        x = ctx.randn(B, N, d_model)
        out, weights = _call_mhsa(ctx, module, x)
        if type(weights) is not torch.Tensor or tuple(weights.shape) != (B, heads, N, N):
            ctx.fail("attention weights of shape (B, H, N, N), one matrix per head", f"got {describe(weights)}", f"x {describe(x)}, {inputs}")
        expect_tensor(ctx, torch.Tensor.detach(weights).sum(-1), torch.ones(B, heads, N, device=ctx.device),
                      "every row of the attention weights sums to 1", f"x {describe(x)}, {inputs}")
        if type(out) is not torch.Tensor or tuple(out.shape) != (B, N, d_model):
            ctx.fail("output of shape (B, N, d_model)", f"got {describe(out)}", f"x {describe(x)}, {inputs}")
        plain = ctx.method(module, "__call__", x.clone())
        if type(plain) is not torch.Tensor:
            ctx.fail("without return_weights the module returns only the output tensor", f"got {type(plain).__name__}", f"x {describe(x)}, {inputs}")
    ctx.expect_raises(ValueError, "ValueError when d_model is not divisible by num_heads", "MultiHeadSelfAttention", 10, 3)


@check(f"{A}.MultiHeadSelfAttention.values", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_values(ctx):
    """Equals torch.nn.MultiheadAttention with the same weights (outputs and per-head weights); batch items independent; float64 kept."""
    cases = [(2, 5, 8, 2, True), (1, 1, 6, 3, True), (3, 7, 16, 4, False), (2, 9, 12, 1, True), (ctx.randrange(1, 4), ctx.randrange(2, 12), 24, 4, True)]
    for B, N, d_model, heads, bias in cases:
        module = _module(ctx, d_model, heads, bias)
        x = ctx.randn(B, N, d_model)
        ref_out, ref_weights = torch_truth(read_weights(ctx, module, d_model, bias), x, heads)
        out, weights = _call_mhsa(ctx, module, x)
        inputs = f"x {describe(x)}, MultiHeadSelfAttention({d_model}, {heads}, bias={bias})"
        expect_tensor(ctx, weights, ref_weights.to(ctx.device, x.dtype), "per-head weights softmax(q k^T / sqrt(d_model / num_heads))", inputs, atol=1e-5)
        expect_tensor(ctx, out, ref_out.to(ctx.device, x.dtype), "output equals nn.MultiheadAttention with the same weights", inputs, atol=1e-5)
    # one sentence's output does not depend on the others in the batch (the source material's reshape bug)
    module = _module(ctx, 8, 2)
    x = ctx.randn(3, 4, 8)
    alone = ctx.method(module, "__call__", x[1:2].clone())
    together = ctx.method(module, "__call__", x.clone())
    if type(together) is not torch.Tensor or tuple(together.shape) != (3, 4, 8):
        ctx.fail("output of shape (B, N, d_model)", f"got {describe(together)}", f"x {describe(x)}")
    expect_tensor(ctx, alone, together[1:2].detach(), "a sentence's output does not depend on the rest of the batch", f"x {describe(x)}", atol=1e-5)
    # float64
    module = _module(ctx, 8, 2)
    ctx.method(module, "double")
    x = ctx.randn(2, 5, 8, dtype=torch.float64)
    ref_out, _ = torch_truth(read_weights(ctx, module, 8), x, 2)
    expect_tensor(ctx, ctx.method(module, "__call__", x.clone()), ref_out.to(ctx.device), "a float64 module on float64 input stays float64", f"x {describe(x)}", atol=1e-9)


@check(f"{A}.MultiHeadSelfAttention.mask", "MultiHeadSelfAttention", ATTENTION_FORBIDDEN)
def mhsa_mask(ctx):
    """Boolean masks (True = may attend), (N, N) and key-padding (B, 1, 1, N), give zero weight to masked keys."""
    d_model, heads = 12, 3
    module = _module(ctx, d_model, heads)
    params = read_weights(ctx, module, d_model)
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
        expect_tensor(ctx, weights, ref_weights, f"masked keys get weight 0 ({what}, True = may attend)", inputs, atol=1e-5)
        expect_tensor(ctx, out, ref_out, f"output with {what}", inputs, atol=1e-5)


# ---------------------------------------------------------------- TinyTagger
CONFIGS = [(20, 5, 16, 2, 10), (len(data.VOCAB), len(data.TAGS), 32, 4, 64), (30, 7, 24, 3, 20)]


def _tagger(ctx, vocab, tags, d_model, heads, max_len):
    model = ctx.call("TinyTagger", vocab, tags, d_model, heads, max_len)
    ctx.method(model, "to", str(ctx.device))
    ctx.method(model, "eval")
    return model


def _logits(ctx, model, ids, num_tags, inputs):
    got = ctx.method(model, "__call__", ids.clone())
    if type(got) is not torch.Tensor or tuple(got.shape) != (*ids.shape, num_tags):
        ctx.fail("logits of shape (B, N, num_tags)", f"got {describe(got)}", inputs)
    if not got.is_floating_point() or got.device.type != ctx.device.type:
        ctx.fail("float logits on the device of the ids", f"got {got.dtype} on {got.device}", inputs)
    if not bool(torch.isfinite(got).all()):
        ctx.fail("finite logits", "the logits contain NaN or inf", inputs)
    return got.detach()


@check(f"{A}.TinyTagger.shapes", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_shapes(ctx):
    """(B, N) ids give (B, N, num_tags) raw logits (not probabilities), for N = 1 up to max_len; batch items independent."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        for B, N in [(2, 5), (1, 1), (3, max_len)]:
            ids = ctx.randint(1, vocab, (B, N))
            inputs = f"ids {describe(ids)}, TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
            logits = _logits(ctx, model, ids, tags, inputs)
            if bool((logits >= 0).all()) and torch.allclose(logits.sum(-1), torch.ones_like(logits.sum(-1)), atol=1e-4):
                ctx.fail("forward returns raw logits (cross_entropy applies the softmax)", "every row is a probability distribution", inputs)
        ids = ctx.randint(1, vocab, (3, 6))
        together = _logits(ctx, model, ids, tags, f"ids {describe(ids)}")
        expect_tensor(ctx, _logits(ctx, model, ids[2:3], tags, "ids (1, 6)"), together[2:3], "a sentence's logits do not depend on the rest of the batch",
                      f"ids {describe(ids)}", atol=1e-4)
    model = ctx.call("TinyTagger", 11, 4)
    ctx.method(model, "to", str(ctx.device))
    ctx.method(model, "eval")
    ids = ctx.randint(1, 11, (2, 7))
    _logits(ctx, model, ids, 4, "TinyTagger(11, 4) with the default d_model, num_heads, max_len")


@check(f"{A}.TinyTagger.positions", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_positions(ctx):
    """Context and order matter: changing one word changes the others' logits, a repeated word differs by position, shuffling changes the logits."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        inputs = f"TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        ids = ctx.randint(1, vocab, (1, 6))
        changed = ids.clone()
        changed[0, 4] = 1 + (int(ids[0, 4]) % (vocab - 1))  # another word at position 4
        first = _logits(ctx, model, ids, tags, inputs)
        second = _logits(ctx, model, changed, tags, inputs)
        if float((first[0, :4] - second[0, :4]).abs().max()) < 1e-5:
            ctx.fail("each word's logits depend on the other words (attention mixes in the context)",
                     "changing word 4 left the logits of words 0-3 unchanged", f"ids {ids[0].tolist()}, {inputs}")
        word = ctx.randrange(1, vocab)
        same = torch.full((1, 6), word, dtype=torch.long, device=ctx.device)
        logits = _logits(ctx, model, same, tags, inputs)
        if float((logits[0] - logits[0, :1]).abs().max()) < 1e-4:
            ctx.fail("the same word at different positions gets different logits (positional encoding)",
                     "all six positions got identical logits: the model cannot see positions", f"ids {same[0].tolist()}, {inputs}")
        ids = ctx.randint(1, vocab, (4, 8))
        perm = torch.randperm(8, generator=ctx.gen).to(ctx.device)
        plain = _logits(ctx, model, ids, tags, inputs)
        shuffled = _logits(ctx, model, ids[:, perm], tags, inputs)
        if float((shuffled - plain[:, perm]).abs().max()) < 1e-4:
            ctx.fail("shuffling the words changes the logits, not just their order", "the logits only moved with the words: the model ignores word order",
                     f"ids {describe(ids)}, {inputs}")


@check(f"{A}.TinyTagger.padding", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_padding(ctx):
    """Padding (id 0 at the end) does not change the logits of the real tokens."""
    for vocab, tags, d_model, heads, max_len in CONFIGS[:2]:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        N, extra = ctx.randrange(2, 7), ctx.randrange(1, 5)
        ids = ctx.randint(1, vocab, (2, N))
        padded = torch.cat([ids, torch.zeros(2, extra, dtype=torch.long, device=ctx.device)], dim=1)
        inputs = f"ids {describe(ids)} padded with {extra} zeros, TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        expect_tensor(ctx, _logits(ctx, model, padded, tags, inputs)[:, :N], _logits(ctx, model, ids, tags, inputs),
                      "padding keys are masked: the real tokens' logits do not change", inputs, atol=1e-4)


# ---------------------------------------------------------------- train_tagger
def _toy_dataset(ctx, vocab, tags, sentences, length, padded_to):
    ids = torch.zeros(sentences, padded_to, dtype=torch.long)
    labels = torch.full((sentences, padded_to), data.IGNORE, dtype=torch.long)
    ids[:, :length] = torch.randint(1, vocab, (sentences, length), generator=ctx.gen)
    labels[:, :length] = torch.randint(0, tags, (sentences, length), generator=ctx.gen)
    return ids.to(ctx.device), labels.to(ctx.device)


def _losses(ctx, got, epochs, inputs):
    if type(got) is not list or len(got) != epochs or any(type(v) is not float for v in got):
        ctx.fail(f"returns a list of {epochs} Python floats (one mean loss per epoch)", f"got {describe(got)}"
                 + (f" holding {type(got[0]).__name__}" if isinstance(got, (list, tuple)) and got else ""), inputs)
    if not all(math.isfinite(v) for v in got):
        ctx.fail("finite losses", f"got {got}", inputs)
    return got


def _state(ctx, model):
    return {k: torch.Tensor.detach(v).clone() for k, v in ctx.method(model, "state_dict").items()}


@check(f"{A}.train_tagger.returns", "train_tagger")
def train_returns(ctx):
    """With lr = 0 nothing changes and each epoch's loss is the mean cross-entropy over the non-padding tokens."""
    vocab, tags = 15, 5
    model = _tagger(ctx, vocab, tags, 16, 2, 16)
    ids, labels = _toy_dataset(ctx, vocab, tags, sentences=96, length=6, padded_to=9)
    with torch.no_grad():
        expected = F.cross_entropy(_logits(ctx, model, ids, tags, "96 sentences").flatten(0, 1), labels.flatten(), ignore_index=data.IGNORE).item()
    before = _state(ctx, model)
    epochs = ctx.randrange(2, 4)
    inputs = f"96 sentences of 6 tokens padded to 9 (tag {data.IGNORE}), epochs {epochs}, lr 0"
    losses = _losses(ctx, ctx.call("train_tagger", model, (ids.clone(), labels.clone()), epochs, 0.0), epochs, inputs)
    for e, loss in enumerate(losses):
        if abs(loss - expected) > 1e-4 + 1e-4 * expected:
            ctx.fail("each epoch's loss is the mean cross-entropy over non-padding tokens (mean of the batch means)",
                     f"epoch {e + 1} reported {loss:.6f}, expected {expected:.6f}", inputs)
    after = _state(ctx, model)
    for k, v in before.items():
        if k not in after or not torch.equal(after[k], v):
            ctx.fail("the optimiser uses the given lr (lr = 0 leaves the model unchanged)", f"{k} changed", inputs)


@check(f"{A}.train_tagger.learns", "train_tagger")
def train_learns(ctx):
    """On a small generated training set the loss falls and the parameters change."""
    sentences = data.generate_sentences(64, seed=ctx.randrange(0, 10**6))
    ids, labels = (t.to(ctx.device) for t in data.encode(sentences))
    model = _tagger(ctx, len(data.VOCAB), len(data.TAGS), 16, 2, 16)
    before = _state(ctx, model)
    inputs = "64 generated sentences, epochs 20, lr 1e-2"
    losses = _losses(ctx, ctx.call("train_tagger", model, (ids, labels), 20, 1e-2), 20, inputs)
    if not losses[-1] < 0.25 * losses[0]:  # the reference ends near 0.1 of its first epoch's loss
        ctx.fail("training lowers the loss (zero_grad, backward, step every batch)", f"losses {[round(v, 3) for v in losses]}", inputs)
    after = _state(ctx, model)
    if all(torch.equal(after[k], v) for k, v in before.items() if k in after):
        ctx.fail("training updates the model's parameters in place", "no parameter changed", inputs)


# ---------------------------------------------------------------- the graded run
@check(f"{A}.capstone.accuracy", ("TinyTagger", "train_tagger"), ATTENTION_FORBIDDEN)
def capstone_accuracy(ctx):
    """Fixed seed, 6 epochs at lr 3e-3 on 2000 sentences: >= 0.9 on held-out ambiguous tokens, within the budget, order-sensitive."""
    train, test = data.make_splits(TRAIN_SIZE, TEST_SIZE, seed=GRADED_SEED)
    train_ids, train_tags = (t.to(ctx.device) for t in data.encode(train))
    test_ids, test_tags = (t.to(ctx.device) for t in data.encode(test))
    ctx.call("set_seed", GRADED_SEED)
    model = ctx.call("TinyTagger", len(data.VOCAB), len(data.TAGS))
    ctx.method(model, "to", str(ctx.device))
    setting = f"TinyTagger({len(data.VOCAB)}, {len(data.TAGS)}), train_tagger(epochs={GRADED_EPOCHS}, lr={GRADED_LR}), seed {GRADED_SEED}"
    before = calibration_seconds()
    start = time.perf_counter()
    ctx.call("train_tagger", model, (train_ids, train_tags), GRADED_EPOCHS, GRADED_LR)
    seconds = time.perf_counter() - start
    slowdown = max(1.0, (before + calibration_seconds()) / 2 / CALIBRATION_IDLE_S)
    if seconds > CPU_BUDGET_S * slowdown:
        ctx.fail(f"training fits the budget of {CPU_BUDGET_S:g} s on 2 idle CPU cores",
                 f"training took {seconds:.0f} s on a machine {slowdown:.1f} times slower than that, allowed {CPU_BUDGET_S * slowdown:.0f} s", setting)
    ctx.method(model, "eval")
    predictions = _logits(ctx, model, test_ids, len(data.TAGS), setting).argmax(-1)
    ambiguous = data.ambiguous_mask(test_ids)
    accuracy = float((predictions == test_tags)[ambiguous].float().mean())
    if accuracy < ACCURACY_THRESHOLD:
        ctx.fail(f"accuracy >= {ACCURACY_THRESHOLD} on ambiguous held-out tokens", f"accuracy {accuracy:.3f} on {int(ambiguous.sum())} tokens", setting)
    # shuffle the words of held-out sentences (padding stays at the end): the predicted tags must change
    sample = test_ids[:100].clone()
    shuffled = sample.clone()
    for s in range(len(sample)):
        n = int((sample[s] != data.PAD_ID).sum())
        shuffled[s, :n] = sample[s, torch.randperm(n, generator=ctx.gen).to(ctx.device)]
    moved = _logits(ctx, model, sample, len(data.TAGS), setting).argmax(-1)
    after = _logits(ctx, model, shuffled, len(data.TAGS), setting).argmax(-1)
    changed = 0
    for s in range(len(sample)):
        n = int((sample[s] != data.PAD_ID).sum())
        # compare each word's tag before and after shuffling, word by word
        order = [int(i) for i in shuffled[s, :n].tolist()]
        before_tags = sorted(zip(sample[s, :n].tolist(), moved[s, :n].tolist()))
        after_tags = sorted(zip(order, after[s, :n].tolist()))
        changed += before_tags != after_tags
    if changed < 20:
        ctx.fail("the trained model uses word order (shuffling a sentence changes its predicted tags)",
                 f"only {changed} of 100 shuffled sentences changed their tags", setting)
