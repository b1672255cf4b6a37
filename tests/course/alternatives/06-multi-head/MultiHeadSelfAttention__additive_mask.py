"""MultiHeadSelfAttention with the mask turned into an additive float bias (0 where allowed, -inf where masked),
heads split with unflatten and merged with flatten, rows with no key zeroed with torch.where."""
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads:
            raise ValueError(f"{d_model} is not divisible by {num_heads}")
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.q_proj, self.k_proj = nn.Linear(d_model, d_model, bias=bias), nn.Linear(d_model, d_model, bias=bias)
        self.v_proj, self.out_proj = nn.Linear(d_model, d_model, bias=bias), nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        q, k, v = (p(x).unflatten(-1, (self.num_heads, self.d_head)).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) * self.d_head ** -0.5
        if mask is not None:
            scores = scores + torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = torch.where(mask.any(dim=-1, keepdim=True), weights, torch.zeros_like(weights))
        out = self.out_proj((weights @ v).transpose(1, 2).flatten(-2))
        return (out, weights) if return_weights else out
