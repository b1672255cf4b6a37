"""TinyTagger: builds its positional encoding for 20 positions ("long enough for the data") instead of max_len, so longer inputs raise.

Breaks: 09.TinyTagger.shapes
"""
class TinyTagger(TinyTagger):  # the reference forward
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__(vocab_size, num_tags, d_model, num_heads, max_len)
        self.position = PositionalEncoding(d_model, 20)
