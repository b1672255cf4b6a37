"""make_variant: ignores the name, so every variant is the same TinyTagger.

Breaks: 09.make_variant.differs
"""
def make_variant(name):
    return TinyTagger(len(VOCAB), len(TAGS))


def run_ablation(dataset, test_data, epochs, lr, seed=0):  # the reference run_ablation, calling the make_variant above
    ids, tags = test_data
    results = {}
    for name in ABLATION_VARIANTS:
        set_seed(seed)
        model = make_variant(name).to(device)
        train_tagger(model, dataset, epochs, lr)
        model.eval()
        with torch.no_grad():
            predictions = model(ids).argmax(-1)
        results[name] = (predictions == tags)[ambiguous_mask(ids)].float().mean().item()
    return results
