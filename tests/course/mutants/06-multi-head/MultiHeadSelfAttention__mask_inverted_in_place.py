"""MultiHeadSelfAttention: saves memory with mask.logical_not_(), which inverts the caller's mask in place.

Breaks: 06.MultiHeadSelfAttention.unchanged
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers (inherited __init__), an in-place operation on the mask argument."""

    def forward(self, x, mask=None, return_weights=False):
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            hidden = mask.logical_not_()  # True = hidden, computed in place
            scores = scores.masked_fill(hidden, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(hidden.all(dim=-1, keepdim=True), 0.0)
        output = self.out_proj(merge_heads(weights @ v))
        return (output, weights) if return_weights else output
