"""blockwise_attention that keeps a running log-sum-exp and merges each block's normalised output into it (FlashAttention-2 style bookkeeping)."""


def blockwise_attention(Q, K, V, block_size, causal=False):
    *lead, Nq, D = Q.shape
    Nk = K.shape[-2]
    out = None
    lse = None
    scale = 1.0 / math.sqrt(D)
    q_pos = torch.arange(Nk - Nq, Nk, device=Q.device).unsqueeze(-1)
    for j in range(0, Nk, block_size):
        kb, vb = K[..., j:j + block_size, :], V[..., j:j + block_size, :]
        s = torch.matmul(Q, kb.transpose(-1, -2)) * scale
        if causal:
            s = torch.where(torch.arange(j, j + kb.shape[-2], device=Q.device) <= q_pos, s, torch.full_like(s, -math.inf))
        block_lse = torch.logsumexp(s, dim=-1, keepdim=True)  # (..., Nq, 1); -inf where the block is all masked
        safe = torch.where(torch.isinf(block_lse), torch.zeros_like(block_lse), block_lse)
        block_out = torch.exp(s - safe) @ vb  # softmax of this block alone, times its values
        if out is None:
            out, lse = block_out, block_lse
            continue
        new_lse = torch.logaddexp(lse, block_lse)
        out = out * torch.exp(lse - new_lse) + block_out * torch.exp(torch.where(torch.isinf(block_lse), block_lse, block_lse - new_lse))
        lse = new_lse
    return out
