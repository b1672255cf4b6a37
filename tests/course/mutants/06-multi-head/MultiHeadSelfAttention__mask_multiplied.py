"""MultiHeadSelfAttention: multiplies the softmax weights by the mask instead of masking the scores, so the remaining weights no longer sum to 1.

Breaks: 06.MultiHeadSelfAttention.mask
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers (inherited __init__), masking after the softmax."""

    def forward(self, x, mask=None, return_weights=False):
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(self.d_head), dim=-1)
        if mask is not None:
            weights = weights * mask  # masked keys get 0, but the rows are not renormalised
        output = self.out_proj(merge_heads(weights @ v))
        return (output, weights) if return_weights else output
