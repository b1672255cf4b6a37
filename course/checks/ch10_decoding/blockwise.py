"""ch10_decoding: the checks of blockwise_attention (an answer that builds its causal mask from the
student's ``causal_mask`` and fails because that mask is wrong is told so: ``layer.mask_blamed``)."""
import math

import torch
import torch.nn.functional as F

from autograder.checking import check, describe, expect_tensor, expect_untouched

from ..ground_truth import cpu64, float64_ok
from .layer import mask_blamed
from .shared import (BLOCKWISE_FORBIDDEN, MEMORY_BLOCK, MEMORY_D, MEMORY_LEAD, MEMORY_LIMIT_MIB, MEMORY_NK, MEMORY_NQ, A,
                     _tensor_or_fail)


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
        with mask_blamed(ctx, "blockwise_attention", (Nq, Nk)):
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
    """Never (..., Nq, Nk): at most MEMORY_LIMIT_MIB taken at the MEMORY_* size, seen from outside the
    student's kernel; and no floating-point tensor larger than the inputs, the output or one block's
    products, by the recorder's count (the only measure in the student's own process)."""
    for lead, Nq, Nk, D, Dv, b, causal in [((2,), 24, 1000, 4, 3, 16, None), ((), 600, 600, 2, 2, 8, True), ((3,), 16, 960, 2, 4, 10, False)]:
        Q, K, V = _qkv(ctx, lead, Nq, Nk, D, Dv)
        inputs = _blockwise_inputs(Q, K, V, b, causal)
        _blockwise(ctx, Q, K, V, b, causal)
        _within_one_block(ctx, lead, Nq, Nk, D, Dv, b, Q, K, V, inputs)
    _memory_from_outside(ctx)  # after those calls: what a first call loads once is not the answer's memory


def _memory_from_outside(ctx):
    lead, Nq, Nk, D, Dv, b = (MEMORY_LEAD,), MEMORY_NQ, MEMORY_NK, MEMORY_D, MEMORY_D, MEMORY_BLOCK
    Q, K, V = (t.cpu() for t in _qkv(ctx, lead, Nq, Nk, D, Dv))
    inputs = _blockwise_inputs(Q, K, V, b)
    _, taken = ctx.measure_memory("blockwise_attention", Q, K, V, b)
    whole = math.prod(lead) * Nq * Nk * 4 / 2**20
    if taken is not None and taken > MEMORY_LIMIT_MIB * 2**20:
        ctx.fail(f"at most {MEMORY_LIMIT_MIB} MiB of memory for one call at this size (one block of scores is "
                 f"{math.prod(lead) * Nq * b * 4 / 2**20:g} MiB)",
                 f"the call took {taken / 2**20:.1f} MiB, measured by the grader outside your code; the whole "
                 f"(..., Nq, Nk) score matrix is {whole:g} MiB: compute the scores of one block of block_size keys "
                 "at a time and let each block go before the next", inputs)
    _within_one_block(ctx, lead, Nq, Nk, D, Dv, b, Q, K, V, inputs)


def _within_one_block(ctx, lead, Nq, Nk, D, Dv, b, Q, K, V, inputs):
    """The recorder's count for the last call: no floating-point tensor over one block's products."""
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
            expect_untouched(ctx, [(name, t)], f"blockwise_attention leaves {name} unchanged", _blockwise_inputs(Q, K, V, b, causal),
                             who="blockwise_attention")
