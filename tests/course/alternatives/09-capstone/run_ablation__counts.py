"""run_ablation: a helper that trains and counts correct ambiguous words, results built with a dict comprehension."""
def _measure(name, dataset, test_data, epochs, lr, seed):
    set_seed(seed)
    model = make_variant(name).to(device)
    train_tagger(model, dataset, epochs, lr)
    model.eval()
    ids, tags = test_data
    with torch.inference_mode():
        guess = model(ids).argmax(dim=-1)
    where = ambiguous_mask(ids)
    return int((guess[where] == tags[where]).sum()) / int(where.sum())


def run_ablation(dataset, test_data, epochs, lr, seed=0):
    return {name: _measure(name, dataset, test_data, epochs, lr, seed) for name in ABLATION_VARIANTS}
