"""ch09_capstone: the checks of TinyTagger (a tagger that fails because its `position` or `attention`, the
student's PositionalEncoding and MultiHeadSelfAttention, is wrong on an input of the tagger's sizes is told
to fix that one first: ``_parts_blamed``)."""
import torch

from autograder.checking import check, describe, expect_tensor

from ... import tagging_data as data
from ..ch06_multi_head import closed_form_truth
from ..ground_truth import blame_helpers, dependency_fault
from .layers import _weights, sinusoid
from .shared import ATTENTION_FORBIDDEN, FORBIDDEN_LAYER_KINDS, LAYER_FORBIDDEN, A

# ---------------------------------------------------------------- TinyTagger
CONFIGS = [(20, 5, 16, 2, 10), (len(data.VOCAB), len(data.TAGS), 32, 4, 64), (30, 7, 24, 3, 20)]


def _tagger(ctx, vocab, tags, d_model, heads, max_len):
    model = ctx.call("TinyTagger", vocab, tags, d_model, heads, max_len)
    ctx.method(model, "to", str(ctx.device))
    ctx.method(model, "eval")
    return model


def _parts_blamed(ctx, model, d_model, heads):
    """On a failure inside the block, blame the tagger's `position` (x + pe[:N]) or `attention` (nn.MultiheadAttention
    with its own weights, without and with a key-padding mask) when it is wrong on an x of the tagger's d_model."""
    drawn = []  # the probe's x, drawn only when something failed (the check's own inputs stay those of its seed)

    def probe():
        if not drawn:
            drawn.append(ctx.randn(2, 7, d_model))
        return drawn[0], f"x {describe(drawn[0])} (the tagger's d_model)"

    def part(name):
        try:
            return ctx.attr(model, name)
        except AttributeError:
            return None

    def position():
        module = part("position")
        if module is None:
            return None
        x, what = probe()
        via = lambda t: ctx.method(module, "__call__", t)  # noqa: E731
        found = dependency_fault(ctx, "PositionalEncoding", (x,), x.double().cpu() + sinusoid(7, d_model), what, atol=1e-4,
                                 check_dtype=False, check_device=False, via=via)
        return found and (f"{A}.PositionalEncoding.forward", found)

    def attention():
        module = part("attention")
        if module is None:
            return None
        x, what = probe()
        params = _weights(ctx, module, d_model)
        padding = torch.tensor([[True] * 7, [True] * 4 + [False] * 3], device=ctx.device)[:, None, None, :]  # (B, 1, 1, N)
        for mask, clause, shown in ((None, "values", what), (padding, "mask", f"{what} and a key-padding mask (B, 1, 1, N)")):
            via = (lambda t: ctx.method(module, "__call__", t, return_weights=True)) if mask is None else \
                (lambda t, m=mask: ctx.method(module, "__call__", t, mask=m.clone(), return_weights=True))
            truth = tuple(t.to(ctx.device, x.dtype) for t in closed_form_truth(params, x, heads, mask))
            found = dependency_fault(ctx, "MultiHeadSelfAttention", (x,), truth, shown, via=via)
            if found:
                return f"{A}.MultiHeadSelfAttention.{clause}", found
        return None

    return blame_helpers(ctx, "TinyTagger", [("PositionalEncoding", position), ("MultiHeadSelfAttention", attention)])


def _logits(ctx, model, ids, num_tags, inputs):
    got = ctx.method(model, "__call__", ids.clone())
    if type(got) is not torch.Tensor or tuple(got.shape) != (*ids.shape, num_tags):
        ctx.fail("logits of shape (B, N, num_tags)", f"got {describe(got)}", inputs)
    if not got.is_floating_point() or got.device.type != ctx.device.type:
        ctx.fail("float logits on the device of the ids", f"got {got.dtype} on {got.device}", inputs)
    if not bool(torch.isfinite(got).all()):
        ctx.fail("finite logits", "the logits contain NaN or inf", inputs)
    return torch.Tensor.detach(got)


def _state(ctx, model):
    return {k: torch.Tensor.detach(v).clone() for k, v in ctx.method(model, "state_dict").items()}


