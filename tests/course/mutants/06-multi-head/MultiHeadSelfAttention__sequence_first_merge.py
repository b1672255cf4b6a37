"""MultiHeadSelfAttention: merges with reshape(N, B, D).transpose(0, 1), nn.MultiheadAttention's old sequence-first layout; right for one sentence, mixes sentences in a batch.

Breaks: 06.MultiHeadSelfAttention.batch_independent
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers (inherited __init__), a wrong merge in forward."""

    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        heads = (weights @ v).transpose(1, 2).reshape(N, B, D).transpose(0, 1)  # should be reshape(B, N, D)
        output = self.out_proj(heads)
        return (output, weights) if return_weights else output
