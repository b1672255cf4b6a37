"""MultiHeadSelfAttention: reshapes every mask to (B, 1, 1, N), so only key-padding masks work; (N, N) and causal masks raise.

Breaks: 09.MultiHeadSelfAttention.mask
"""
class MultiHeadSelfAttention(MultiHeadSelfAttention):  # the reference __init__, a wrong forward
    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        H = self.num_heads
        q, k, v = (p(x).view(B, N, H, D // H).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
        if mask is not None:
            scores = scores.masked_fill(~mask.reshape(B, 1, 1, N), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = self.out_proj((weights @ v).transpose(1, 2).reshape(B, N, D))
        return (out, weights) if return_weights else out
