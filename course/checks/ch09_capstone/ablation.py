"""ch09_capstone: the checks of the ablation."""
import torch
import torch.nn as nn

from autograder.checking import check, describe

from ... import tagging_data as data
from ...capstone import ambiguous_accuracy
from .shared import LAYER_FORBIDDEN, A
from .graded_run import train_reference
from .tagger import _logits

# ---------------------------------------------------------------- the ablation
ABLATION_TRAIN, ABLATION_TEST, ABLATION_EPOCHS, ABLATION_LR = 300, 200, 2, 3e-3


def _outputs(ctx, model, ids, inputs):
    """The model's output on ids as a tensor, whatever its last dimension (that is make_variant.model's clause)."""
    got = ctx.method(model, "__call__", ids.clone())
    if type(got) is not torch.Tensor or tuple(got.shape[:2]) != tuple(ids.shape):
        ctx.fail("the variant maps (B, N) ids to (B, N, ...) logits", f"got {describe(got)}", inputs)
    return torch.Tensor.detach(got)


def _ablation_data(ctx, train_size=ABLATION_TRAIN, test_size=ABLATION_TEST):
    train, test = data.make_splits(train_size, test_size, seed=ctx.randrange(1, 10**5))
    return [tuple(t.to(ctx.device) for t in data.encode(part)) for part in (train, test)]


def _ablation(ctx, train, test, seed, epochs=ABLATION_EPOCHS):
    inputs = f"run_ablation(dataset of {len(train[0])} sentences, test_data of {len(test[0])}, epochs={epochs}, lr={ABLATION_LR}, seed={seed})"
    got = ctx.call("run_ablation", train, test, epochs, ABLATION_LR, seed=seed)
    if not isinstance(got, dict) or len(got) < 2 or any(type(k) is not str for k in got):
        ctx.fail("run_ablation returns a dict with one entry per variant (at least two, keyed by name)", f"got {describe(got)}", inputs)
    return got, inputs


def _names(ctx):
    """The student's variant names: the keys of a short run_ablation."""
    train, test = _ablation_data(ctx, 40, 20)
    return list(_ablation(ctx, train, test, 0, epochs=1)[0])


@check(f"{A}.make_variant.model", "make_variant", LAYER_FORBIDDEN)
def variant_model(ctx):
    """Each variant is a fresh tagger giving (B, N, len(TAGS)) logits."""
    for name in _names(ctx):
        model = ctx.call("make_variant", name)
        ctx.method(model, "to", str(ctx.device))
        ctx.method(model, "eval")
        ids = ctx.randint(1, len(data.VOCAB), (3, 9))
        _logits(ctx, model, ids, len(data.TAGS), f"make_variant({name!r}), ids {describe(ids)}")


@check(f"{A}.make_variant.differs", "make_variant", LAYER_FORBIDDEN)
def variant_differs(ctx):
    """After the same set_seed, two variants give different logits on the same sentences."""
    names = _names(ctx)
    ids = data.encode(data.generate_sentences(8, seed=ctx.randrange(0, 10**5)))[0].to(ctx.device)
    seed = ctx.randrange(0, 1000)
    outputs = []
    for name in names:
        ctx.call("set_seed", seed)
        model = ctx.call("make_variant", name)
        ctx.method(model, "to", str(ctx.device))
        ctx.method(model, "eval")
        outputs.append(_outputs(ctx, model, ids, f"make_variant({name!r}), ids {describe(ids)}"))
    for i in range(len(names)):
        for j in range(i):
            if outputs[i].shape == outputs[j].shape and torch.allclose(outputs[i], outputs[j], atol=1e-6):
                ctx.fail("the variants really differ (different logits after the same set_seed)",
                         f"make_variant({names[j]!r}) and make_variant({names[i]!r}) give the same logits", f"set_seed({seed}), ids {describe(ids)}")


@check(f"{A}.run_ablation.keys", "run_ablation", LAYER_FORBIDDEN)
def ablation_keys(ctx):
    """A dict with at least two entries keyed by variant name, values Python floats in [0, 1]."""
    train, test = _ablation_data(ctx)
    got, inputs = _ablation(ctx, train, test, ctx.randrange(0, 100))
    for name, value in got.items():
        if type(value) is not float or not 0.0 <= value <= 1.0:
            ctx.fail("every value is a Python float between 0 and 1 (an accuracy)", f"{name!r}: {describe(value)}", inputs)


@check(f"{A}.run_ablation.values", ("run_ablation", "make_variant", "train_tagger"), LAYER_FORBIDDEN)
def ablation_values(ctx):
    """Each value is the ambiguous-word accuracy of make_variant(name) built after set_seed(seed) and trained by train_tagger."""
    train, test = _ablation_data(ctx)
    seed = ctx.randrange(0, 100)
    got, inputs = _ablation(ctx, train, test, seed)
    tolerance = 1.5 / int(data.ambiguous_mask(test[0]).sum())  # about one word, for a GPU's non-deterministic sums
    for name in got:
        value = got[name]
        expected = None
        # trained with the student's train_tagger; or with the stated loop itself (the same numbers when train_tagger is right)
        for train_with_student in (True, False):
            ctx.call("set_seed", seed)
            model = ctx.call("make_variant", name)
            ctx.method(model, "to", str(ctx.device))
            if train_with_student:
                ctx.call("train_tagger", model, train, ABLATION_EPOCHS, ABLATION_LR)
            elif isinstance(model, nn.Module):  # in this process (the mutant tests): the reference loop, run here
                train_reference(model, *train, epochs=ABLATION_EPOCHS, lr=ABLATION_LR)
            else:
                break
            ctx.method(model, "eval")
            expected = ambiguous_accuracy(_outputs(ctx, model, test[0], inputs), test[0], test[1])
            if type(value) is float and abs(value - expected) <= tolerance:
                break
        if type(value) is not float or abs(value - expected) > tolerance:
            ctx.fail("each value is the accuracy on the ambiguous held-out words of make_variant(name), built right after set_seed(seed), "
                     "trained with train_tagger(model, dataset, epochs, lr)", f"{name!r}: got {describe(value)}, expected {expected:.6f}", inputs)


@check(f"{A}.run_ablation.reproducible", "run_ablation", LAYER_FORBIDDEN)
def ablation_reproducible(ctx):
    """Two calls with the same arguments give the same numbers."""
    train, test = _ablation_data(ctx, 150, 100)
    seed = ctx.randrange(0, 100)
    first, inputs = _ablation(ctx, train, test, seed)
    second, _ = _ablation(ctx, train, test, seed)
    if first != second:
        ctx.fail("the same arguments give the same numbers (seed inside run_ablation)", f"first call {first}, second call {second}", inputs)
