"""ch09_capstone: the checks of train_tagger."""
import math

import torch
import torch.nn.functional as F

from autograder.checking import check, describe

from ... import tagging_data as data
from .shared import A
from .tagger import _logits, _state, _tagger


# ---------------------------------------------------------------- train_tagger
def _toy_dataset(ctx, vocab, tags, sentences, lengths, padded_to):
    ids = torch.zeros(sentences, padded_to, dtype=torch.long)
    labels = torch.full((sentences, padded_to), data.IGNORE, dtype=torch.long)
    for s in range(sentences):
        n = lengths[s % len(lengths)]
        ids[s, :n] = torch.randint(1, vocab, (n,), generator=ctx.gen)
        labels[s, :n] = torch.randint(0, tags, (n,), generator=ctx.gen)
    return ids.to(ctx.device), labels.to(ctx.device)


def _losses(ctx, got, epochs, inputs):
    if type(got) is not list or len(got) != epochs or any(type(v) is not float for v in got):
        ctx.fail(f"returns a list of {epochs} Python floats (one mean loss per epoch)", f"got {describe(got)}"
                 + (f" holding {type(got[0]).__name__}" if isinstance(got, (list, tuple)) and got else ""), inputs)
    if not all(math.isfinite(v) for v in got):
        ctx.fail("finite losses", f"got {got}", inputs)
    return got


def _numbers(ctx, got, epochs, inputs):
    """One number per epoch, as floats; the exact return type is the returns clause's business."""
    try:
        values = [float(v) for v in got]
    except (TypeError, ValueError, RuntimeError):
        ctx.fail(f"returns one loss per epoch ({epochs} numbers)", f"got {describe(got)}", inputs)
    if len(values) != epochs:
        ctx.fail(f"returns one loss per epoch ({epochs} numbers)", f"got {len(values)} numbers", inputs)
    if not all(math.isfinite(v) for v in values):
        ctx.fail("finite losses", f"got {values}", inputs)
    return values


def _batch_losses(ctx, model, ids, labels, num_tags, batch_size):
    """The cross-entropy over the non-padding tokens of consecutive batches of `batch_size` sentences, in this order."""
    logits = torch.cat([_logits(ctx, model, ids[s:s + batch_size], num_tags, f"ids {describe(ids[s:s + batch_size])}")
                        for s in range(0, len(ids), batch_size)]).double()  # each batch on its own, as training sees it
    token = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=data.IGNORE, reduction="none").view(ids.shape)
    real = (labels != data.IGNORE).double()
    return [float((token[s:s + batch_size] * real[s:s + batch_size]).sum() / real[s:s + batch_size].sum()) for s in range(0, len(ids), batch_size)]


def _close(a, b):
    return abs(a - b) <= 1e-4 + 1e-4 * abs(b)


@check(f"{A}.train_tagger.returns", "train_tagger")
def train_returns(ctx):
    """A list of `epochs` Python floats."""
    model = _tagger(ctx, 15, 5, 16, 2, 16)
    ids, labels = _toy_dataset(ctx, 15, 5, sentences=40, lengths=[6], padded_to=9)
    for epochs in [1, ctx.randrange(2, 4)]:
        _losses(ctx, ctx.call("train_tagger", model, (ids.clone(), labels.clone()), epochs, 1e-3), epochs, f"40 sentences, epochs {epochs}, lr 1e-3")


@check(f"{A}.train_tagger.loss", "train_tagger")
def train_loss(ctx):
    """With lr = 0 and sentences of one length, each epoch's loss is the mean cross-entropy over the non-padding tokens."""
    vocab, tags = 15, 5
    model = _tagger(ctx, vocab, tags, 16, 2, 16)
    ids, labels = _toy_dataset(ctx, vocab, tags, sentences=96, lengths=[6], padded_to=9)
    expected = _batch_losses(ctx, model, ids, labels, tags, len(ids))[0]
    epochs = ctx.randrange(2, 4)
    inputs = f"96 sentences of 6 tokens padded to 9 (tag {data.IGNORE}), epochs {epochs}, lr 0"
    losses = _numbers(ctx, ctx.call("train_tagger", model, (ids.clone(), labels.clone()), epochs, 0.0), epochs, inputs)
    _each_epoch(ctx, losses, [expected], "each epoch's loss is the mean of the batch losses, each the mean cross-entropy over "
                "non-padding tokens", lambda e, loss: f"epoch {e} reported {loss:.6f}, expected {expected:.6f}", inputs)


