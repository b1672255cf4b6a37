"""MultiHeadSelfAttention: keeps its own frozen copies of the initial weights and uses them in forward, so the output does not follow q_proj/k_proj/v_proj/out_proj once they change.
"""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """A snapshot of the initial projections taken in __init__ is what forward uses."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__(d_model, num_heads, bias)
        self._frozen = [(p.weight.detach().clone(), None if p.bias is None else p.bias.detach().clone())
                        for p in (self.q_proj, self.k_proj, self.v_proj, self.out_proj)]

    def forward(self, x, mask=None, return_weights=False):
        (wq, bq), (wk, bk), (wv, bv), (wo, bo) = [(w.to(x), None if b is None else b.to(x)) for w, b in self._frozen]
        q = split_heads(F.linear(x, wq, bq), self.num_heads)
        k = split_heads(F.linear(x, wk, bk), self.num_heads)
        v = split_heads(F.linear(x, wv, bv), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        output = F.linear(merge_heads(weights @ v), wo, bo)
        return (output, weights) if return_weights else output
