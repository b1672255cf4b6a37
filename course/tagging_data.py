"""The capstone's data: a seeded generator of tagged sentences ("I saw a saw").

This file is the one source. The capstone notebook's locked data cell holds a
verbatim copy of everything below the marker line (student notebooks must run
standalone, so they cannot import it); the hidden checks of 09 import it, and the
book page imports and shows it.
"""
# ---- generator (copied verbatim into the capstone notebook) ----
import random

import torch

TAGS = ["PRON", "DET", "ADJ", "ADV", "NOUN", "VERB", "AUX", "PREP", "PUNCT"]
PAD = "<pad>"          # padding token (id 0); its tag id is IGNORE, which the loss skips
IGNORE = -100          # F.cross_entropy's default ignore_index
MAX_WORDS = 19         # the longest sentence the grammar makes, "." included (1 + 14 + 1 + 2 + 1)

PRONOUNS = ["I", "we", "you", "they"]
DETERMINERS = ["the", "my", "our", "your", "this"]
ORDINALS = ["first", "only", "last", "next"]            # ADJ after a determiner, ADV after a pronoun
ACTIVITIES = ["walk", "run", "dance", "swim", "ride", "fish", "train", "park", "camp", "play"]  # NOUN or VERB
WHEN = [["at", "night"], ["at", "noon"], ["in", "town"], ["at", "home"]]
OPENERS = [[], ["then"], ["so"], ["today", ","]]
OBJECTS = ["saw", "watch", "book", "can", "duck", "fish", "train", "park"]   # NOUN after an article
ACTIONS = ["saw", "watch", "book", "train", "park"]                        # VERB after a pronoun
ARTICLES = ["a", "the", "my", "this"]
LONG_MIN, LONG_MAX = 4, 14


def _vocabulary() -> list[str]:
    words = [PAD] + PRONOUNS + DETERMINERS + ORDINALS + ACTIVITIES + [w for pair in WHEN for w in pair]
    words += [w for opener in OPENERS for w in opener] + OBJECTS + ACTIONS + ARTICLES + ["can", "roll", "fall", "."]
    return list(dict.fromkeys(words))  # first occurrence order, no repeats


VOCAB = _vocabulary()
WORD_ID = {w: i for i, w in enumerate(VOCAB)}
PAD_ID = WORD_ID[PAD]  # 0
TAG_ID = {t: i for i, t in enumerate(TAGS)}
# Words the grammar uses with more than one tag: only context can tell which.
AMBIGUOUS = sorted(set(ORDINALS) | set(ACTIVITIES) | (set(OBJECTS) & set(ACTIONS)) | {"can"})


def _sentence(rng: random.Random) -> tuple[list[str], list[str]]:
    words, tags = [], []

    def add(word, tag):
        words.append(word)
        tags.append(tag)

    def noun_phrase(min_ordinals, max_ordinals):
        # "my first last walk": the determiner makes the ordinals ADJ and the activity a NOUN
        add(rng.choice(DETERMINERS), "DET")
        for w in rng.sample(ORDINALS, rng.randint(min_ordinals, max_ordinals)):
            add(w, "ADJ")
        add(rng.choice(ACTIVITIES), "NOUN")

    def verb_phrase(min_ordinals, max_ordinals):
        # "we first last walk": the pronoun makes the ordinals ADV and the activity a VERB
        add(rng.choice(PRONOUNS), "PRON")
        for w in rng.sample(ORDINALS, rng.randint(min_ordinals, max_ordinals)):
            add(w, "ADV")
        add(rng.choice(ACTIVITIES), "VERB")

    def long_phrase(noun):
        # "my first first last next only walk": any number of stacked ordinals
        add(rng.choice(DETERMINERS if noun else PRONOUNS), "DET" if noun else "PRON")
        for w in rng.choices(ORDINALS, k=rng.randint(LONG_MIN, LONG_MAX)):
            add(w, "ADJ" if noun else "ADV")
        add(rng.choice(ACTIVITIES), "NOUN" if noun else "VERB")

    kind = rng.random()
    if kind < 0.2:
        # Two cues, far apart: "so we only play the first dance ." The nearest determiner
        # or pronoun to the LEFT decides each ordinal and activity word, up to 4 tokens back.
        for w in rng.choice(OPENERS):
            add(w, "PUNCT" if w == "," else "ADV")
        verb_phrase(0, 2)
        noun_phrase(0, 3)
    elif kind < 0.8:
        # One cue, far away: "my first last walk at night ." or "we first last walk at night ."
        # Around "walk" both read "first last walk at night": only the first word decides.
        long_phrase(rng.random() < 0.5)
        for w in rng.choice(WHEN):
            add(w, "PREP" if w in ("at", "in") else "NOUN")
    elif kind < 0.9:
        # Near cue: "I saw a saw ." -- pronoun, verb, article, noun.
        add(rng.choice(PRONOUNS), "PRON")
        add(rng.choice(ACTIONS), "VERB")
        add(rng.choice(ARTICLES), "DET")
        add(rng.choice(OBJECTS), "NOUN")
    elif rng.random() < 0.5:
        # "we can fish ." -- can is an auxiliary, the activity a verb.
        add(rng.choice(PRONOUNS), "PRON")
        add("can", "AUX")
        add(rng.choice(ACTIVITIES), "VERB")
    else:
        # "the can can roll ." -- a noun, then an auxiliary.
        add(rng.choice(ARTICLES), "DET")
        add("can", "NOUN")
        add("can", "AUX")
        add(rng.choice(["roll", "fall"]), "VERB")
    add(".", "PUNCT")
    return words, tags


def generate_sentences(num_sentences: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """num_sentences (words, tags) pairs, the same for the same seed on every machine."""
    rng = random.Random(seed)
    return [_sentence(rng) for _ in range(num_sentences)]


def encode(sentences, max_len: int = MAX_WORDS) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, tags) LongTensors of shape (S, max_len); padding has id 0 and tag IGNORE."""
    ids = torch.zeros(len(sentences), max_len, dtype=torch.long)
    tags = torch.full((len(sentences), max_len), IGNORE, dtype=torch.long)
    for s, (words, word_tags) in enumerate(sentences):
        ids[s, : len(words)] = torch.tensor([WORD_ID[w] for w in words])
        tags[s, : len(words)] = torch.tensor([TAG_ID[t] for t in word_tags])
    return ids, tags


def ambiguous_mask(ids: torch.Tensor) -> torch.Tensor:
    """True at the positions that hold an ambiguous word."""
    ambiguous_ids = torch.tensor([WORD_ID[w] for w in AMBIGUOUS], device=ids.device)
    return torch.isin(ids, ambiguous_ids)


def make_splits(train_size: int = 2000, test_size: int = 1000, seed: int = 0):
    """Training sentences, and held-out sentences that never occur in the training set."""
    train = generate_sentences(train_size, seed)
    seen = {" ".join(words) for words, _ in train}
    test, k = [], 0
    while len(test) < test_size:
        batch = generate_sentences(test_size, seed + 1000 + k)
        test += [pair for pair in batch if " ".join(pair[0]) not in seen][: test_size - len(test)]
        k += 1
    return train, test


def set_seed(seed: int) -> None:
    """Seed Python's and torch's random generators (model initialisation, shuffling)."""
    random.seed(seed)
    torch.manual_seed(seed)
