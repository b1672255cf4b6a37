"""Hidden checks for 10-decoding.

Ground truths, all computed here in float64 on the CPU from the grader's own inputs and weights:

* ``causal_mask``: index arithmetic (``j <= i``).
* ``CausalSelfAttention``: ``torch.nn.MultiheadAttention`` with a causal ``attn_mask``, holding the
  weights the grader copied into the student's module. Grouped-query attention is checked as the
  multi-head layer whose key and value projections repeat each key/value head's rows for the
  ``num_heads // num_kv_heads`` query heads that share it (query head h reads key/value head
  ``h // group``), so the truth never runs a grouped-query code path of its own. Caches are the
  projections ``x W_k^T + b_k`` split into key/value heads.
* ``blockwise_attention``: ``F.scaled_dot_product_attention`` with an explicit boolean mask (the
  student may not call it). Whether the answer formed the ``(..., Nq, Nk)`` score matrix is read
  from the recorder that watches graded calls with forbidden routines: it keeps the size of the
  largest floating-point tensor a call created (``ctx.largest_created``), which the student's
  code cannot see or change.
* ``greedy_generate``: the given ``PrefixMeanLM`` of the notebook, its logits written out here
  as a closed form (the mean embedding of the prefix and the last token's embedding through the
  head), on the whole prefix at every step; its call log says how the student fed it.
"""
import math

import torch
import torch.nn.functional as F

from autograder.checking import Clause, check, describe, expect_tensor
from .ch06_multi_head import set_weights, torch_truth
from .ground_truth import cpu64, float64_ok

A = ASSIGNMENT = "10"
CONTRACT = ["causal_mask", "CausalSelfAttention", "blockwise_attention", "greedy_generate"]

SOFTMAX_FORBIDDEN = (
    "torch.softmax", "torch.nn.functional.softmax", "torch.nn.Softmax", "torch.Tensor.softmax", "torch.special.softmax",
    "torch.log_softmax", "torch.nn.functional.log_softmax", "torch.nn.LogSoftmax", "torch.Tensor.log_softmax",
    "torch.special.log_softmax",
)
LAYER_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
)
CSA_FORBIDDEN = LAYER_FORBIDDEN
# Leaving PyTorch would hide the scores from the recorder that grades the memory clause.
BLOCKWISE_FORBIDDEN = LAYER_FORBIDDEN + SOFTMAX_FORBIDDEN + ("torch.Tensor.numpy",)

