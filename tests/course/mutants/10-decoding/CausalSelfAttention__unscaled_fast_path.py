"""CausalSelfAttention: a separate "no grouping" path for num_kv_heads == num_heads that forgets the 1/sqrt(d_head) scale.

Breaks: 10.CausalSelfAttention.values
"""


class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x, cache=None):
        if self.num_kv_heads != self.num_heads:
            return super().forward(x, cache)
        B, N, D = x.shape
        q = self.q_proj(x).view(B, N, self.num_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(x).view(B, N, self.num_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(x).view(B, N, self.num_heads, self.d_head).transpose(1, 2)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        T = k.shape[2]
        scores = q @ k.transpose(-2, -1)
        allowed = torch.ones(N, T, dtype=torch.bool, device=x.device).tril(diagonal=T - N)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return self.out_proj((weights @ v).transpose(1, 2).reshape(B, N, D)), (k, v)
