"""run_ablation: an OrderedDict, accuracies as float(numpy mean) of the boolean hits."""
from collections import OrderedDict


def run_ablation(dataset, test_data, epochs, lr, seed=0):
    results = OrderedDict()
    for variant in list(ABLATION_VARIANTS):
        set_seed(seed)
        tagger = make_variant(variant)
        tagger.to(device)
        train_tagger(tagger, dataset, epochs=epochs, lr=lr)
        tagger.eval()
        with torch.no_grad():
            hits = (tagger(test_data[0]).argmax(-1) == test_data[1])[ambiguous_mask(test_data[0])]
        results[variant] = float(hits.cpu().numpy().mean())
    return results
