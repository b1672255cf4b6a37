"""TinyTagger: the block split into named helper steps, feed_forward built with add_module, the mask from ids.ne(PAD_ID).unsqueeze(1).unsqueeze(1)."""
class TinyTagger(nn.Module):
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.position = PositionalEncoding(d_model, max_len)
        self.attention = MultiHeadSelfAttention(d_model, num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential()
        self.feed_forward.add_module("up", nn.Linear(d_model, 2 * d_model))
        self.feed_forward.add_module("relu", nn.ReLU())
        self.feed_forward.add_module("down", nn.Linear(2 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.classifier = nn.Linear(d_model, num_tags)

    def _mix(self, x, ids):
        return self.norm1(x + self.attention(x, mask=ids.ne(PAD_ID).unsqueeze(1).unsqueeze(1)))

    def _per_position(self, x):
        return self.norm2(x + self.feed_forward(x))

    def forward(self, ids):
        return self.classifier(self._per_position(self._mix(self.position(self.embedding(ids)), ids)))
