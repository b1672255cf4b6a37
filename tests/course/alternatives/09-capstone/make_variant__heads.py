"""make_variant: ablates the number of heads (1, 2, 4, 8) at d_model = 32."""
ABLATION_VARIANTS = ["1 head", "2 heads", "4 heads", "8 heads"]


def make_variant(name):
    heads = int(name.split()[0])
    return TinyTagger(len(VOCAB), len(TAGS), d_model=32, num_heads=heads)
