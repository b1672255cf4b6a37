"""TinyTagger: lets every token attend to the padding, so the tags depend on how much padding follows.

Breaks: 09.TinyTagger.padding
"""
class TinyTagger(TinyTagger):  # the reference __init__, a wrong forward
    def forward(self, ids):
        x = self.position(self.embedding(ids))
        x = self.norm1(x + self.attention(x))
        x = self.norm2(x + self.feed_forward(x))
        return self.classifier(x)
