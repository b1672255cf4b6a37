"""CausalSelfAttention that builds its mask from the notebook's causal_mask: the last N rows of causal_mask(T), T the positions so far."""


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads=None):
        super().__init__()
        kv = num_heads if num_kv_heads is None else num_kv_heads
        if num_heads < 1 or d_model % num_heads:
            raise ValueError(f"{num_heads} heads do not divide d_model={d_model}")
        if kv < 1 or num_heads % kv:
            raise ValueError(f"{kv} key/value heads do not divide {num_heads} heads")
        self.heads, self.kv_heads, self.width = num_heads, kv, d_model // num_heads
        self.q_proj, self.out_proj = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.k_proj, self.v_proj = nn.Linear(d_model, kv * self.width), nn.Linear(d_model, kv * self.width)

    def _split(self, t, heads):
        return t.reshape(t.shape[0], t.shape[1], heads, self.width).permute(0, 2, 1, 3)  # (B, heads, N, width)

    def forward(self, x, cache=None):
        B, N, D = x.shape
        q = self._split(self.q_proj(x), self.heads)
        k, v = self._split(self.k_proj(x), self.kv_heads), self._split(self.v_proj(x), self.kv_heads)
        if cache is not None:
            k, v = torch.cat((cache[0], k), dim=2), torch.cat((cache[1], v), dim=2)
        T = k.shape[2]
        allowed = causal_mask(T, x.device)[T - N:]  # the rows of the N newest positions
        q = q.reshape(B, self.kv_heads, self.heads // self.kv_heads, N, self.width)  # query heads grouped by their key/value head
        scores = q @ k.unsqueeze(2).transpose(-2, -1) / self.width ** 0.5  # (B, KV, group, N, T)
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = (scores - scores.amax(-1, keepdim=True)).exp()
        weights = weights / weights.sum(-1, keepdim=True)
        out = (weights @ v.unsqueeze(2)).reshape(B, self.heads, N, self.width).transpose(1, 2).reshape(B, N, D)
        return self.out_proj(out), (k, v)
