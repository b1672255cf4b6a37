"""MultiHeadSelfAttention built on the notebook's split_heads and merge_heads, with the softmax written out and the
rows that see no key set to zero with torch.where."""
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        self.d_model, self.num_heads = d_model, num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        q, k, v = (split_heads(proj(x), self.num_heads) for proj in (self.q_proj, self.k_proj, self.v_proj))
        scores = torch.matmul(q, k.transpose(-1, -2)) / (self.d_model // self.num_heads) ** 0.5  # (B, H, N, N)
        if mask is not None:
            scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
        top = scores.amax(dim=-1, keepdim=True)
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # a row that sees nothing: no inf - inf
        e = torch.exp(scores - top)
        total = e.sum(dim=-1, keepdim=True)
        weights = torch.where(total > 0, e / total.clamp_min(torch.finfo(e.dtype).tiny), torch.zeros_like(e))
        out = self.out_proj(merge_heads(torch.matmul(weights, v)))
        return (out, weights) if return_weights else out
