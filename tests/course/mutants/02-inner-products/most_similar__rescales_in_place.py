"""most_similar: divides X in place by its largest entry "to avoid overflow" (the ranking is unchanged, the caller's X is not).

Breaks: 02.most_similar.unchanged
"""
def most_similar(X, i):
    X /= X.abs().max()
    scores = X @ X[i]
    scores[i] = float("-inf")
    return int(torch.argmax(scores))
