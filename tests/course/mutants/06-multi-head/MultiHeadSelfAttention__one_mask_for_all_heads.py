"""MultiHeadSelfAttention: collapses a per-head (B, H, N, N) mask into one mask for every head (a key only where
every head may attend it), so a head loses keys its own mask allows.

Breaks: 06.MultiHeadSelfAttention.mask
"""
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        q, k, v = (split_heads(p(x), self.num_heads) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            if mask.dim() == 4:
                mask = mask.all(dim=1, keepdim=True)  # one mask shared by the heads
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
        output = self.out_proj(merge_heads(weights @ v))
        return (output, weights) if return_weights else output
