"""MultiHeadSelfAttention: fills masked scores with -1e9, so a fully masked query attends uniformly to the hidden keys.

Breaks: 06.MultiHeadSelfAttention.fully_masked
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers (inherited __init__), a wrong forward."""

    def forward(self, x, mask=None, return_weights=False):
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        output = self.out_proj(merge_heads(weights @ v))
        return (output, weights) if return_weights else output
