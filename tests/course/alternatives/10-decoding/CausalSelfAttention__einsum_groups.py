"""CausalSelfAttention with einsum over (kv head, group) axes: the queries reshaped to (B, KV, group, N, dh), no repeated keys at all."""


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads=None):
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if d_model % num_heads != 0 or num_heads % num_kv_heads != 0:
            raise ValueError("bad head counts")
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        d_head = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, num_kv_heads * d_head)
        self.v_proj = nn.Linear(d_model, num_kv_heads * d_head)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        B, N, D = x.shape
        H, KV = self.num_heads, self.num_kv_heads
        dh, G = D // H, H // KV
        q = self.q_proj(x).reshape(B, N, KV, G, dh)  # query head h = g * G + r sits at [..., g, r, :]
        k = self.k_proj(x).reshape(B, N, KV, dh).transpose(1, 2)  # (B, KV, N, dh)
        v = self.v_proj(x).reshape(B, N, KV, dh).transpose(1, 2)
        if cache is not None:
            k = torch.cat([cache[0], k], 2)
            v = torch.cat([cache[1], v], 2)
        T = k.shape[2]
        scores = torch.einsum("bngrd,bgtd->bgrnt", q, k) / math.sqrt(dh)  # (B, KV, G, N, T)
        mask = torch.ones(N, T, dtype=torch.bool, device=x.device).tril(T - N)
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        out = torch.einsum("bgrnt,bgtd->bngrd", weights, v).reshape(B, N, D)
        return self.out_proj(out), (k, v)