CLAUSES = [
    Clause(f"{A}.causal_mask.values", "causal_mask",
           "`causal_mask(n)` returns a `torch.bool` tensor of shape `(n, n)` that is `True` at `[i, j]` exactly when `j <= i`, for every `n >= 1`."),
    Clause(f"{A}.causal_mask.device", "causal_mask",
           "`causal_mask(n, device)` (by position or keyword) returns the mask on that device; without it, on the CPU."),
    Clause(f"{A}.CausalSelfAttention.parameters", "CausalSelfAttention",
           "`CausalSelfAttention(d_model, num_heads, num_kv_heads=None)` has `q_proj` and `out_proj` = `nn.Linear(d_model, d_model)`, "
           "`k_proj` and `v_proj` = `nn.Linear(d_model, num_kv_heads * d_model // num_heads)` (`num_kv_heads` defaults to `num_heads`), "
           "each with a bias, and nothing else in its `state_dict()`."),
    Clause(f"{A}.CausalSelfAttention.errors", "CausalSelfAttention",
           "the constructor raises `ValueError` when `num_heads` does not divide `d_model` or `num_kv_heads` does not divide `num_heads`."),
    Clause(f"{A}.CausalSelfAttention.values", "CausalSelfAttention",
           "with `num_kv_heads = num_heads` and weights the grader copies into its four projections, `forward(x)` returns a pair "
           "`(output, cache)` whose output `(B, N, d_model)` is multi-head attention in which position `i` attends to positions "
           "`j <= i` only, scaled by $1/\\sqrt{d_{head}}$, as `nn.MultiheadAttention` with the causal mask holding the same weights."),
    Clause(f"{A}.CausalSelfAttention.gqa", "CausalSelfAttention",
           "with `num_kv_heads < num_heads` (1 included: multi-query), query head `h` uses key/value head `h // (num_heads // num_kv_heads)`."),
    Clause(f"{A}.CausalSelfAttention.cache", "CausalSelfAttention",
           "the returned `cache` is a tuple `(k, v)` of two tensors of shape `(B, num_kv_heads, T, d_head)`: `k_proj(x)` and `v_proj(x)` "
           "of all `T` positions so far, split into key/value heads (head `g` holds features `g*d_head:(g+1)*d_head`), in order."),
    Clause(f"{A}.CausalSelfAttention.continue", "CausalSelfAttention",
           "`forward(x, cache=cache)` continues the sequence: its positions attend to every cached position and causally among themselves, "
           "so feeding a sequence in one call or in any split into chunks (each call given the cache the previous call returned) gives "
           "the same outputs."),
    Clause(f"{A}.CausalSelfAttention.dtype", "CausalSelfAttention",
           "after `.double()`, a float64 `x` gives a float64 output and a float64 cache (the module also works in float32)."),
    Clause(f"{A}.CausalSelfAttention.unchanged", "CausalSelfAttention",
           "`forward` leaves `x` and the tensors of a given `cache` unchanged (values and shapes)."),
    Clause(f"{A}.blockwise_attention.values", "blockwise_attention",
           "`blockwise_attention(Q, K, V, block_size)` for `Q (..., Nq, D)`, `K (..., Nk, D)`, `V (..., Nk, Dv)` equals "
           "$\\operatorname{softmax}(Q K^\\top / \\sqrt{D})\\, V$, shape `(..., Nq, Dv)`, for any leading dimensions, `Nq != Nk`, "
           "`Dv != D`, and every `block_size` from 1 to more than `Nk` (also when `block_size` does not divide `Nk`); `causal` defaults to `False`."),
    Clause(f"{A}.blockwise_attention.causal", "blockwise_attention",
           "with `causal=True` and `Nq <= Nk`, query `i` is position `Nk - Nq + i` of the keys and attends to keys "
           "`j <= Nk - Nq + i` only (with `Nq = Nk`: the causal mask)."),
    Clause(f"{A}.blockwise_attention.stability", "blockwise_attention",
           "exact, without `NaN` or `inf`, for scores around 1000 whose maximum grows by hundreds from one key block to the next."),
    Clause(f"{A}.blockwise_attention.memory", "blockwise_attention",
           "it never creates a floating-point tensor with more elements than the largest of `Q`, `K`, `V`, the output and one "
           "block's products `(..., Nq, block_size, max(D, Dv))`: the `(..., Nq, Nk)` scores are never formed, causal or not "
           "(the grader records the size of every tensor the call creates, for `Nk` much larger than `block_size`)."),
    Clause(f"{A}.blockwise_attention.dtype", "blockwise_attention", "float64 inputs give a float64 result (float32 stays float32)."),
    Clause(f"{A}.blockwise_attention.device", "blockwise_attention", "the result is on the device of `Q`."),
    Clause(f"{A}.blockwise_attention.unchanged", "blockwise_attention", "`Q`, `K` and `V` are left unchanged."),
    Clause(f"{A}.greedy_generate.values", "greedy_generate",
           "`greedy_generate(model, prompt_ids, max_new_tokens)` returns an int64 tensor `(B, T + max_new_tokens)` on the device of "
           "`prompt_ids (B, T)`: the prompt, then the token ids obtained by appending, `max_new_tokens` times, the argmax of the "
           "model's last-position logits for the whole sequence so far (also for `max_new_tokens = 0`), checked with the given "
           "`PrefixMeanLM` holding the grader's weights."),
    Clause(f"{A}.greedy_generate.cache", "greedy_generate",
           "the model is called first on the whole prompt with `cache=None`, then only on one new token at a time (ids of shape "
           "`(B, 1)`) with a cache, and at most `max_new_tokens + 1` times in all."),
]


