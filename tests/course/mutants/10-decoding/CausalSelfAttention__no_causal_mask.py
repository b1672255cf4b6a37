"""CausalSelfAttention: no mask at all, so every position also attends to the positions after it."""


class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x, cache=None):
        B, N, D = x.shape
        q = self.q_proj(x).view(B, N, self.num_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(x).view(B, N, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(x).view(B, N, self.num_kv_heads, self.d_head).transpose(1, 2)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        group = self.num_heads // self.num_kv_heads
        scores = q @ k.repeat_interleave(group, dim=1).transpose(-2, -1) / math.sqrt(self.d_head)
        out = (torch.softmax(scores, dim=-1) @ v.repeat_interleave(group, dim=1)).transpose(1, 2).reshape(B, N, D)
        return self.out_proj(out), (k, v)
