"""SelfAttention: casts the input to float32 before the layers, so a float64 layer fails or returns float32."""


class SelfAttention(nn.Module):
    def __init__(self, input_dim, dim_k, dim_v):
        super().__init__()
        self.q = nn.Linear(input_dim, dim_k)
        self.k = nn.Linear(input_dim, dim_k)
        self.v = nn.Linear(input_dim, dim_v)
        self.dim_k, self.dim_v = dim_k, dim_v

    def forward(self, x, mask=None):
        x = x.float()
        Q, K, V = self.q.float()(x), self.k.float()(x), self.v.float()(x)
        output, _ = scaled_dot_product_attention(Q, K, V, mask)
        return output