def _perturbed_logits_change(ctx, model, key, ids, num_tags, inputs, prop):
    """Add noise to the state_dict entry `key`, load it back: the logits must change (then restore)."""
    state = _state(ctx, model)
    if key not in state:
        ctx.fail(prop, f"the model's state_dict has no entry {key!r} (its entries: {', '.join(list(state)[:12])})", inputs)
    before = _logits(ctx, model, ids, num_tags, inputs)
    noisy = dict(state)
    noisy[key] = state[key] + torch.randn(state[key].shape, generator=ctx.gen, dtype=torch.float64).to(state[key].device, state[key].dtype)
    ctx.method(model, "load_state_dict", noisy)
    after = _logits(ctx, model, ids, num_tags, inputs)
    ctx.method(model, "load_state_dict", state)
    if float((after - before).abs().max()) < 1e-6:
        ctx.fail(prop, f"adding noise to {key} left every logit unchanged: it is not on the forward path", inputs)


@check(f"{A}.TinyTagger.shapes", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_shapes(ctx):
    """(B, N) ids give finite float (B, N, num_tags) logits on the ids' device for N = 1 up to max_len, also with the default sizes."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        for B, N in [(2, 5), (1, 1), (3, max_len)]:
            ids = ctx.randint(1, vocab, (B, N))
            with _parts_blamed(ctx, model, d_model, heads):
                _logits(ctx, model, ids, tags, f"ids {describe(ids)}, TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})")
    model = ctx.call("TinyTagger", 11, 4)
    ctx.method(model, "to", str(ctx.device))
    ctx.method(model, "eval")
    _logits(ctx, model, ctx.randint(1, 11, (2, 7)), 4, "ids (2, 7), TinyTagger(11, 4) with the default d_model, num_heads, max_len")
    _logits(ctx, model, ctx.randint(1, 11, (1, 64)), 4, "ids (1, 64), TinyTagger(11, 4): the default max_len is 64")


@check(f"{A}.TinyTagger.logits", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_raw_logits(ctx):
    """forward returns raw logits, not probabilities."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        ids = ctx.randint(1, vocab, (3, 6))
        inputs = f"ids {describe(ids)}, TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        logits = _logits(ctx, model, ids, tags, inputs)
        sums = logits.sum(-1)
        if bool((logits >= 0).all()) and torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            ctx.fail("forward returns raw logits (cross_entropy applies the softmax)", "every row is a probability distribution", inputs)


@check(f"{A}.TinyTagger.batch", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_batch(ctx):
    """A sentence's logits do not depend on the rest of the batch."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        ids = ctx.randint(1, vocab, (3, 8))
        ids[2, 5:] = data.PAD_ID  # sentences of 8, 8 and 5 words, the last one padded
        inputs = f"ids {describe(ids)} (the last sentence padded from 5 to 8), TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        with _parts_blamed(ctx, model, d_model, heads):
            together = _logits(ctx, model, ids, tags, inputs)
            expect_tensor(ctx, _logits(ctx, model, ids[2:3], tags, inputs), together[2:3], "a sentence's logits do not depend on the rest of the batch",
                          inputs, atol=1e-4)


@check(f"{A}.TinyTagger.context", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_context(ctx):
    """Changing one word changes the other words' logits."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        inputs = f"TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        ids = ctx.randint(1, vocab, (1, 9))
        changed = ids.clone()
        changed[0, 1] = 1 + (int(ids[0, 1]) % (vocab - 1))  # another word at position 1
        first, second = _logits(ctx, model, ids, tags, inputs), _logits(ctx, model, changed, tags, inputs)
        if float((first[0, 0] - second[0, 0]).abs().max()) < 1e-6:
            ctx.fail("each word's logits depend on the other words (attention mixes in the context)",
                     "changing word 1 left the logits of word 0 unchanged", f"ids {ids[0].tolist()}, {inputs}")


@check(f"{A}.TinyTagger.padding", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_padding(ctx):
    """Padding (id 0 at the end) does not change the logits of the real tokens."""
    for vocab, tags, d_model, heads, max_len in CONFIGS[:2]:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        N, extra = ctx.randrange(2, 7), ctx.randrange(1, 5)
        ids = ctx.randint(1, vocab, (2, N))
        padded = torch.cat([ids, torch.zeros(2, extra, dtype=torch.long, device=ctx.device)], dim=1)
        inputs = f"ids {describe(ids)} padded with {extra} zeros, TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        with _parts_blamed(ctx, model, d_model, heads):
            expect_tensor(ctx, _logits(ctx, model, padded, tags, inputs)[:, :N], _logits(ctx, model, ids, tags, inputs),
                          "padding keys are masked: the real tokens' logits do not change", inputs, atol=1e-4)


@check(f"{A}.TinyTagger.attention_path", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_attention_path(ctx):
    """`attention` is the student's MultiHeadSelfAttention and perturbing attention.out_proj changes the logits."""
    _logits_go_through(ctx, "attention", "MultiHeadSelfAttention", "attention.out_proj.weight",
                       "the logits are computed through `attention` (perturbing attention.out_proj changes them)")


def _logits_go_through(ctx, part, cls_name, perturbed, prop):
    """``model.<part>`` is the student's ``cls_name``, and perturbing ``perturbed`` changes the logits."""
    for vocab, tags, d_model, heads, max_len in CONFIGS[:2]:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        inputs = f"TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
        kind = _type_name(_part(ctx, model, part, f"your {cls_name}", inputs))
        if kind.rsplit(".", 1)[-1] != cls_name:
            ctx.fail(f"the tagger's `{part}` is your {cls_name}", f"model.{part} is a {kind}", inputs)
        ids = ctx.randint(1, vocab, (2, 7))
        _perturbed_logits_change(ctx, model, perturbed, ids, tags, f"ids {describe(ids)}, {inputs}", prop)


def _part(ctx, model, name, what, inputs):
    try:
        return ctx.attr(model, name)
    except AttributeError:
        ctx.fail(f"the tagger's `{name}` is {what}", f"the model has no attribute {name!r}", inputs)


def _type_name(obj) -> str:
    name = getattr(obj, "type_name", None)  # a student object in the sandboxed kernel: its qualified type name
    return name if isinstance(name, str) else f"{type(obj).__module__}.{type(obj).__qualname__}"


def _module_tree(ctx, model, depth=8):
    """(path, qualified type name) of every submodule, read through ctx.attr."""
    found, todo = [], [("model", model, 0)]
    while todo and len(found) < 500:
        path, module, level = todo.pop()
        children = ctx.attr(module, "_modules")
        if not isinstance(children, dict) or level >= depth:
            continue
        for name, child in children.items():
            if child is not None:
                found.append((f"{path}.{name}", _type_name(child)))
                todo.append((f"{path}.{name}", child, level + 1))
    return found


@check(f"{A}.TinyTagger.layers", "TinyTagger", LAYER_FORBIDDEN)
def tagger_layers(ctx):
    """No convolution or recurrent layer anywhere in the tagger (module tree, and F.conv* during forward)."""
    model = _tagger(ctx, len(data.VOCAB), len(data.TAGS), 32, 4, 64)
    inputs = f"TinyTagger({len(data.VOCAB)}, {len(data.TAGS)})"
    for path, kind in _module_tree(ctx, model):
        short = kind.rsplit(".", 1)[-1]
        if any(word in short for word in FORBIDDEN_LAYER_KINDS):
            ctx.fail("the tagger has no convolution or recurrent layer (attention must do the mixing)", f"{path} is a {kind}", inputs)
    _logits(ctx, model, ctx.randint(1, len(data.VOCAB), (2, 9)), len(data.TAGS), inputs)  # F.conv* inside forward trips the forbidden-call check


@check(f"{A}.TinyTagger.encoding_path", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_encoding_path(ctx):
    """`position` is the student's PositionalEncoding and perturbing position.pe changes the logits."""
    _logits_go_through(ctx, "position", "PositionalEncoding", "position.pe",
                       "word positions reach the logits through `position` (perturbing position.pe changes them)")


@check(f"{A}.TinyTagger.positions", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_positions(ctx):
    """A repeated word differs by position; shuffling changes the logits, not only their order."""
    for vocab, tags, d_model, heads, max_len in CONFIGS:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        inputs = f"TinyTagger({vocab}, {tags}, {d_model}, {heads}, {max_len})"
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


@check(f"{A}.TinyTagger.max_len", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_max_len(ctx):
    """A sentence longer than max_len raises ValueError (position is PositionalEncoding(d_model, max_len))."""
    for vocab, tags, d_model, heads, max_len in [(20, 5, 16, 2, 10), (30, 7, 24, 3, ctx.randrange(4, 30))]:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        for extra in (1, ctx.randrange(2, 9)):
            ids = torch.randint(1, vocab, (2, max_len + extra), generator=ctx.gen).to(ctx.device)
            ctx.expect_raises_method(ValueError, f"a sentence of {max_len + extra} tokens > max_len = {max_len} is refused with ValueError "
                                     "(build position = PositionalEncoding(d_model, max_len) with the tagger's max_len)",
                                     model, "__call__", ids)


def _norm_silenced_logits(ctx, model, norm, ids, num_tags, inputs):
    """The logits (float64, CPU) with ``norm``'s scale set to 0 and its shift to a random vector, then the state
    restored: a post-norm block makes that norm's output the same vector for every token."""
    state = _state(ctx, model)
    for key in (f"{norm}.weight", f"{norm}.bias"):
        if key not in state:
            ctx.fail(f"the tagger has `{norm} = nn.LayerNorm(d_model)`", f"its state_dict has no {key!r}", inputs)
    changed = dict(state)
    changed[f"{norm}.weight"] = torch.zeros_like(state[f"{norm}.weight"])
    shift = torch.randn(state[f"{norm}.bias"].shape, generator=ctx.gen, dtype=torch.float64)
    changed[f"{norm}.bias"] = shift.to(state[f"{norm}.bias"].device, state[f"{norm}.bias"].dtype)
    ctx.method(model, "load_state_dict", changed)
    logits = _logits(ctx, model, ids, num_tags, inputs)
    ctx.method(model, "load_state_dict", state)
    return logits.double().cpu()


@check(f"{A}.TinyTagger.post_norm", "TinyTagger", ATTENTION_FORBIDDEN)
def tagger_post_norm(ctx):
    """Post-norm: with norm1's (or norm2's) scale 0, every token leaves that norm as the same vector, and everything
    after it works per token, so every logit row is the same. A pre-norm block adds x back after the norm."""
    for vocab, tags, d_model, heads, max_len in CONFIGS[:2]:
        model = _tagger(ctx, vocab, tags, d_model, heads, max_len)
        ids = torch.randint(1, vocab, (3, 7), generator=ctx.gen).to(ctx.device)
        inputs = f"TinyTagger({vocab}, {tags}, d_model={d_model}, num_heads={heads}), ids {describe(ids)}"
        prop = ("the block is post-norm, as specified: h = norm1(x + attention(x)), logits = classifier(norm2(h + feed_forward(h))) "
                "(a pre-norm block, x + attention(norm1(x)), adds x back after the norm)")
        logits = _norm_silenced_logits(ctx, model, "norm1", ids, tags, inputs)
        spread = float((logits - logits[:1, :1]).abs().max())
        if spread > 1e-4:
            ctx.fail(prop, f"with norm1's scale set to 0 (its output the same vector for every token) the tokens' logits still differ "
                     f"by up to {spread:.4g}: something after norm1 still sees the token (x added back after the norm?)", inputs)
        logits = _norm_silenced_logits(ctx, model, "norm2", ids, tags, inputs)
        spread = float((logits - logits[:1, :1]).abs().max())
        if spread > 1e-4:
            ctx.fail(prop, f"with norm2's scale set to 0 (its output the same vector for every token) the tokens' logits still differ "
                     f"by up to {spread:.4g}: norm2 is not the last step before the classifier (h added back after it?)", inputs)
