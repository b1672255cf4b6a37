"""train_tagger: turns the padding tags into tag 0 (clamp), so the loss also trains on padding.

Breaks: 09.train_tagger.loss
"""
def train_tagger(model, dataset, epochs, lr, batch_size=32, show_progress=False):
    ids, tags = dataset
    tags = tags.clamp(min=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(ids), device=ids.device)
        total, batches = 0.0, 0
        for start in range(0, len(ids), batch_size):
            batch = order[start:start + batch_size]
            logits = model(ids[batch])
            loss = F.cross_entropy(logits.flatten(0, 1), tags[batch].flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        losses.append(total / batches)
    return losses
