"""blockwise_attention in two passes over the key blocks: the first finds each row's maximum score, the second adds up the weights and the weighted values against that final maximum (nothing to rescale)."""
import math


def blockwise_attention(Q, K, V, block_size, causal=False):
    Nq, Nk = Q.shape[-2], K.shape[-2]
    q = Q / math.sqrt(Q.shape[-1])
    position = torch.arange(Nq, device=Q.device)[:, None] + (Nk - Nq)

    def scores(j0):
        s = q @ K[..., j0:j0 + block_size, :].transpose(-2, -1)
        if causal:
            s = s.masked_fill(torch.arange(j0, j0 + s.shape[-1], device=Q.device)[None, :] > position, float("-inf"))
        return s

    top = torch.full(Q.shape[:-1] + (1,), float("-inf"), dtype=Q.dtype, device=Q.device)
    for j0 in range(0, Nk, block_size):
        top = torch.maximum(top, scores(j0).amax(-1, keepdim=True))
    total = torch.zeros_like(top)
    out = torch.zeros(Q.shape[:-1] + V.shape[-1:], dtype=Q.dtype, device=Q.device)
    for j0 in range(0, Nk, block_size):
        w = torch.exp(scores(j0) - top)
        total = total + w.sum(-1, keepdim=True)
        out = out + w @ V[..., j0:j0 + block_size, :]
    return out / total
