"""TinyTagger whose block calls F.layer_norm with norm1's and norm2's own parameters, the residual sums written
out first (post-norm), the padding mask from ids.gt(0)."""
class TinyTagger(nn.Module):
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.position = PositionalEncoding(d_model, max_len)
        self.attention = MultiHeadSelfAttention(d_model, num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.ReLU(), nn.Linear(2 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.classifier = nn.Linear(d_model, num_tags)

    def forward(self, ids):
        shape = (self.norm1.normalized_shape[0],)
        x = self.position(self.embedding(ids))
        summed = x + self.attention(x, mask=ids.gt(PAD_ID).view(ids.shape[0], 1, 1, ids.shape[1]))
        h = F.layer_norm(summed, shape, self.norm1.weight, self.norm1.bias, self.norm1.eps)
        summed = h + self.feed_forward(h)
        return self.classifier(F.layer_norm(summed, shape, self.norm2.weight, self.norm2.bias, self.norm2.eps))
