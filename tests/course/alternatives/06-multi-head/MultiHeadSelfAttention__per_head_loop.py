"""MultiHeadSelfAttention that loops over the heads, slicing each head's columns of the projections, and concatenates."""


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads != 0:
            raise ValueError("d_model must be a multiple of num_heads")
        self.d_model, self.num_heads = d_model, num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, return_weights=False):
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        dh = x.shape[-1] // self.num_heads
        outs, all_weights = [], []
        for h in range(self.num_heads):
            cols = slice(h * dh, (h + 1) * dh)
            s = q[..., cols] @ k[..., cols].transpose(-2, -1) / math.sqrt(dh)  # (B, N, N)
            if mask is not None:
                m = torch.broadcast_to(mask, (x.shape[0], self.num_heads) + s.shape[-2:])[:, h]
                s = s.masked_fill(~m, float("-inf"))
                w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
            else:
                w = torch.softmax(s, dim=-1)
            outs.append(w @ v[..., cols])
            all_weights.append(w)
        out = self.out_proj(torch.cat(outs, dim=-1))
        return (out, torch.stack(all_weights, dim=1)) if return_weights else out
