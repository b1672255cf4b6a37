"""run_ablation: reports accuracies in percent (0 to 100).

Breaks: 09.run_ablation.keys
"""
def run_ablation(dataset, test_data, epochs, lr, seed=0):
    ids, tags = test_data
    results = {}
    for name in ABLATION_VARIANTS:
        set_seed(seed)
        model = make_variant(name).to(device)
        train_tagger(model, dataset, epochs, lr)
        model.eval()
        with torch.no_grad():
            predictions = model(ids).argmax(-1)
        results[name] = 100 * (predictions == tags)[ambiguous_mask(ids)].float().mean().item()
    return results
