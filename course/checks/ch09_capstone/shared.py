"""ch09_capstone: what its modules share: the assignment, its contract names and forbidden routines."""
from ...capstone import ACCURACY_THRESHOLD, GRADED_EPOCHS, GRADED_LR, GRADED_SEED, TEST_SIZE, TRAIN_SIZE  # noqa: F401 - the contract's numbers
from ..ch06_multi_head import MHSA_FORBIDDEN

A = ASSIGNMENT = "09"
CONTRACT = ["PositionalEncoding", "MultiHeadSelfAttention", "TinyTagger", "train_tagger", "make_variant", "run_ablation"]

ATTENTION_FORBIDDEN = MHSA_FORBIDDEN + ("torch.nn.TransformerEncoderLayer", "torch.nn.TransformerEncoder", "torch.nn.Transformer")
# Convolutions and recurrent layers are not allowed in the tagger (besides the module tree, their functional forms).
LAYER_FORBIDDEN = ATTENTION_FORBIDDEN + ("torch.nn.functional.conv1d", "torch.nn.functional.conv2d", "torch.convolution")  # aten::convolution: any conv
FORBIDDEN_LAYER_KINDS = ("Conv", "RNN", "LSTM", "GRU")  # class names containing these (nn.Conv1d, nn.LSTM, ...)

# The graded run (stated in the notebook and on page 09: course.capstone): seed, data, epochs,
# learning rate, threshold; its CPU budget and the calibration that scales it are the grader's.
CPU_BUDGET_S = 60.0          # seconds of training on an idle machine with 2 CPU cores
CALIBRATION_IDLE_S = 0.2     # seconds the calibration loop below takes on such a machine
