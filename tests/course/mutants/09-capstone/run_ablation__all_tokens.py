"""run_ablation: measures the accuracy on every real token, not only on the ambiguous words.

Breaks: 09.run_ablation.values
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
        results[name] = (predictions == tags)[ids != PAD_ID].float().mean().item()
    return results
