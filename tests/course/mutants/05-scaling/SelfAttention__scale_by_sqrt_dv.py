"""SelfAttention: divides the scores by sqrt(dim_v) instead of sqrt(dim_k)."""


class SelfAttention(SelfAttention):
    """The reference layers (inherited __init__), a wrong forward."""

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        scores = Q @ K.transpose(1, 2) / math.sqrt(self.v.out_features)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.nan_to_num(torch.softmax(scores, -1), nan=0.0) @ V
