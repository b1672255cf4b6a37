"""PositionalEncoding: casts the result to float32, so a float64 input comes back as float32.

Breaks: 09.PositionalEncoding.forward
"""
class PositionalEncoding(PositionalEncoding):
    def forward(self, x):
        return super().forward(x).float()
