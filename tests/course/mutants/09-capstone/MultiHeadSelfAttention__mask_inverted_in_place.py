"""MultiHeadSelfAttention: inverts the caller's mask in place (mask.logical_not_()) to get the positions to fill.

Breaks: 09.MultiHeadSelfAttention.unchanged
"""
class MultiHeadSelfAttention(MultiHeadSelfAttention):  # the reference __init__, a wrong forward
    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        H = self.num_heads
        q, k, v = (p(x).view(B, N, H, D // H).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not_(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = self.out_proj((weights @ v).transpose(1, 2).reshape(B, N, D))
        return (out, weights) if return_weights else out
