"""MultiHeadSelfAttention: the source material's reshape (B, N, D) -> (-1, B, N, D/h), which cuts every token's features into pieces that land in other positions' rows (sentences stay apart, tokens do not)."""
class MultiHeadSelfAttention(MultiHeadSelfAttention):  # the reference __init__, a wrong forward
    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        H = self.num_heads
        q, k, v = (p(x).reshape(-1, B, N, D // H) for p in (self.q_proj, self.k_proj, self.v_proj))  # (H, B, N, Dh)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
        if mask is not None:
            scores = scores.masked_fill(~mask.transpose(0, 1) if mask.dim() == 4 else ~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # (H, B, N, N)
        out = self.out_proj((weights @ v).reshape(B, N, D))
        return (out, weights.transpose(0, 1)) if return_weights else out
