"""PositionalEncoding: adds the encoding to x in place (x += pe[:N]), changing the caller's tensor.

Breaks: 09.PositionalEncoding.unchanged
"""
class PositionalEncoding(PositionalEncoding):
    def forward(self, x):
        n = x.shape[-2]
        if n > self.pe.shape[0]:
            raise ValueError("sequence longer than max_len")
        x += self.pe[:n]
        return self.dropout(x)
