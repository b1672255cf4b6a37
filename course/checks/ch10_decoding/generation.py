"""ch10_decoding: the checks of greedy_generate."""
import torch

from autograder.checking import check, describe, expect_tensor

from ..ground_truth import float64_ok
from .shared import A, _tensor_or_fail


# ---------------------------------------------------------------- greedy_generate
def _model(ctx, vocab, d, dtype):
    """The notebook's given PrefixMeanLM(vocab, d) on the device, holding grader weights: (model, weights)."""
    model = ctx.call("PrefixMeanLM", vocab, d)
    model = ctx.method(model, "to", str(ctx.device))
    if dtype == torch.float64:
        model = ctx.method(model, "double")
    weights = {"embed.weight": ctx.randn(vocab, d, dtype=torch.float64).cpu(),
               "head.weight": ctx.randn(vocab, 2 * d, dtype=torch.float64).cpu() * 2.0,
               "head.bias": ctx.randn(vocab, dtype=torch.float64).cpu()}
    for path, value in weights.items():
        target = ctx.attr(model, path)
        if not isinstance(target, torch.Tensor) or tuple(target.shape) != tuple(value.shape):
            ctx.fail("the given PrefixMeanLM is unchanged", f"{path} is {describe(target) if isinstance(target, torch.Tensor) else type(target).__name__}", f"PrefixMeanLM({vocab}, {d})")
        with torch.no_grad():
            ctx.method(target, "copy_", value.to(ctx.device, target.dtype))
    return model, weights


def _prefix_mean_logits(weights, ids):
    """PrefixMeanLM's logits at the last position of ids (B, T), written out: head([mean of the embeddings ; last embedding])."""
    e = weights["embed.weight"][ids.cpu()]  # (B, T, d)
    features = torch.cat([e.mean(dim=1), e[:, -1]], dim=-1)  # (B, 2d)
    return features @ weights["head.weight"].T + weights["head.bias"]  # (B, vocab)


def _greedy_truth(weights, prompt, steps):
    ids = prompt.cpu()
    for _ in range(steps):
        ids = torch.cat([ids, _prefix_mean_logits(weights, ids).argmax(dim=-1, keepdim=True)], dim=1)
    return ids


GREEDY_CASES = [(1, 3, 6), (2, 1, 5), (3, 4, 1), (2, 2, 0), (1, 6, 9)]  # (B, T, max_new_tokens)


def _generate(ctx, model, prompt, steps, inputs):
    got = ctx.call("greedy_generate", model, prompt.clone(), steps)
    return _tensor_or_fail(ctx, got, "greedy_generate returns a tensor of token ids", inputs)


@check(f"{A}.greedy_generate.values", "greedy_generate")
def greedy_values(ctx):
    """The prompt then greedy tokens, as re-running the model on the whole prefix at every step."""
    dtype = torch.float64 if float64_ok(ctx) else torch.float32
    for B, T, steps in GREEDY_CASES:
        vocab, d = ctx.randrange(5, 13), ctx.randrange(3, 9)
        model, weights = _model(ctx, vocab, d, dtype)
        prompt = ctx.randint(0, vocab, (B, T))
        inputs = f"PrefixMeanLM({vocab}, {d}) with the grader's weights, prompt_ids {describe(prompt)}, max_new_tokens {steps}"
        got = _generate(ctx, model, prompt, steps, inputs)
        expect_tensor(ctx, got, _greedy_truth(weights, prompt, steps).to(prompt.device),
                      "the prompt followed by the argmax of the last position's logits, re-computed on the whole prefix at every step", inputs)


@check(f"{A}.greedy_generate.cache", "greedy_generate")
def greedy_cache(ctx):
    """The model sees the prompt once (cache=None), then single tokens with a cache; at most max_new_tokens + 1 calls."""
    for B, T, steps in GREEDY_CASES:
        model, _ = _model(ctx, 7, 4, torch.float32)
        prompt = ctx.randint(0, 7, (B, T))
        inputs = f"prompt_ids {describe(prompt)}, max_new_tokens {steps}"
        _generate(ctx, model, prompt, steps, inputs)
        calls = ctx.attr(model, "calls")
        if type(calls) is not list:
            ctx.fail("the given PrefixMeanLM records its calls", f"model.calls is {type(calls).__name__}", inputs)
        calls = [tuple(c) if isinstance(c, (list, tuple)) else c for c in calls]
        shown = ", ".join(f"({n} ids, {'a cache' if c else 'no cache'})" for n, c in calls[:8]) + (" ..." if len(calls) > 8 else "")
        if steps and (not calls or calls[0] != (T, False)):
            ctx.fail("the first call feeds the whole prompt with cache=None", f"the model was called with {shown or 'nothing'}", inputs)
        if any(c != (1, True) for c in calls[1:]):
            ctx.fail("after the prompt, every call feeds one new token (B, 1) with the cache the previous call returned",
                     f"the model was called with {shown}", inputs)
        if len(calls) > steps + 1:
            ctx.fail(f"at most max_new_tokens + 1 = {steps + 1} calls of the model", f"{len(calls)} calls: {shown}", inputs)