def _tensor_or_fail(ctx, value, prop: str, inputs: str) -> torch.Tensor:
    if type(value) is not torch.Tensor:
        ctx.fail(prop, f"expected a torch.Tensor, got {type(value).__name__}", inputs)
    return value


# ---------------------------------------------------------------- causal_mask
def _mask_truth(n: int) -> torch.Tensor:
    i = torch.arange(n)
    return i[None, :] <= i[:, None]  # [i, j] = j <= i


@check(f"{A}.causal_mask.values", "causal_mask")
def causal_mask_values(ctx):
    """(n, n) bool, True iff j <= i, for n = 1, small and larger n."""
    for n in [1, 2, 5, ctx.randrange(3, 12), ctx.randrange(20, 70)]:
        got = ctx.call("causal_mask", n)
        expect_tensor(ctx, got, _mask_truth(n), "causal_mask(n) is a bool (n, n) tensor, True exactly where j <= i", f"n = {n}", check_device=False)


@check(f"{A}.causal_mask.device", "causal_mask")
def causal_mask_device(ctx):
    """On the requested device (meta stands in for a GPU), by position and keyword; CPU by default."""
    n = ctx.randrange(2, 9)
    for args, kwargs, want in (((n,), {}, "cpu"), ((n, torch.device("meta")), {}, "meta"), ((n,), {"device": "meta"}, "meta"),
                               ((n,), {"device": ctx.device}, ctx.device.type)):
        got = _tensor_or_fail(ctx, ctx.call("causal_mask", *args, **kwargs), "causal_mask returns a tensor", f"n = {n}")
        shown = ", ".join([str(n)] + [f"{a}" for a in args[1:]] + [f"device={v}" for v in kwargs.values()])
        if got.device.type != want:
            ctx.fail(f"causal_mask({shown}) is on {want}", f"got a tensor on {got.device}: create it with device=device", f"n = {n}")


# ---------------------------------------------------------------- CausalSelfAttention
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")


