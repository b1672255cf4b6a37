"""MultiHeadSelfAttention: the source material's split, reshape (B, N, D) -> (-1, B, N, D/h), and back with reshape(B, N, -1)."""


class MultiHeadSelfAttention(MultiHeadSelfAttention):
    """The reference layers (inherited __init__), a wrong forward."""

    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        q = self.q_proj(x).reshape(-1, B, N, self.d_head)
        k = self.k_proj(x).reshape(-1, B, N, self.d_head)
        v = self.v_proj(x).reshape(-1, B, N, self.d_head)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        output = self.out_proj((weights @ v).reshape(B, N, -1))
        weights = weights.transpose(0, 1)
        return (output, weights) if return_weights else output
