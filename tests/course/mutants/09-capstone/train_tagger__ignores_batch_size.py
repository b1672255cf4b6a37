"""train_tagger: always uses batches of 32 sentences, whatever batch_size says.

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
        for start in range(0, len(ids), 32):
            batch = order[start:start + 32]
            logits = model(ids[batch])
            loss = F.cross_entropy(logits.flatten(0, 1), tags[batch].flatten(), ignore_index=IGNORE)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        losses.append(total / batches)
    return losses
