"""train_tagger: returns the sum of the batch losses of each epoch instead of their mean.

Breaks: 09.train_tagger.loss
"""
def train_tagger(model, dataset, epochs, lr, batch_size=32, show_progress=False):
    ids, tags = dataset
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(ids), device=ids.device)
        total = 0.0
        for start in range(0, len(ids), batch_size):
            batch = order[start:start + batch_size]
            logits = model(ids[batch])
            loss = F.cross_entropy(logits.flatten(0, 1), tags[batch].flatten(), ignore_index=IGNORE)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total)
    return losses
