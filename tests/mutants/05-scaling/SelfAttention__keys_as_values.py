"""SelfAttention: uses the key projection for the values (V = k(x)), so dim_v is ignored."""


class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)
        self.dim_k, self.dim_v = dim_k, dim_v

    def forward(self, x, mask=None):
        Q, K = self.q(x), self.k(x)
        output, _ = scaled_dot_product_attention(Q, K, K, mask)
        return output
