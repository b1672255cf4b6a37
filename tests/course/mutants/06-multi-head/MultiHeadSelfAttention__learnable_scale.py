"""MultiHeadSelfAttention: adds a learnable temperature parameter (initialised to 1/sqrt(d_head)), a parameter the contract does not allow.

Breaks: 06.MultiHeadSelfAttention.parameters
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers plus an extra nn.Parameter used as the scale."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__(d_model, num_heads, bias)
        self.scale = nn.Parameter(torch.tensor(1.0 / math.sqrt(self.d_head)))

    def forward(self, x, mask=None, return_weights=False):
        q = split_heads(self.q_proj(x), self.num_heads)
        k = split_heads(self.k_proj(x), self.num_heads)
        v = split_heads(self.v_proj(x), self.num_heads)
        scores = (q @ k.transpose(-2, -1)) * self.scale.to(q.dtype)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        output = self.out_proj(merge_heads(weights @ v))
        return (output, weights) if return_weights else output
