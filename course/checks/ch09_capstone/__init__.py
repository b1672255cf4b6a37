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

from .shared import ACCURACY_THRESHOLD, GRADED_EPOCHS, GRADED_LR, GRADED_SEED, TEST_SIZE, TRAIN_SIZE  # noqa: F401 - the contract's numbers
from .shared import A, ASSIGNMENT, ATTENTION_FORBIDDEN, CALIBRATION_IDLE_S, CONTRACT, CPU_BUDGET_S, FORBIDDEN_LAYER_KINDS, LAYER_FORBIDDEN  # noqa: F401 - the contract's names and numbers

CLAUSES = contract_clauses(__file__, globals())

# the checks register themselves when their modules are imported: layers.py (PositionalEncoding,
# MultiHeadSelfAttention), tagger.py (TinyTagger), training.py (train_tagger), graded_run.py (the
# graded run, and the training of the baselines its threshold sits above), ablation.py
from . import ablation, graded_run, layers, tagger, training  # noqa: E402,F401
from .graded_run import measure_baselines, train_reference  # noqa: E402,F401 - tests/course/test_capstone_baselines.py
