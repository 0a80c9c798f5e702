"""Sizes in bytes: weights at a precision, KV cache per token and per sequence, tensor shapes.

Weights: parameters x bytes per parameter, where a quantised format's bytes include its scale
overhead and formats that keep embeddings in 16-bit (GPTQ, AWQ, NF4) are charged for that. GGUF
mixtures are resolved tensor by tensor with llama.cpp's rule (`precision.gguf_tensor_type`).

KV cache: 2 x layers x kv_heads x head_dim x bytes per token (DESIGN.md), or the model's MLA
override; sliding-window layers hold at most `sliding_window` tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from wheretorun.engine.precision import (
    Precision,
    bits_per_weight,
    count_more_bits_layers,
    gguf_tensor_type,
    is_gguf_mixture,
    kv_bytes_per_element,
    uniform_format,
)
from wheretorun.engine.roofline import float64s
from wheretorun.engine.specs import AttentionKind, ModelArchitecture

__all__ = [
    "TensorShapes",
    "kv_cache_bytes_per_sequence",
    "kv_cache_bytes_per_token",
    "kv_tokens_held",
    "tensor_shapes",
    "weights_bytes",
]

# llama.cpp's LLM_TYPE_70B is assigned to 80-layer Llama / Qwen2 models (src/llama-model.cpp).
_LLAMA_70B_LAYERS = 80


@dataclass(frozen=True, slots=True)
class TensorShapes:
    """Parameter counts by tensor role. Per-layer roles are per layer (all experts summed);
    `other` reconciles the architecture-derived count with the declared total (norms, biases,
    MLA projections, multi-token-prediction heads); it may be slightly negative."""

    attn_q: float
    attn_k: float
    attn_v: float
    attn_output: float
    ffn_gate: float
    ffn_up: float
    ffn_down: float
    token_embd: float
    output: float
    other: float

    @property
    def per_layer(self) -> dict[str, float]:
        return {
            "attn_q": self.attn_q,
            "attn_k": self.attn_k,
            "attn_v": self.attn_v,
            "attn_output": self.attn_output,
            "ffn_gate": self.ffn_gate,
            "ffn_up": self.ffn_up,
            "ffn_down": self.ffn_down,
        }


def _attention_params_per_layer(model: ModelArchitecture) -> tuple[float, float, float, float]:
    if model.attention == AttentionKind.MLA:
        return 0.0, 0.0, 0.0, 0.0  # latent projections have no q/k/v split; counted in `other`
    kv_width = model.kv_heads * model.head_dim
    return (
        float(model.hidden_size * model.attention_width),
        float(model.hidden_size * kv_width),
        float(model.hidden_size * kv_width),
        float(model.attention_width * model.hidden_size),
    )


def _ffn_params_per_layer(model: ModelArchitecture, attention_per_layer: float) -> float:
    """All experts' MLP parameters in one layer; derived from the total when the width is unknown."""
    matrices = 3 if model.gated_mlp else 2
    if model.intermediate_size is not None:
        return float(matrices * model.hidden_size * model.intermediate_size * model.experts)
    vocab_params = model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2)
    remainder = model.total_params - vocab_params - attention_per_layer * model.layers
    return max(remainder / model.layers, 0.0)


@lru_cache(maxsize=1024)
def tensor_shapes(model: ModelArchitecture) -> TensorShapes:
    """Split the declared parameter count into tensor roles using the architecture."""
    q, k, v, o = _attention_params_per_layer(model)
    ffn = _ffn_params_per_layer(model, q + k + v + o)
    matrices = 3 if model.gated_mlp else 2
    gate = ffn / matrices if model.gated_mlp else 0.0
    up = ffn / matrices
    down = ffn / matrices
    token_embd = float(model.vocab_size * model.hidden_size)
    output = 0.0 if model.tied_embeddings else token_embd
    derived = model.layers * (q + k + v + o + gate + up + down) + token_embd + output
    return TensorShapes(q, k, v, o, gate, up, down, token_embd, output, model.total_params - derived)


def _gguf_bits(model: ModelArchitecture, precision: Precision) -> float:
    shapes = tensor_shapes(model)
    more_layers = count_more_bits_layers(model.layers)
    base_layers = model.layers - more_layers
    is_70b = model.layers == _LLAMA_70B_LAYERS

    def bpw(tensor: str, more_bits_layer: bool = False) -> float:
        ggml_type = gguf_tensor_type(
            precision, tensor, more_bits_layer=more_bits_layer, experts=model.experts, is_70b_class=is_70b
        )
        return bits_per_weight(ggml_type)

    bits = 0.0
    for tensor, params in shapes.per_layer.items():
        bits += params * (more_layers * bpw(tensor, True) + base_layers * bpw(tensor, False))
    embedding_role = "output" if model.tied_embeddings else "token_embd"
    bits += shapes.token_embd * bpw(embedding_role) + shapes.output * bpw("output")
    bits += shapes.other * bpw("attn_q")  # norms/biases/other: charged at the mixture's base type
    return bits


@lru_cache(maxsize=4096)
def weights_bytes(model: ModelArchitecture, precision: Precision) -> float:
    """Bytes of all weights (total parameters, every expert) stored at `precision`."""
    fmt = uniform_format(precision)
    if fmt is None:
        assert is_gguf_mixture(precision)
        return _gguf_bits(model, precision) / 8
    if not fmt.embeddings_16bit:
        return model.total_params * fmt.bits_per_weight / 8
    shapes = tensor_shapes(model)
    embeddings = shapes.token_embd + shapes.output
    return embeddings * 2 + (model.total_params - embeddings) * fmt.bits_per_weight / 8


def kv_cache_bytes_per_token(model: ModelArchitecture, kv_precision: Precision) -> float:
    """Bytes cached per token when every layer holds it: layers x cached elements x bytes.

    For Llama-3-70B at 16-bit: 80 x (2 x 8 x 128) x 2 = 327,680 (calibration models.csv).
    """
    return model.layers * model.cached_elements_per_layer * kv_bytes_per_element(kv_precision)


def kv_tokens_held(model: ModelArchitecture, context_tokens: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Token-layers held in cache at a context length: full layers hold all tokens,
    sliding-window layers at most the window. Returns layers-equivalent x tokens."""
    context = float64s(context_tokens)
    window_layers = model.sliding_window_layers
    full_layers = model.layers - window_layers
    window = float(model.sliding_window or 0)
    return float64s(full_layers * context + window_layers * np.minimum(context, window))


def kv_cache_bytes_per_sequence(
    model: ModelArchitecture, kv_precision: Precision, context_tokens: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Bytes of KV cache one sequence holds at `context_tokens` (input + generated so far)."""
    per_token_layer = model.cached_elements_per_layer * kv_bytes_per_element(kv_precision)
    return float64s(per_token_layer * kv_tokens_held(model, context_tokens))
