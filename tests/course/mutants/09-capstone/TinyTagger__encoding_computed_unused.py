"""TinyTagger: computes x + PE with position, then feeds the attention the bare embeddings (a name mix-up), so
word order never reaches the logits (long sentences are still refused by position).

Breaks: 09.TinyTagger.order
"""
class TinyTagger(TinyTagger):  # the reference parts
    def forward(self, ids):
        keep = (ids != PAD_ID)[:, None, None, :]
        x = self.embedding(ids)
        h = self.position(x)  # noqa: F841 - computed, never used
        x = self.norm1(x + self.attention(x, mask=keep))
        x = self.norm2(x + self.feed_forward(x))
        return self.classifier(x)
