"""TinyTagger: the block as specified (post-norm), but a convolution (kernel 5) does the mixing in place of the
attention, which is built and never called.

Breaks: 09.TinyTagger.attention
"""
class TinyTagger(TinyTagger):  # the reference __init__ (attention built), plus a convolution
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__(vocab_size, num_tags, d_model, num_heads, max_len)
        self.mixer = nn.Conv1d(d_model, d_model, 5, padding=2)

    def forward(self, ids):
        real = (ids != PAD_ID)[..., None]
        x = self.position(self.embedding(ids)) * real
        x = self.norm1(x + self.mixer(x.transpose(1, 2)).transpose(1, 2) * real)
        x = self.norm2(x + self.feed_forward(x))
        return self.classifier(x)
