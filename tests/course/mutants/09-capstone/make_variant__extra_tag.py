"""make_variant: counts <pad> as a tag, TinyTagger(len(VOCAB), len(TAGS) + 1), so the logits have one column too many.

Breaks: 09.make_variant.model
"""
_reference_make_variant = make_variant


def make_variant(name):
    model = _reference_make_variant(name)
    model.classifier = nn.Linear(32, len(TAGS) + 1)
    return model


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
