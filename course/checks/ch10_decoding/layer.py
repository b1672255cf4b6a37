"""ch10_decoding: the checks of causal_mask, CausalSelfAttention.

A layer that calls the student's ``causal_mask`` and fails because that mask is wrong (a NaN row
from a mask off by one) is told so (``mask_blamed``); a cache joined to the new keys on another
axis than the positions' is named as such (``_cache_axis_fault``), and the dtype clause does not
fail for a continued call that fails in float32 as well (that is the cache and continue clauses')."""
import math
import re

import torch

from autograder.checking import CheckFailure, StudentCodeError, check, describe, expect_tensor, expect_untouched

from ..ch06_multi_head import set_weights, torch_truth
from ..ground_truth import blame_helper, cpu64, explained, first_fault, float64_ok
from .shared import CSA_FORBIDDEN, A, _tensor_or_fail


# ---------------------------------------------------------------- causal_mask
def _mask_truth(n: int) -> torch.Tensor:
    i = torch.arange(n)
    return i[None, :] <= i[:, None]  # [i, j] = j <= i


def _mask_probes(ctx, sizes):
    """``causal_mask(n)`` for each size (values), and ``causal_mask(n, device)`` on a grader with a GPU (device)."""
    for n in sorted(set(sizes)):
        yield f"{A}.causal_mask.values", (n,), _mask_truth(n), f"n = {n}", {"check_device": False}
        if ctx.device.type != "cpu":
            yield f"{A}.causal_mask.device", (n, ctx.device), _mask_truth(n).to(ctx.device), f"n = {n}, device {ctx.device}", {}


def mask_blamed(ctx, caller: str, sizes):
    """On a failure inside the block, blame the student's ``causal_mask`` when ``caller`` calls it and it is wrong on ``sizes``."""
    return blame_helper(ctx, caller, "causal_mask", lambda: first_fault(ctx, "causal_mask", _mask_probes(ctx, sizes)))


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
        with mask_blamed(ctx, "CausalSelfAttention", range(1, N + 1)):
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
        with mask_blamed(ctx, "CausalSelfAttention", range(1, N + 1)):
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
        with mask_blamed(ctx, "CausalSelfAttention", range(1, N + 3)):
            _, cache = _forward(ctx, module, x[:, :N], inputs)
            _expect_cache(ctx, cache, _cache_truth(params, x[:, :N], h, kv), "after forward(x)", inputs)
            inputs = _inputs(x[:, N:], h, kv, f"cache of {N} positions")
            with cache_axis_explained(ctx, d_model, h, kv):
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
        with mask_blamed(ctx, "CausalSelfAttention", range(1, N + 1)), cache_axis_explained(ctx, d_model, h, kv):
            _continue_in_chunks(ctx, module, x, h, kv)


def _continue_in_chunks(ctx, module, x, h, kv):
    """x fed in one call, then in chunks: each chunk's outputs must be the one call's."""
    N = x.shape[1]
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
        results = [("output", out), ("cache k", cache[0]), ("cache v", cache[1])]
        try:
            out2, cache2 = _forward(ctx, module, x[:, -1:], inputs + ", then its last token again with the cache", cache=cache)
            results += [("continued output", out2), ("continued cache k", cache2[0])]
        except (CheckFailure, StudentCodeError) as exc:
            if getattr(exc, "kind", "error") not in ("failed", "error") or _continues_in_float32(ctx, d_model, h, kv, N):
                raise
            # the continued call fails in float32 too: not a matter of dtype (the cache and continue clauses grade it)
        for name, t in results:
            if t.dtype != torch.float64:
                ctx.fail(f"a float64 module and x give a float64 {name}", f"got {describe(t)}", inputs)


def _continues_in_float32(ctx, d_model, h, kv, N) -> bool:
    """Whether the float32 module takes N positions, then the last one again with the cache, without failing."""
    module, _ = _layer(ctx, d_model, h, kv)
    x = _x(ctx, 1, N, d_model)
    try:
        _, cache = _forward(ctx, module, x, "float32")
        _forward(ctx, module, x[:, -1:], "float32", cache=cache)
    except (CheckFailure, StudentCodeError):
        return False
    return True


_CAT_AXIS = re.compile(r"must match except in dimension (-?\d+)")


def _cache_axis_fault(ctx, d_model, h, kv) -> str | None:
    """What is wrong when forward joins a given cache to the new keys and values along another axis than
    the positions' (dim 2 of (B, num_kv_heads, T, d_head)); None when it does not, or its first cache
    has a layout of its own (the cache clause's message says so)."""
    module, _ = _layer(ctx, d_model, h, kv)
    x = _x(ctx, 1, 5, d_model)
    try:
        _, cache = _forward(ctx, module, x[:, :3], "3 positions")
        if tuple(cache[0].shape) != (1, kv, 3, d_model // h):
            return None
        _forward(ctx, module, x[:, 3:], "2 more positions", cache=cache)
    except StudentCodeError as exc:
        found = _CAT_AXIS.search(str(exc))
        axis = int(found.group(1)) % 4 if found else 2
        if axis != 2:
            return (f"the cache is joined along the wrong axis: given a cache of 3 positions and 2 new ones, your forward concatenates "
                    f"along dim {axis} (PyTorch: \"{found.group(0)}\"), but the positions are dim 2 of the cache's "
                    f"(B, num_kv_heads, T, d_head): concatenate the cached k and v with the new ones along dim=2")
    except CheckFailure:
        pass
    return None


def cache_axis_explained(ctx, d_model, h, kv):
    """On a failure inside the block, say so when the cause is a cache joined along the wrong axis."""
    return explained(ctx, lambda exc: _cache_axis_fault(ctx, d_model, h, kv))


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
        expect_untouched(ctx, [("x", x)], "forward leaves x unchanged", inputs, who="CausalSelfAttention.forward")
        if not isinstance(got, tuple) or len(got) != 2 or not isinstance(got[1], tuple) or len(got[1]) != 2:
            ctx.fail("forward returns the pair (output, (k, v))", f"got {describe(got) if isinstance(got, tuple) else type(got).__name__}", inputs)
        cache = tuple(torch.Tensor.detach(t).clone() for t in got[1])  # the module's own cache, in its own layout
        kept = tuple(t.clone() for t in cache)
        step = _x(ctx, 2, 1, d_model)
        try:
            ctx.method(module, "__call__", step, cache=cache)
        except StudentCodeError:
            pass  # a continued call that raises is the cache and continue clauses' business; the given cache must still be intact
        for name, t, k in zip(("k", "v"), cache, kept):
            expect_tensor(ctx, t, k, f"forward(x, cache) leaves the given cache's {name} unchanged", _inputs(step, h, kv, f"cache of {N} positions"), atol=0.0, rtol=0.0)
            expect_untouched(ctx, [(f"the given cache's {name}", t)], f"forward(x, cache) leaves the given cache's {name} unchanged",
                             _inputs(step, h, kv, f"cache of {N} positions"), who="CausalSelfAttention.forward")
