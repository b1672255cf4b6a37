"""SelfAttention: two code paths, and the one without a mask forgets the 1/sqrt(dim_k) scale.

Breaks: 05.SelfAttention.values
"""
class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)

    def forward(self, x, mask=None):
        Q, K, V = self.q(x), self.k(x), self.v(x)
        if mask is None:
            return torch.softmax(Q @ K.transpose(-2, -1), dim=-1) @ V
        return scaled_dot_product_attention(Q, K, V, mask)[0]
