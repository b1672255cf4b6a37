"""MultiHeadSelfAttention: merges the heads with a plain reshape, without transposing heads and tokens back.

Breaks: 06.MultiHeadSelfAttention.values
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers (inherited __init__), a wrong forward."""

    def forward(self, x, mask=None, return_weights=False):
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        B, N, D = x.shape
        output = self.out_proj((weights @ v).reshape(B, N, D))
        return (output, weights) if return_weights else output