def _shapes(d_model, num_heads, num_kv_heads):
    kv = num_kv_heads * (d_model // num_heads)
    return {"q_proj": (d_model, d_model), "k_proj": (kv, d_model), "v_proj": (kv, d_model), "out_proj": (d_model, d_model)}


def _describe_layer(d_model, num_heads, num_kv_heads):
    return f"CausalSelfAttention(d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads})"


def _layer(ctx, d_model, num_heads, num_kv_heads, dtype=torch.float32):
    """The student's module on the device with the grader's weights; returns (module, params)."""
    module = ctx.call("CausalSelfAttention", d_model, num_heads, num_kv_heads)
    module = ctx.method(module, "to", str(ctx.device))
    if dtype == torch.float64:
        module = ctx.method(module, "double")
    params = {name: (ctx.randn(*shape, dtype=torch.float64).cpu() / math.sqrt(d_model), ctx.randn(shape[0], dtype=torch.float64).cpu() * 0.5)
              for name, shape in _shapes(d_model, num_heads, num_kv_heads).items()}
    set_weights(ctx, module, params, _describe_layer(d_model, num_heads, num_kv_heads))
    return module, params


def _mha_params(params, num_heads, num_kv_heads):
    """The multi-head layer equal to a grouped-query one: each key/value head's rows repeated for its group."""
    group = num_heads // num_kv_heads
    d_head = params["q_proj"][0].shape[0] // num_heads
    out = dict(params)
    for name in ("k_proj", "v_proj"):
        w, b = params[name]
        rows = torch.arange(num_heads * d_head)
        source = (rows // d_head) // group * d_head + rows % d_head  # query head h reads key/value head h // group
        out[name] = (w[source], b[source])
    return out


def _causal_truth(params, x, num_heads, num_kv_heads):
    """The causal output of the whole sequence x, float64 on the CPU."""
    mask = _mask_truth(x.shape[1])
    out, _ = torch_truth(_mha_params(params, num_heads, num_kv_heads), x, num_heads, mask)
    return out


def _cache_truth(params, x, num_heads, num_kv_heads):
    """(k, v) of every position of x: (B, num_kv_heads, T, d_head), float64 on the CPU."""
    B, T, D = x.shape
    d_head = D // num_heads
    x64 = cpu64(x)
    return tuple((x64 @ params[n][0].T + params[n][1]).reshape(B, T, num_kv_heads, d_head).transpose(1, 2) for n in ("k_proj", "v_proj"))


def _forward(ctx, module, x, inputs, cache=None):
    """The student's forward(x[, cache=...]) as (output, (k, v)), after checking the returned structure."""
    got = ctx.method(module, "__call__", x.clone()) if cache is None else ctx.method(module, "__call__", x.clone(), cache=cache)
    if not isinstance(got, tuple) or len(got) != 2:
        ctx.fail("forward returns the pair (output, cache)", f"got {describe(got) if isinstance(got, tuple) else type(got).__name__}", inputs)
    out, new_cache = got
    if type(out) is not torch.Tensor or tuple(out.shape) != tuple(x.shape):
        ctx.fail("the output has the shape of x, (B, N, d_model)", f"got {describe(out) if isinstance(out, torch.Tensor) else type(out).__name__}", inputs)
    if not isinstance(new_cache, tuple) or len(new_cache) != 2 or any(type(t) is not torch.Tensor for t in new_cache):
        ctx.fail("the cache is a tuple (k, v) of two tensors", f"got {describe(new_cache) if isinstance(new_cache, (tuple, list)) else type(new_cache).__name__}", inputs)
    return out, new_cache


def _x(ctx, B, N, D, dtype=torch.float32):
    return ctx.randn(B, N, D, dtype=dtype, scale=2.0)


def _inputs(x, num_heads, num_kv_heads, note=""):
    return f"{_describe_layer(x.shape[-1], num_heads, num_kv_heads)}, x {describe(x)}" + (f", {note}" if note else "")


MHA_CONFIGS = [(8, 2, 5, 1), (12, 3, 4, 2), (16, 4, 1, 1), (6, 1, 3, 2), (8, 8, 6, 1), (32, 4, 7, 1)]  # (D, H, N, B)
GQA_CONFIGS = [(8, 4, 2, 5, 2), (12, 6, 3, 4, 1), (16, 4, 1, 6, 1), (24, 6, 2, 7, 2), (8, 2, 1, 3, 1), (16, 8, 4, 5, 1)]  # (D, H, KV, N, B)


@check(f"{A}.CausalSelfAttention.parameters", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_parameters(ctx):
    """state_dict holds exactly the four projections' weights and biases, k/v sized for num_kv_heads."""
    for d_model, h, kv in [(8, 2, None), (12, 4, 2), (16, 4, 1), (6, 3, 3), (24, 6, None)]:
        module = ctx.call("CausalSelfAttention", d_model, h) if kv is None else ctx.call("CausalSelfAttention", d_model, h, kv)
        inputs = _describe_layer(d_model, h, kv)
        state = ctx.method(module, "state_dict")
        if not isinstance(state, dict):
            ctx.fail("state_dict() is a dict of tensors", f"got {type(state).__name__}", inputs)
        expected = {}
        for name, shape in _shapes(d_model, h, kv or h).items():
            expected[f"{name}.weight"], expected[f"{name}.bias"] = shape, shape[:1]
        got = {k: tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__ for k, v in state.items()}
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        if missing or extra:
            ctx.fail("the state_dict holds exactly q_proj, k_proj, v_proj and out_proj (weight and bias each)", f"missing {missing}, unexpected {extra}", inputs)
        for k, shape in expected.items():
            if got[k] != shape:
                ctx.fail(f"{k} has shape {shape}", f"got {got[k]}", inputs)


@check(f"{A}.CausalSelfAttention.errors", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_errors(ctx):
    """ValueError when num_heads does not divide d_model, or num_kv_heads does not divide num_heads."""
    for d_model, h, kv in [(10, 4, None), (8, 4, 3), (12, 4, 8), (12, 6, 4), (9, 2, 1)]:
        args = (d_model, h) if kv is None else (d_model, h, kv)
        ctx.expect_raises(ValueError, f"ValueError for {_describe_layer(d_model, h, kv)}", "CausalSelfAttention", *args)


@check(f"{A}.CausalSelfAttention.values", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_values(ctx):
    """forward(x) with num_kv_heads = num_heads equals nn.MultiheadAttention with the causal mask."""
    for d_model, h, N, B in MHA_CONFIGS:
        module, params = _layer(ctx, d_model, h, h)
        x = _x(ctx, B, N, d_model)
        inputs = _inputs(x, h, h)
        out, _ = _forward(ctx, module, x, inputs)
        expected = _causal_truth(params, x, h, h)
        expect_tensor(ctx, out, expected.to(x.device, x.dtype), "the output is causal multi-head attention (position i attends to j <= i), "
                      "as nn.MultiheadAttention with the causal mask", inputs, atol=1e-4)


@check(f"{A}.CausalSelfAttention.gqa", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_gqa(ctx):
    """Grouped-query and multi-query attention: query head h reads key/value head h // (num_heads // num_kv_heads)."""
    for d_model, h, kv, N, B in GQA_CONFIGS:
        module, params = _layer(ctx, d_model, h, kv)
        x = _x(ctx, B, N, d_model)
        inputs = _inputs(x, h, kv)
        out, _ = _forward(ctx, module, x, inputs)
        expected = _causal_truth(params, x, h, kv)
        expect_tensor(ctx, out, expected.to(x.device, x.dtype), f"query head h uses key/value head h // {h // kv}", inputs, atol=1e-4)


def _expect_cache(ctx, got, expected, prop, inputs):
    for name, g, e in zip(("k", "v"), got, expected):
        expect_tensor(ctx, g, e.to(ctx.device, torch.float32), f"{prop}: cache {name} "
                      f"(B, num_kv_heads, T, d_head) = {name}_proj(x) of every position, split into key/value heads", inputs, atol=1e-4)


@check(f"{A}.CausalSelfAttention.cache", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_cache(ctx):
    """The cache is (k, v), (B, num_kv_heads, T, d_head) each, after one call and after a continued call."""
    for d_model, h, kv, N, B in [(8, 2, 2, 4, 2), (12, 6, 3, 5, 1), (16, 4, 1, 3, 2)]:
        module, params = _layer(ctx, d_model, h, kv)
        x = _x(ctx, B, N + 2, d_model)
        inputs = _inputs(x[:, :N], h, kv)
        _, cache = _forward(ctx, module, x[:, :N], inputs)
        _expect_cache(ctx, cache, _cache_truth(params, x[:, :N], h, kv), "after forward(x)", inputs)
        inputs = _inputs(x[:, N:], h, kv, f"cache of {N} positions")
        _, cache = _forward(ctx, module, x[:, N:], inputs, cache=cache)
        _expect_cache(ctx, cache, _cache_truth(params, x, h, kv), f"after forward(x_new, cache) the cache holds all {N + 2} positions", inputs)


def _random_split(ctx, n):
    """Chunk lengths that add up to n: random, with at least one chunk of 1 when n > 2."""
    sizes, left = [], n
    while left:
        size = min(left, ctx.choice([1, 1, 2, 3, 4]))
        sizes.append(size)
        left -= size
    return sizes


@check(f"{A}.CausalSelfAttention.continue", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_continue(ctx):
    """A sequence fed in chunks (each call given the previous call's cache) gives the outputs of feeding it in one call.

    The property is the point here, so the module's own one-call outputs are the reference: whether those are the right
    attention is graded by the values and gqa clauses."""
    for d_model, h, kv, N, B in [(8, 2, 2, 7, 2), (12, 6, 3, 9, 1), (16, 4, 1, 6, 1), (8, 4, 4, 5, 1)]:
        module, _ = _layer(ctx, d_model, h, kv)
        x = _x(ctx, B, N, d_model)
        whole, _ = _forward(ctx, module, x, _inputs(x, h, kv, "in one call"))
        whole = torch.Tensor.detach(whole)
        for sizes in ([1] * N, [N - 2, 1, 1], _random_split(ctx, N)):
            cache, start = None, 0
            for size in sizes:
                chunk = x[:, start:start + size].contiguous()
                inputs = _inputs(x, h, kv, f"fed in chunks of {sizes}; this chunk: positions {start}..{start + size - 1}")
                out, cache = _forward(ctx, module, chunk, inputs, cache=cache)
                expect_tensor(ctx, out, whole[:, start:start + size], "a chunk's positions attend to every cached position and causally "
                              "among themselves: the outputs of the same positions when the whole sequence is fed in one call", inputs, atol=1e-5)
                start += size


@check(f"{A}.CausalSelfAttention.dtype", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_dtype(ctx):
    """module.double() with a float64 x: float64 output and cache, in a first and a continued call."""
    if not float64_ok(ctx):
        return
    for d_model, h, kv, N in [(8, 2, 1, 4), (12, 3, 3, 3)]:
        module, _ = _layer(ctx, d_model, h, kv, dtype=torch.float64)
        x = _x(ctx, 1, N, d_model, dtype=torch.float64)
        inputs = _inputs(x, h, kv)
        out, cache = _forward(ctx, module, x, inputs)
        out2, cache2 = _forward(ctx, module, x[:, -1:], inputs + ", then its last token again with the cache", cache=cache)
        for name, t in (("output", out), ("cache k", cache[0]), ("cache v", cache[1]), ("continued output", out2), ("continued cache k", cache2[0])):
            if t.dtype != torch.float64:
                ctx.fail(f"a float64 module and x give a float64 {name}", f"got {describe(t)}", inputs)


@check(f"{A}.CausalSelfAttention.unchanged", "CausalSelfAttention", CSA_FORBIDDEN)
def csa_unchanged(ctx):
    """forward leaves x and the given cache's tensors as they were."""
    for d_model, h, kv, N in [(8, 2, 2, 4), (12, 6, 2, 3)]:
        module, _ = _layer(ctx, d_model, h, kv)
        x = _x(ctx, 2, N, d_model)
        inputs = _inputs(x, h, kv)
        before = x.clone()
        got = ctx.method(module, "__call__", x)
        expect_tensor(ctx, x, before, "forward leaves x unchanged", inputs, atol=0.0, rtol=0.0)
        if not isinstance(got, tuple) or len(got) != 2 or not isinstance(got[1], tuple) or len(got[1]) != 2:
            ctx.fail("forward returns the pair (output, (k, v))", f"got {describe(got) if isinstance(got, tuple) else type(got).__name__}", inputs)
        cache = tuple(torch.Tensor.detach(t).clone() for t in got[1])  # the module's own cache, in its own layout
        kept = tuple(t.clone() for t in cache)
        step = _x(ctx, 2, 1, d_model)
        ctx.method(module, "__call__", step, cache=cache)
        for name, t, k in zip(("k", "v"), cache, kept):
            expect_tensor(ctx, t, k, f"forward(x, cache) leaves the given cache's {name} unchanged", _inputs(step, h, kv, f"cache of {N} positions"), atol=0.0, rtol=0.0)


# ---------------------------------------------------------------- blockwise_attention
def _attention_truth(Q, K, V, causal=False):
    """softmax(Q K^T / sqrt(D)) V in float64 on the CPU; causal: query i sees keys j <= Nk - Nq + i."""
    Nq, Nk = Q.shape[-2], K.shape[-2]
    mask = None
    if causal:
        mask = torch.arange(Nk)[None, :] <= torch.arange(Nq)[:, None] + (Nk - Nq)
    return F.scaled_dot_product_attention(cpu64(Q), cpu64(K), cpu64(V), attn_mask=mask)


def _qkv(ctx, lead, Nq, Nk, D, Dv, dtype=torch.float32, scale=1.0):
    return ctx.randn(*lead, Nq, D, dtype=dtype, scale=scale), ctx.randn(*lead, Nk, D, dtype=dtype, scale=scale), ctx.randn(*lead, Nk, Dv, dtype=dtype)


def _blockwise_inputs(Q, K, V, block_size, causal=None):
    text = f"Q {describe(Q)}, K {describe(K)}, V {describe(V)}, block_size {block_size}"
    return text + ("" if causal is None else f", causal={causal}")


def _blockwise(ctx, Q, K, V, block_size, causal=None):
    if causal is None:
        return ctx.call("blockwise_attention", Q.clone(), K.clone(), V.clone(), block_size)
    return ctx.call("blockwise_attention", Q.clone(), K.clone(), V.clone(), block_size, causal=causal)


# (leading dims, Nq, Nk, D, Dv, block_size)
VALUE_CASES = [((), 4, 10, 8, 8, 3), ((2,), 5, 7, 4, 6, 2), ((2, 3), 3, 9, 5, 2, 4), ((), 6, 6, 4, 4, 1),
               ((1,), 2, 5, 3, 3, 16), ((3,), 7, 12, 6, 5, 5), ((), 1, 1, 2, 3, 1), ((2,), 8, 3, 4, 4, 2)]


@check(f"{A}.blockwise_attention.values", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_values(ctx):
    """softmax(Q K^T / sqrt(D)) V for many shapes and block sizes; causal defaults to False."""
    for lead, Nq, Nk, D, Dv, b in VALUE_CASES:
        Q, K, V = _qkv(ctx, lead, Nq, Nk, D, Dv, scale=1.5)
        inputs = _blockwise_inputs(Q, K, V, b)
        got = _blockwise(ctx, Q, K, V, b)
        expect_tensor(ctx, got, _attention_truth(Q, K, V).to(Q.device, Q.dtype), "blockwise_attention equals softmax(Q K^T / sqrt(D)) V", inputs, atol=1e-5)


# (leading dims, Nq, Nk, D, block_size): block sizes divide Nk here (partial blocks are the values clause's)
CAUSAL_CASES = [((), 6, 6, 4, 2), ((2,), 3, 9, 4, 3), ((2, 2), 4, 8, 3, 4), ((), 1, 5, 2, 5), ((1,), 5, 10, 4, 1), ((), 7, 7, 3, 7)]


@check(f"{A}.blockwise_attention.causal", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_causal(ctx):
    """causal=True: query i (position Nk - Nq + i) attends to keys j <= Nk - Nq + i."""
    for lead, Nq, Nk, D, b in CAUSAL_CASES:
        Q, K, V = _qkv(ctx, lead, Nq, Nk, D, D, scale=1.5)
        inputs = _blockwise_inputs(Q, K, V, b, causal=True)
        got = _blockwise(ctx, Q, K, V, b, causal=True)
        expect_tensor(ctx, got, _attention_truth(Q, K, V, causal=True).to(Q.device, Q.dtype),
                      f"causal: query i attends to keys j <= i + {Nk - Nq} (Nk - Nq)", inputs, atol=1e-5)


def _rising_scores(ctx, lead, Nq, Nk, D, block_size):
    """Q, K whose scores are about 1000 and whose maximum rises by about 200 from one key block to the next."""
    Q = ctx.randn(*lead, Nq, D) * 0.5
    Q[..., 0] = 10.0  # the first feature carries a large score of its own
    K = ctx.randn(*lead, Nk, D) * 0.5
    block = torch.arange(Nk, device=K.device) // block_size
    K[..., 0] = (math.sqrt(D) * (1000.0 + 200.0 * block) / 10.0).to(K.dtype)  # score ~ 1000 + 200 * block
    K[..., ctx.randrange(0, Nk), 0] = -math.sqrt(D) * 100.0  # one key far below: about -1000
    return Q, K


@check(f"{A}.blockwise_attention.stability", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_stability(ctx):
    """Scores around 1000 whose maximum rises by hundreds per block: exact, no NaN or inf."""
    for lead, Nq, Nk, D, b, causal in [((), 4, 8, 4, 2, None), ((2,), 3, 12, 4, 4, None), ((), 6, 6, 2, 3, True), ((1,), 5, 9, 3, 3, None)]:
        Q, K = _rising_scores(ctx, lead, Nq, Nk, D, b)
        V = ctx.randn(*lead, Nk, D)
        inputs = _blockwise_inputs(Q, K, V, b, causal) + ", scores about 1000 + 200 * (key block)"
        got = _blockwise(ctx, Q, K, V, b, causal)
        expect_tensor(ctx, got, _attention_truth(Q, K, V, bool(causal)).to(Q.device, Q.dtype),
                      "exact for scores around 1000 rising from block to block (rescale by the running maximum)", inputs,
                      atol=1e-3, rtol=1e-3)  # float32 scores near 1000 carry rounding errors of about 1e-4


@check(f"{A}.blockwise_attention.memory", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_memory(ctx):
    """No floating-point tensor larger than the inputs, the output or one block's products: never (..., Nq, Nk)."""
    for lead, Nq, Nk, D, Dv, b, causal in [((2,), 24, 1000, 4, 3, 16, None), ((), 600, 600, 2, 2, 8, True), ((3,), 16, 960, 2, 4, 10, False)]:
        Q, K, V = _qkv(ctx, lead, Nq, Nk, D, Dv)
        inputs = _blockwise_inputs(Q, K, V, b, causal)
        _blockwise(ctx, Q, K, V, b, causal)
        created = ctx.largest_created
        if created is None:  # the recorder always runs for this check; None means the call was not recorded
            ctx.fail("the grader records the tensors blockwise_attention creates", "no record came back", inputs)
        lead_size = math.prod(lead)
        allowed = max(Q.numel(), K.numel(), V.numel(), lead_size * Nq * Dv, lead_size * Nq * b * max(D, Dv))
        if created > allowed:
            ctx.fail(f"never more than one block of scores at once (no floating-point tensor over {allowed} elements)",
                     f"it created a floating-point tensor of {created} elements (the full (..., Nq, Nk) scores have "
                     f"{lead_size * Nq * Nk}): compute the scores of one block of block_size keys at a time", inputs)


@check(f"{A}.blockwise_attention.dtype", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_dtype(ctx):
    """float64 in, float64 out (the values are the values clause's)."""
    if not float64_ok(ctx):
        return
    for lead, Nq, Nk, D, Dv, b in VALUE_CASES[:3]:
        Q, K, V = _qkv(ctx, lead, Nq, Nk, D, Dv, dtype=torch.float64)
        inputs = _blockwise_inputs(Q, K, V, b)
        got = _tensor_or_fail(ctx, _blockwise(ctx, Q, K, V, b), "blockwise_attention returns a tensor", inputs)
        if got.dtype != torch.float64:
            ctx.fail("float64 inputs give a float64 result", f"got {describe(got)}", inputs)


@check(f"{A}.blockwise_attention.device", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_device(ctx):
    """The result is on Q's device (probed with meta tensors standing in for a GPU), causal or not."""
    Q, K, V = _qkv(ctx, (2,), 3, 7, 4, 5)
    ctx.probe_device("blockwise_attention", Q, K, V, 3, prop="blockwise_attention returns its result on the device of Q")
    ctx.probe_device("blockwise_attention", Q, K, V, 2, causal=True, prop="blockwise_attention(..., causal=True) returns its result on the device of Q")


@check(f"{A}.blockwise_attention.unchanged", "blockwise_attention", BLOCKWISE_FORBIDDEN)
def blockwise_unchanged(ctx):
    """Q, K and V are left as they were."""
    for lead, Nq, Nk, D, Dv, b, causal in [((), 4, 6, 4, 3, 2, None), ((2,), 3, 5, 2, 2, 2, True)]:
        Q, K, V = _qkv(ctx, lead, Nq, Nk, D, Dv)
        kept = [t.clone() for t in (Q, K, V)]
        if causal is None:
            ctx.call("blockwise_attention", Q, K, V, b)
        else:
            ctx.call("blockwise_attention", Q, K, V, b, causal=causal)
        for name, t, k in zip("QKV", (Q, K, V), kept):
            expect_tensor(ctx, t, k, f"blockwise_attention leaves {name} unchanged", _blockwise_inputs(Q, K, V, b, causal), atol=0.0, rtol=0.0)


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
