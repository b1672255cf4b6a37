"""TinyTagger: applies a softmax in forward, returning probabilities instead of logits.

Breaks: 09.TinyTagger.logits
"""
class TinyTagger(TinyTagger):  # the reference __init__, a wrong forward
    def forward(self, ids):
        keep = (ids != PAD_ID)[:, None, None, :]
        x = self.position(self.embedding(ids))
        x = self.norm1(x + self.attention(x, mask=keep))
        x = self.norm2(x + self.feed_forward(x))
        return torch.softmax(self.classifier(x), dim=-1)
