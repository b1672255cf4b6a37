"""CausalSelfAttention that loops over the query heads, slicing key/value head h // group by hand, with a finite large negative fill."""


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads=None):
        super().__init__()
        kv = num_kv_heads or num_heads
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        if kv <= 0 or num_heads % kv != 0:
            raise ValueError(f"num_heads={num_heads} is not divisible by num_kv_heads={kv}")
        self.h, self.kv, self.dh = num_heads, kv, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, kv * self.dh)
        self.v_proj = nn.Linear(d_model, kv * self.dh)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, N, D = x.shape
        q = self.q_proj(x)  # (B, N, D)
        k = self.k_proj(x).unflatten(-1, (self.kv, self.dh)).permute(0, 2, 1, 3)  # (B, KV, N, dh)
        v = self.v_proj(x).unflatten(-1, (self.kv, self.dh)).permute(0, 2, 1, 3)
        if cache is not None:
            past_k, past_v = cache
            k, v = torch.cat([past_k, k], dim=-2), torch.cat([past_v, v], dim=-2)
        T = k.shape[-2]
        past = T - N
        visible = torch.arange(T, device=x.device)[None, :] <= torch.arange(past, T, device=x.device)[:, None]  # (N, T)
        heads = []
        for head in range(self.h):
            g = head // (self.h // self.kv)
            s = q[..., head * self.dh:(head + 1) * self.dh] @ k[:, g].transpose(-1, -2) * self.dh ** -0.5  # (B, N, T)
            s = s.masked_fill(~visible, torch.finfo(s.dtype).min)
            w = torch.exp(s - s.amax(dim=-1, keepdim=True))
            heads.append((w / w.sum(dim=-1, keepdim=True)) @ v[:, g])  # (B, N, dh)
        return self.out_proj(torch.cat(heads, dim=-1)), (k, v)
