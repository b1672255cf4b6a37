"""most_similar: a loop with >=, so ties go to the largest j.

Breaks: 02.most_similar.ties
"""
def most_similar(X, i):
    best, best_j = float("-inf"), None
    for j in range(X.shape[0]):
        if j != i and float(X[i] @ X[j]) >= best:
            best, best_j = float(X[i] @ X[j]), j
    return best_j
