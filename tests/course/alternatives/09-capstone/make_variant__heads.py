"""make_variant: ablates the number of heads (1, 2, 4, 8) at d_model = 32."""
ABLATION_VARIANTS = ["1 head", "2 heads", "4 heads", "8 heads"]


def make_variant(name):
    heads = int(name.split()[0])
    return TinyTagger(len(VOCAB), len(TAGS), d_model=32, num_heads=heads)


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
