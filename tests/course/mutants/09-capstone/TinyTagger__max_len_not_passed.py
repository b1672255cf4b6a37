"""TinyTagger: builds position = PositionalEncoding(d_model) without passing max_len (5000 positions), so a
sentence longer than max_len is silently accepted.

Breaks: 09.TinyTagger.max_len
"""
class TinyTagger(TinyTagger):  # the reference forward
    def __init__(self, vocab_size, num_tags, d_model=32, num_heads=4, max_len=64):
        super().__init__(vocab_size, num_tags, d_model, num_heads, max_len)
        self.position = PositionalEncoding(d_model)
