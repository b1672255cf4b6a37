"""make_variant: ablates the depth, one encoder block against two (a subclass with a second attention block)."""
ABLATION_VARIANTS = ["one block", "two blocks"]


class TwoBlockTagger(TinyTagger):
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__(vocab_size, num_tags, d_model, num_heads, max_len)
        self.attention2 = MultiHeadSelfAttention(d_model, num_heads)
        self.norm3 = nn.LayerNorm(d_model)
        self.feed_forward2 = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.ReLU(), nn.Linear(2 * d_model, d_model))
        self.norm4 = nn.LayerNorm(d_model)

    def forward(self, ids):
        keep = (ids != PAD_ID)[:, None, None, :]
        x = self.position(self.embedding(ids))
        x = self.norm1(x + self.attention(x, mask=keep))
        x = self.norm2(x + self.feed_forward(x))
        x = self.norm3(x + self.attention2(x, mask=keep))
        x = self.norm4(x + self.feed_forward2(x))
        return self.classifier(x)


def make_variant(name):
    return {"one block": TinyTagger, "two blocks": TwoBlockTagger}[name](len(VOCAB), len(TAGS))


def run_ablation(dataset, test_data, epochs, lr, seed=0):  # over the ABLATION_VARIANTS above
    ids, tags = test_data
    results = {}
    for name in ABLATION_VARIANTS:
        set_seed(seed)
        model = make_variant(name).to(device)
        train_tagger(model, dataset, epochs, lr)
        model.eval()
        with torch.no_grad():
            correct = (model(ids).argmax(-1) == tags)[ambiguous_mask(ids)]
        results[name] = correct.float().mean().item()
    return results
