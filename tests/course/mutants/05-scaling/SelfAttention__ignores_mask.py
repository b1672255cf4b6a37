"""SelfAttention: accepts mask but never applies it.

Breaks: 05.SelfAttention.mask
"""


class SelfAttention(SelfAttention):
    """The reference layers (inherited __init__), a wrong forward."""

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        output, _ = scaled_dot_product_attention(Q, K, V)
        return output
