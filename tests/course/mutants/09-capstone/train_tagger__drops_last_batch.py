"""train_tagger: skips the last batch when it is smaller than batch_size (like DataLoader(drop_last=True)), so
some sentences are never trained in an epoch.

Breaks: 09.train_tagger.batch_size
"""
def train_tagger(model, dataset, epochs, lr, batch_size=32, show_progress=False):
    ids, tags = dataset
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(ids), device=ids.device)
        total, batches = 0.0, 0
        for start in range(0, len(ids) - batch_size + 1, batch_size):
            batch = order[start : start + batch_size]
            loss = F.cross_entropy(model(ids[batch]).flatten(0, 1), tags[batch].flatten(), ignore_index=IGNORE)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        losses.append(total / batches)
    return losses
