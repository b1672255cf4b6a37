"""TinyTagger: uses the forbidden nn.MultiheadAttention instead of its own attention."""
class TinyTagger(nn.Module):
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.position = PositionalEncoding(d_model, max_len)
        self.attention = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.ReLU(), nn.Linear(2 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.classifier = nn.Linear(d_model, num_tags)

    def forward(self, ids):
        x = self.position(self.embedding(ids))
        attended, _ = self.attention(x, x, x, key_padding_mask=ids == PAD_ID)
        x = self.norm1(x + attended)
        x = self.norm2(x + self.feed_forward(x))
        return self.classifier(x)