def _each_epoch(ctx, losses, accepted, prop, detail, inputs):
    """Each epoch's reported loss is one of ``accepted``; else ``prop`` fails, ``detail(epoch, loss)`` saying how."""
    for e, loss in enumerate(losses):
        if not any(_close(loss, v) for v in accepted):
            ctx.fail(prop, detail(e + 1, loss), inputs)


@check(f"{A}.train_tagger.batch_size", "train_tagger")
def train_batch_size(ctx):
    """With lr = 0 and sentences of different lengths, the epoch loss of batch_size = S (one batch) and 1 (one per sentence)."""
    vocab, tags, S = 15, 5, 40
    model = _tagger(ctx, vocab, tags, 16, 2, 16)
    ids, labels = _toy_dataset(ctx, vocab, tags, sentences=S, lengths=[1, 2, 9, 3, 8], padded_to=9)
    per_sentence = _batch_losses(ctx, model, ids, labels, tags, 1)
    for batch_size, expected, what in [(S, _batch_losses(ctx, model, ids, labels, tags, S)[0], "one batch: the mean over all real tokens"),
                                       (1, sum(per_sentence) / S, "one sentence per batch: the mean of the sentences' mean losses")]:
        inputs = f"{S} sentences of 1 to 9 tokens padded to 9, epochs 1, lr 0, batch_size {batch_size}"
        losses = _numbers(ctx, ctx.call("train_tagger", model, (ids.clone(), labels.clone()), 1, 0.0, batch_size=batch_size), 1, inputs)
        if not _close(losses[0], expected):
            ctx.fail(f"batches of batch_size sentences ({what})", f"reported {losses[0]:.6f}, expected {expected:.6f}", inputs)
    _last_partial_batch(ctx, model, vocab, tags)


def _last_partial_batch(ctx, model, vocab, tags):
    """33 sentences, batch_size 32: 32 copies of one sentence (loss a each) and one other (loss b), lr = 0. Whatever
    the shuffle, an epoch that trains all 33 reports (a + b) / 2 or ((31 a + b) / 32 + a) / 2; one that drops the
    last, partial batch reports a or (31 a + b) / 32."""
    for _ in range(5):
        ids, labels = _toy_dataset(ctx, vocab, tags, sentences=2, lengths=[6], padded_to=9)
        a, b = (_batch_losses(ctx, model, ids[i : i + 1], labels[i : i + 1], tags, 1)[0] for i in (0, 1))
        if abs(a - b) > 0.05:
            break
    rows = torch.tensor([0] * 32 + [1], device=ids.device)
    valid = [(a + b) / 2, ((31 * a + b) / 32 + a) / 2]
    epochs = 3
    inputs = f"33 sentences (32 copies of one, one other) of 6 tokens padded to 9, epochs {epochs}, lr 0, batch_size 32"
    losses = _numbers(ctx, ctx.call("train_tagger", model, (ids[rows].clone(), labels[rows].clone()), epochs, 0.0, batch_size=32), epochs, inputs)
    _each_epoch(ctx, losses, valid, "every sentence is trained every epoch, the last, smaller batch included (33 sentences in "
                "batches of 32: a batch of 32 and a batch of 1)", lambda e, loss: f"epoch {e} reported {loss:.6f}; a mean over both "
                f"batches is {valid[0]:.6f} or {valid[1]:.6f} (depending on where the shuffle puts the other sentence), "
                f"dropping the last batch gives {a:.6f} or {(31 * a + b) / 32:.6f}", inputs)


