"""CausalSelfAttention: joins the given cache to the new keys and values along dim 1 (the key/value heads) instead of dim 2 (the positions).

Breaks: 10.CausalSelfAttention.cache, 10.CausalSelfAttention.continue
"""


class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x, cache=None):
        B, N, D = x.shape
        q = self.q_proj(x).view(B, N, self.num_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(x).view(B, N, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(x).view(B, N, self.num_kv_heads, self.d_head).transpose(1, 2)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=1), torch.cat([cache[1], v], dim=1)
        T = k.shape[2]
        group = self.num_heads // self.num_kv_heads
        scores = q @ k.repeat_interleave(group, dim=1).transpose(-2, -1) / math.sqrt(self.d_head)
        allowed = torch.ones(N, T, dtype=torch.bool, device=x.device).tril(diagonal=T - N)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out = (weights @ v.repeat_interleave(group, dim=1)).transpose(1, 2).reshape(B, N, D)
        return self.out_proj(out), (k, v)
