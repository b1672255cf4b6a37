"""Hidden checks for 09-capstone ("I saw a saw").

The capstone notebook defines its own ``PositionalEncoding`` (the sinusoid, as in 07)
and ``MultiHeadSelfAttention`` (ground truths of 06: ``torch.nn.MultiheadAttention``
loaded with the student's weights, and the masked closed form), then ``TinyTagger``,
``train_tagger`` and an ablation (``make_variant``, ``run_ablation``).

The graded run trains a fresh ``TinyTagger`` with a fixed seed on the data of
``course.tagging_data``. Its accuracy threshold sits above the fixed-window
baselines of ``course.capstone`` (``BASELINES``: window MLPs and convolutions trained the
same way on the same data; tests/course/test_capstone_baselines.py measures them; a
bidirectional GRU, ``RECURRENT_BASELINES``, clears it, which is why recurrent layers are
forbidden in the tagger rather than beaten by it), and
ablation checks make sure the accuracy comes from the student's attention and
positional encoding: perturbing ``attention.out_proj`` or ``position.pe`` changes
the logits, shuffling a sentence changes its predicted tags, and the tagger has no
convolution or recurrent layer.
"""
from autograder.checking import contract_clauses

from ...capstone import ACCURACY_THRESHOLD, GRADED_EPOCHS, GRADED_LR, GRADED_SEED, TEST_SIZE, TRAIN_SIZE  # noqa: F401 - the contract's numbers
from ..ch06_multi_head import MHSA_FORBIDDEN

A = ASSIGNMENT = "09"
CONTRACT = ["PositionalEncoding", "MultiHeadSelfAttention", "TinyTagger", "train_tagger", "make_variant", "run_ablation"]

ATTENTION_FORBIDDEN = MHSA_FORBIDDEN + ("torch.nn.TransformerEncoderLayer", "torch.nn.TransformerEncoder", "torch.nn.Transformer")
# Convolutions and recurrent layers are not allowed in the tagger (besides the module tree, their functional forms).
LAYER_FORBIDDEN = ATTENTION_FORBIDDEN + ("torch.nn.functional.conv1d", "torch.nn.functional.conv2d")
FORBIDDEN_LAYER_KINDS = ("Conv", "RNN", "LSTM", "GRU")  # class names containing these (nn.Conv1d, nn.LSTM, ...)

# The graded run (stated in the notebook and on page 09: course.capstone): seed, data, epochs,
# learning rate, threshold; its CPU budget and the calibration that scales it are the grader's.
CPU_BUDGET_S = 60.0          # seconds of training on an idle machine with 2 CPU cores
CALIBRATION_IDLE_S = 0.2     # seconds the calibration loop below takes on such a machine

CLAUSES = contract_clauses(__file__, globals())

# the checks register themselves when their modules are imported: layers.py (PositionalEncoding,
# MultiHeadSelfAttention), tagger.py (TinyTagger), training.py (train_tagger), graded_run.py (the
# graded run, and the training of the baselines its threshold sits above), ablation.py
from . import ablation, graded_run, layers, tagger, training  # noqa: E402,F401
from .graded_run import measure_baselines, train_reference  # noqa: E402,F401 - tests/course/test_capstone_baselines.py
