"""TinyTagger: a pre-norm block (x + attention(norm1(x)), x + feed_forward(norm2(x))) where the post-norm one
is specified.

Breaks: 09.TinyTagger.post_norm
"""
class TinyTagger(TinyTagger):  # the reference parts
    def forward(self, ids):
        keep = (ids != PAD_ID)[:, None, None, :]
        x = self.position(self.embedding(ids))
        h = self.norm1(x)
        x = x + self.attention(h, mask=keep)
        x = x + self.feed_forward(self.norm2(x))
        return self.classifier(x)
