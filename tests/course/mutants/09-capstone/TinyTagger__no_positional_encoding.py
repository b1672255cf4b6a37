"""TinyTagger: never adds the positional encoding, so the model is a bag of words.

Breaks: 09.TinyTagger.order
"""
class TinyTagger(TinyTagger):  # the reference __init__, a wrong forward
    def forward(self, ids):
        keep = (ids != PAD_ID)[:, None, None, :]
        x = self.embedding(ids)
        x = self.norm1(x + self.attention(x, mask=keep))
        x = self.norm2(x + self.feed_forward(x))
        return self.classifier(x)
