"""TinyTagger: the key mask built from sentence lengths with arange (a word-count comparison instead of ids != PAD_ID)."""
class TinyTagger(nn.Module):
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.position = PositionalEncoding(d_model, max_len=max_len)
        self.attention = MultiHeadSelfAttention(d_model, num_heads=num_heads)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.ReLU(), nn.Linear(2 * d_model, d_model))
        self.norm2 = nn.LayerNorm(d_model)
        self.classifier = nn.Linear(d_model, num_tags)

    def forward(self, ids):
        lengths = (ids != 0).sum(dim=1)                                              # padding only at the end
        keep = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None]
        h = self.position(self.embedding(ids))
        h = self.norm1(h + self.attention(h, keep[:, None, None, :]))
        h = self.norm2(h + self.feed_forward(h))
        return self.classifier(h)
