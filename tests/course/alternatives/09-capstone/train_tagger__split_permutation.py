"""train_tagger: batches from torch.split of a permutation, losses collected in a tensor and returned with tolist()."""
def train_tagger(model, dataset, epochs, lr, batch_size=32, show_progress=False):
    ids, tags = dataset
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    epoch_losses = torch.zeros(epochs, dtype=torch.float64)
    for epoch in range(epochs):
        batches = torch.split(torch.randperm(ids.shape[0], device=ids.device), batch_size)
        for index in batches:
            logits = model(ids[index])
            loss = F.cross_entropy(logits.permute(0, 2, 1), tags[index], ignore_index=IGNORE)  # (b, tags, N) form
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses[epoch] += loss.item() / len(batches)
        if show_progress:
            print(f"epoch {epoch + 1}/{epochs}: {epoch_losses[epoch]:.4f}")
    return epoch_losses.tolist()
