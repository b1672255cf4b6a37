"""MultiHeadSelfAttention: divides the scores by sqrt(d_model) instead of sqrt(d_model / num_heads).

Breaks: 09.MultiHeadSelfAttention.values
"""
class MultiHeadSelfAttention(MultiHeadSelfAttention):  # the reference __init__, a wrong forward
    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        H = self.num_heads
        q, k, v = (p(x).view(B, N, H, D // H).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = self.out_proj((weights @ v).transpose(1, 2).reshape(B, N, D))
        return (out, weights) if return_weights else out
