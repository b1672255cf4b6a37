"""MultiHeadSelfAttention: one head at a time over chunks of the projections, concatenated with torch.cat, weights stacked."""
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("d_model % num_heads != 0")
        self.num_heads = num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = [nn.Linear(d_model, d_model, bias=bias) for _ in range(4)]

    def forward(self, x, mask=None, return_weights=False):
        qs = self.q_proj(x).chunk(self.num_heads, dim=-1)
        ks = self.k_proj(x).chunk(self.num_heads, dim=-1)
        vs = self.v_proj(x).chunk(self.num_heads, dim=-1)
        outs, all_weights = [], []
        for q, k, v in zip(qs, ks, vs):
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])   # (B, N, N)
            if mask is not None:
                m = mask
                while m.dim() > 3:
                    m = m.squeeze(1) if m.shape[1] == 1 else m[:, 0]
                scores = scores.masked_fill(m == 0, float("-inf"))
            w = torch.softmax(scores, dim=-1)
            outs.append(w @ v)
            all_weights.append(w)
        out = self.out_proj(torch.cat(outs, dim=-1))
        return (out, torch.stack(all_weights, dim=1)) if return_weights else out
