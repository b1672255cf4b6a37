"""MultiHeadSelfAttention: zeroes q_proj in __init__ (all scores 0, so the module's own output hides any scale) and never applies the scale; it must score no more than the same bug without zeroing.
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """Zeroed q_proj at construction, no 1/sqrt(d_head)."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__(d_model, num_heads, bias)
        with torch.no_grad():
            self.q_proj.weight.zero_()
            if self.q_proj.bias is not None:
                self.q_proj.bias.zero_()

    def forward(self, x, mask=None, return_weights=False):
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        scores = q @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        output = self.out_proj(merge_heads(weights @ v))
        return (output, weights) if return_weights else output
