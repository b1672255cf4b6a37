"""greedy_generate: re-runs the model on the whole prefix at every step (cache=None), right tokens at O(n^2) cost.

Breaks: 10.greedy_generate.cache
"""


def greedy_generate(model, prompt_ids, max_new_tokens):
    ids = prompt_ids.clone()
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits, _ = model(ids)
            ids = torch.cat([ids, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    return ids
