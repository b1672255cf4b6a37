"""MultiHeadSelfAttention with einsum for the per-head scores and mixing, a finite large negative fill and renormalised rows."""


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.h, self.dh = num_heads, d_model // num_heads
        self.d_model, self.num_heads = d_model, num_heads  # read by load_torch_weights
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        B, N, D = x.shape
        q, k, v = (p(x).view(B, N, self.h, self.dh) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = torch.einsum("bnhd,bmhd->bhnm", q, k) * self.dh ** -0.5
        if mask is not None:
            allowed = mask.expand_as(scores)
            scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
            scores = scores - scores.amax(-1, keepdim=True)
            e = scores.exp() * allowed
            weights = e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)
        else:
            weights = scores.softmax(-1)
        out = torch.einsum("bhnm,bmhd->bnhd", weights, v).reshape(B, N, D)
        out = self.out_proj(out)
        return (out, weights) if return_weights else out
