"""train_tagger: a DataLoader over a TensorDataset with shuffle=True does the shuffling and batching."""
from torch.utils.data import DataLoader, TensorDataset


def train_tagger(model, dataset, epochs, lr, batch_size=32, show_progress=False):
    loader = DataLoader(TensorDataset(*dataset), batch_size=batch_size, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in tqdm(range(epochs), file=sys.stdout, disable=not show_progress):
        model.train()
        batch_losses = []
        for ids, tags in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(ids).flatten(0, 1), tags.reshape(-1), ignore_index=IGNORE)
            loss.backward()
            optimizer.step()
            batch_losses.append(loss.item())
        history.append(sum(batch_losses) / len(batch_losses))
    return history
