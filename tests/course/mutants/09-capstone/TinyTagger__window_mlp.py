"""TinyTagger without attention: a window MLP over the whole sentence (+/-18 words), the chapter's window baseline made wide.

Breaks: 09.TinyTagger.attention
"""
class TinyTagger(nn.Module):
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64, window=18):
        super().__init__()
        self.window = window
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.position = PositionalEncoding(d_model, max_len)
        self.mlp = nn.Sequential(nn.Linear((2 * window + 1) * d_model, 64), nn.ReLU(), nn.Linear(64, num_tags))

    def forward(self, ids):
        x = self.position(self.embedding(ids)) * (ids != PAD_ID)[..., None]   # padding contributes zeros
        x = F.pad(x, (0, 0, self.window, self.window))                        # (B, N + 2w, d)
        windows = x.unfold(1, 2 * self.window + 1, 1)                          # (B, N, d, 2w+1)
        return self.mlp(windows.transpose(-1, -2).flatten(-2))