@check(f"{A}.train_tagger.shuffles", "train_tagger")
def train_shuffles(ctx):
    """With lr = 0 and sentences of different lengths, the default batches of 32 give a different epoch loss for a different order."""
    vocab, tags, S = 15, 5, 48
    model = _tagger(ctx, vocab, tags, 16, 2, 16)
    ids, labels = _toy_dataset(ctx, vocab, tags, sentences=S, lengths=[1, 9, 2, 8, 5], padded_to=9)
    inputs = f"{S} sentences of 1 to 9 tokens, epochs 4, lr 0, default batch_size (32)"
    losses = _numbers(ctx, ctx.call("train_tagger", model, (ids.clone(), labels.clone()), 4, 0.0), 4, inputs)
    if max(losses) - min(losses) < 1e-7:
        ctx.fail("the sentences are shuffled again every epoch", f"all epochs report the same loss {losses[0]:.8f}: the batches never change", inputs)


@check(f"{A}.train_tagger.lr", "train_tagger")
def train_lr(ctx):
    """lr = 0 leaves every parameter as it was."""
    model = _tagger(ctx, 15, 5, 16, 2, 16)
    ids, labels = _toy_dataset(ctx, 15, 5, sentences=64, lengths=[6, 4], padded_to=9)
    before = _state(ctx, model)
    inputs = "64 sentences, epochs 2, lr 0"
    ctx.call("train_tagger", model, (ids.clone(), labels.clone()), 2, 0.0)
    after = _state(ctx, model)
    for k, v in before.items():
        if k not in after or not torch.equal(after[k], v):
            ctx.fail("the optimiser uses the given lr (lr = 0 leaves the model unchanged)", f"{k} changed", inputs)


@check(f"{A}.train_tagger.learns", "train_tagger")
def train_learns(ctx):
    """On a small generated training set the loss falls and the parameters change."""
    sentences = data.generate_sentences(64, seed=ctx.randrange(0, 10**6))
    ids, labels = (t.to(ctx.device) for t in data.encode(sentences))
    model = _tagger(ctx, len(data.VOCAB), len(data.TAGS), 16, 2, 32)
    before = _state(ctx, model)
    inputs = "64 generated sentences, epochs 20, lr 1e-2"
    losses = _numbers(ctx, ctx.call("train_tagger", model, (ids, labels), 20, 1e-2), 20, inputs)
    if not losses[-1] < 0.5 * losses[0]:  # the reference ends near 0.1 of its first epoch's loss; a model that learns slowly still halves it
        ctx.fail("training lowers the loss (zero_grad, backward, step every batch)", f"losses {[round(v, 3) for v in losses]}", inputs)
    after = _state(ctx, model)
    if all(torch.equal(after[k], v) for k, v in before.items() if k in after):
        ctx.fail("training updates the model's parameters in place", "no parameter changed", inputs)


@check(f"{A}.train_tagger.reproducible", "train_tagger")
def train_reproducible(ctx):
    """The same set_seed before building and training gives the same losses and weights."""
    sentences = data.generate_sentences(96, seed=ctx.randrange(0, 10**6))
    ids, labels = (t.to(ctx.device) for t in data.encode(sentences))
    seed = ctx.randrange(0, 1000)
    runs = []
    for _ in range(2):
        ctx.call("set_seed", seed)
        model = ctx.call("TinyTagger", len(data.VOCAB), len(data.TAGS), 16, 2, 32)
        ctx.method(model, "to", str(ctx.device))
        losses = _numbers(ctx, ctx.call("train_tagger", model, (ids, labels), 2, 1e-2, batch_size=8), 2, "96 sentences, epochs 2, lr 1e-2, batch_size 8")
        runs.append((losses, _state(ctx, model)))
    inputs = f"set_seed({seed}), TinyTagger({len(data.VOCAB)}, {len(data.TAGS)}, 16, 2, 32), 96 sentences, epochs 2, lr 1e-2, batch_size 8, twice"
    if runs[0][0] != runs[1][0]:
        ctx.fail("the same seed gives the same training run (shuffle with torch's or Python's seeded generator)",
                 f"losses {runs[0][0]} then {runs[1][0]}", inputs)
    for k, v in runs[0][1].items():
        if not torch.equal(v, runs[1][1].get(k, v + 1)):
            ctx.fail("the same seed gives the same trained model", f"{k} differs between the two runs", inputs)
