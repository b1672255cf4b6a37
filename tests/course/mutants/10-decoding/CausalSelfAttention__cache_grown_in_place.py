"""CausalSelfAttention: grows the given cache tensors in place (set_ to the concatenation) instead of returning new ones.

Breaks: 10.CausalSelfAttention.unchanged
"""


class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x, cache=None):
        out, (k, v) = super().forward(x, cache)
        if cache is not None:
            with torch.no_grad():
                cache[0].set_(k.detach().clone())
                cache[1].set_(v.detach().clone())
            k, v = cache
        return out, (k, v)
