"""TinyTagger: lets each word attend only to itself and its two neighbours, so far cues are out of reach (the graded run fails).

Breaks: 09.capstone.accuracy
"""
class TinyTagger(TinyTagger):  # the reference __init__, a wrong forward
    def forward(self, ids):
        N = ids.shape[1]
        near = (torch.arange(N, device=ids.device)[:, None] - torch.arange(N, device=ids.device)[None, :]).abs() <= 1
        keep = ((ids != PAD_ID)[:, None, None, :] & near) | torch.eye(N, dtype=torch.bool, device=ids.device)  # a query always keeps itself
        x = self.position(self.embedding(ids))
        x = self.norm1(x + self.attention(x, mask=keep))
        x = self.norm2(x + self.feed_forward(x))
        return self.classifier(x)
