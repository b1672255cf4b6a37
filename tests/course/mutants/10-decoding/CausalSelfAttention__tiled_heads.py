"""CausalSelfAttention: repeats the key/value heads as a tile (kv.repeat), so query head h reads head h % num_kv_heads instead of h // group.

Breaks: 10.CausalSelfAttention.gqa
"""


class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x, cache=None):
        B, N, D = x.shape
        q = self.q_proj(x).view(B, N, self.num_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(x).view(B, N, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(x).view(B, N, self.num_kv_heads, self.d_head).transpose(1, 2)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        T = k.shape[2]
        group = self.num_heads // self.num_kv_heads
        scores = q @ k.repeat(1, group, 1, 1).transpose(-2, -1) / math.sqrt(self.d_head)
        allowed = torch.ones(N, T, dtype=torch.bool, device=x.device).tril(diagonal=T - N)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v.repeat(1, group, 1, 1)).transpose(1, 2).reshape(B, N, D)
        return self.out_proj(out), (k, v)
