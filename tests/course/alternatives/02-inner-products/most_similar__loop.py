"""most_similar: a plain Python loop with a strict comparison (the first maximum wins)."""
def most_similar(X, i):
    best_j, best = None, None
    for j in range(X.shape[0]):
        if j == i:
            continue
        score = float(torch.dot(X[i], X[j]))
        if best is None or score > best:
            best_j, best = j, score
    return best_j
