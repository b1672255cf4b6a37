"""run_ablation: calls set_seed once before the loop, so every variant after the first starts from another random state.

Breaks: 09.run_ablation.values
"""
def run_ablation(dataset, test_data, epochs, lr, seed=0):
    ids, tags = test_data
    results = {}
    set_seed(seed)
    for name in ABLATION_VARIANTS:
        model = make_variant(name).to(device)
        train_tagger(model, dataset, epochs, lr)
        model.eval()
        with torch.no_grad():
            predictions = model(ids).argmax(-1)
        results[name] = (predictions == tags)[ambiguous_mask(ids)].float().mean().item()
    return results
