"""TinyTagger: builds the attention module but never calls it; three residual convolutions (kernel 9) do the mixing.

Breaks: 09.TinyTagger.attention
"""
class TinyTagger(TinyTagger):  # the reference __init__ (attention built), plus convolutions
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__(vocab_size, num_tags, d_model, num_heads, max_len)
        self.convs = nn.ModuleList(nn.Conv1d(d_model, d_model, 9, padding=4) for _ in range(3))

    def forward(self, ids):
        x = (self.position(self.embedding(ids)) * (ids != PAD_ID)[..., None]).transpose(1, 2)  # (B, d, N), padding zeroed
        for conv in self.convs:
            x = x + F.relu(conv(x)) * (ids != PAD_ID)[:, None, :]
        return self.classifier(x.transpose(1, 2))
