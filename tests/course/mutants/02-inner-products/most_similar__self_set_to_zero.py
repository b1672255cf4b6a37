"""most_similar: excludes i by setting its score to 0, which still wins when all other scores are negative.

Breaks: 02.most_similar.self
"""
def most_similar(X, i):
    scores = X @ X[i]
    scores[i] = 0.0
    return int(torch.argmax(scores))
