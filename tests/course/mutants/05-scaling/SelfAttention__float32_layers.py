"""SelfAttention: casts the input to float32 before the layers, so a float64 layer fails or returns float32.

Breaks: 05.SelfAttention.dtype_device
"""


class SelfAttention(SelfAttention):
    """The reference layers (inherited __init__), a wrong forward."""

    def forward(self, x, mask=None):
        x = x.float()
        Q, K, V = self.q.float()(x), self.k.float()(x), self.v.float()(x)
        output, _ = scaled_dot_product_attention(Q, K, V, mask)
        return output
