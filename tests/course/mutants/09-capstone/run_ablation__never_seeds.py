"""run_ablation: never calls set_seed, so the numbers change from one call to the next.

Breaks: 09.run_ablation.reproducible
"""
def run_ablation(dataset, test_data, epochs, lr, seed=0):
    ids, tags = test_data
    results = {}
    for name in ABLATION_VARIANTS:
        model = make_variant(name).to(device)
        train_tagger(model, dataset, epochs, lr)
        model.eval()
        with torch.no_grad():
            predictions = model(ids).argmax(-1)
        results[name] = (predictions == tags)[ambiguous_mask(ids)].float().mean().item()
    return results
