"""A real forward pass of one Llama-style block in NumPy, keeping what backward reads.

:func:`llama_block_saved` runs one decoder block of a (small) model described by a
:class:`~gpulesson.transformer.TransformerConfig`: RMSNorm, rotary queries and keys,
grouped-query attention, a SwiGLU MLP or a top-k mixture of SwiGLU experts, residual
connections, no dropout. Along the way it keeps, as 16-bit arrays, exactly the tensors a
backward pass needs, named as :func:`gpulesson.activations.activation_tensors` names them.
Attention runs either eagerly (the full ``s x s`` softmax is kept) or the FlashAttention
way: over blocks of keys with a running maximum and sum, so that no score matrix ever
exists for the whole sequence and only the output and one log-sum-exp per head and token
are kept (Dao et al. 2022, Algorithm 1). The bytes of the kept arrays are then a
measurement to hold against the derivation, as ``memory_what_fits`` does for a GPT block.

NumPy is imported inside the functions, so the package stays importable without it.

Taught in: ``notebooks/memory_what_fits.ipynb``.
"""

from __future__ import annotations

from typing import Any

from gpulesson import _validate as v
from gpulesson.transformer import TransformerConfig

__all__ = ["llama_block_saved", "llama_block_saved_bytes"]


def _rms_norm(np: Any, x: Any) -> Any:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)


def _rope(np: Any, x: Any) -> Any:
    """Rotary embedding of ``x`` (b, heads, s, d): rotate pairs by position-dependent
    angles. Backward needs only the angles, so nothing is kept."""
    s, d = x.shape[-2], x.shape[-1]
    freq = 10000.0 ** (-np.arange(0, d, 2, dtype=np.float32) / d)
    angle = np.arange(s, dtype=np.float32)[:, None] * freq[None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


def _silu(np: Any, x: Any) -> Any:
    return x / (1.0 + np.exp(-x))


def _flash_attention(np: Any, q: Any, k: Any, v_: Any, block: int) -> tuple[Any, Any]:
    """Causal attention over key blocks with an online softmax; returns the output and
    the log-sum-exp of every query's scores. Only one block of scores exists at a time."""
    b, a, s, d = q.shape
    scale = 1.0 / np.sqrt(d)
    out = np.zeros_like(q)
    row_max = np.full((b, a, s, 1), -np.inf, dtype=np.float32)
    row_sum = np.zeros((b, a, s, 1), dtype=np.float32)
    positions = np.arange(s)
    for start in range(0, s, block):
        kb, vb = k[:, :, start:start + block], v_[:, :, start:start + block]
        scores = q @ kb.transpose(0, 1, 3, 2) * scale  # b, a, s, block
        future = positions[None, start:start + block] > positions[:, None]
        scores = np.where(future, -np.inf, scores)
        new_max = np.maximum(row_max, scores.max(-1, keepdims=True))
        correction = np.exp(row_max - new_max)
        p = np.exp(scores - new_max)
        row_sum = row_sum * correction + p.sum(-1, keepdims=True)
        out = out * correction + p @ vb
        row_max = new_max
    return out / row_sum, (row_max + np.log(row_sum))[..., 0]


def _eager_attention(np: Any, q: Any, k: Any, v_: Any) -> tuple[Any, Any]:
    s, d = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    future = np.triu(np.ones((s, s), dtype=bool), 1)
    scores = np.where(future, -np.inf, scores)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return probs @ v_, probs


def _weights(np: Any, cfg: TransformerConfig, rng: Any) -> dict[str, Any]:
    d, f = cfg.hidden, cfg.expert_ffn if cfg.moe else cfg.ffn

    def w(*shape: int) -> Any:
        return (0.02 * rng.standard_normal(shape)).astype(np.float32)

    out = {"q": w(d, cfg.q_dim), "k": w(d, cfg.kv_dim), "v": w(d, cfg.kv_dim),
           "o": w(cfg.q_dim, d)}
    n = cfg.experts if cfg.moe else 1
    out.update(gate=[w(d, f) for _ in range(n)], up=[w(d, f) for _ in range(n)],
               down=[w(f, d) for _ in range(n)])
    if cfg.moe:
        out["router"] = w(d, cfg.experts)
    return out


def llama_block_saved(cfg: TransformerConfig, *, seq_len: int, batch: int = 1,
                      attention: str = "flash", block: int = 16,
                      seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """Run one block forward; return its output and the tensors kept for backward.

    Parameters
    ----------
    cfg : TransformerConfig
        A small Llama-style model (RMSNorm, gated MLP, no biases, no dropout, no q/k
        norms, two norms per layer, no latent attention); experts optional.
    seq_len, batch : int
        Sequence length and micro-batch.
    attention : str
        ``"flash"`` (blocks of ``block`` keys, no score matrix kept) or ``"eager"``.
    seed : int
        Seed of the random weights and input.

    Returns
    -------
    (numpy.ndarray, dict[str, numpy.ndarray])
        The block's output (float32, ``b x s x d``) and the kept tensors (float16, FP32
        for the softmax statistics and router probabilities).
    """
    import numpy as np

    if not isinstance(cfg, TransformerConfig):
        raise TypeError(f"cfg must be a TransformerConfig, got {type(cfg).__name__}")
    if (not cfg.gated_mlp or cfg.norm != "rmsnorm" or cfg.linear_bias or cfg.qkv_bias
            or cfg.dropout or cfg.latent_attention or cfg.qk_norm != "none"
            or cfg.norms_per_layer != 2 or cfg.shared_experts or cfg.parallel_attention):
        raise ValueError("cfg must describe a Llama-style block: gated_mlp=True, "
                         "norm='rmsnorm', linear_bias=False, no q/k/v biases, "
                         "dropout=False, two norms per layer, no latent attention, "
                         "q/k norms, shared experts or parallel block")
    s = v.positive_int("seq_len", seq_len)
    b = v.positive_int("batch", batch)
    v.choice("attention", attention, ("flash", "eager"))
    blk = v.positive_int("block", block)
    rng = np.random.default_rng(seed)
    w = _weights(np, cfg, rng)
    a, g, hd = cfg.heads, cfg.kv_heads, cfg.head_dim
    x = rng.standard_normal((b, s, cfg.hidden)).astype(np.float32)
    keep: dict[str, Any] = {}

    def kept(name: str, t: Any, dtype: Any = np.float16) -> None:
        keep[name] = t.astype(dtype)

    # attention
    norm_inputs = [x]
    h1 = _rms_norm(np, x)
    kept("attention input", h1)
    q = (h1 @ w["q"]).reshape(b, s, a, hd).transpose(0, 2, 1, 3)
    k = (h1 @ w["k"]).reshape(b, s, g, hd).transpose(0, 2, 1, 3)
    v_ = (h1 @ w["v"]).reshape(b, s, g, hd).transpose(0, 2, 1, 3)
    q, k = _rope(np, q), _rope(np, k)
    kept("Q", q)
    kept("K", k)
    kept("V", v_)
    group = a // g  # each KV head serves `group` query heads (read, not copied)
    k_all, v_all = np.repeat(k, group, axis=1), np.repeat(v_, group, axis=1)
    if attention == "flash":
        context, lse = _flash_attention(np, q, k_all, v_all, blk)
        kept("softmax statistics", lse, np.float32)
    else:
        context, probs = _eager_attention(np, q, k_all, v_all)
        kept("softmax output", probs)
    context = context.transpose(0, 2, 1, 3).reshape(b, s, cfg.q_dim)
    kept("attention output", context)
    x = x + context @ w["o"]
    # MLP
    norm_inputs.append(x)
    h2 = _rms_norm(np, x)
    kept("MLP input", h2)
    if cfg.moe:
        mlp = _moe_forward(np, cfg, w, h2, kept)
    else:
        gate, up = h2 @ w["gate"][0], h2 @ w["up"][0]
        prod = _silu(np, gate) * up
        kept("MLP gate projection", gate)
        kept("MLP up projection", up)
        kept("MLP down projection input", prod)
        mlp = prod @ w["down"][0]
    keep["norm inputs"] = np.stack(norm_inputs).astype(np.float16)
    return x + mlp, keep


def _moe_forward(np: Any, cfg: TransformerConfig, w: dict[str, Any], h: Any,
                 kept: Any) -> Any:
    """Top-k routing over softmax probabilities; each expert sees its tokens' copies."""
    b, s, d = h.shape
    tokens = h.reshape(b * s, d)
    logits = tokens @ w["router"]
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    kept("router probabilities", probs, np.float32)
    k = cfg.experts_per_token
    choice = np.argsort(-probs, axis=-1)[:, :k]  # the k experts of each token
    names = ("copies", "gate", "up", "prod", "outputs")
    parts: dict[str, list[Any]] = {name: [] for name in names}
    out = np.zeros_like(tokens)
    for e in range(cfg.experts):
        rows, slot = np.nonzero(choice == e)
        if not len(rows):
            continue
        xe = tokens[rows]
        gate, up = xe @ w["gate"][e], xe @ w["up"][e]
        prod = _silu(np, gate) * up
        ye = prod @ w["down"][e]
        for name, t in zip(names, (xe, gate, up, prod, ye), strict=True):
            parts[name].append(t)
        out[rows] += probs[rows, e][:, None] * ye
    for name, label in zip(names, ("routed token copies", "expert gate projection",
                                   "expert up projection", "expert down projection input",
                                   "expert outputs"), strict=True):
        kept(label, np.concatenate(parts[name]))
    return out.reshape(b, s, d)


def llama_block_saved_bytes(cfg: TransformerConfig, **kw: Any) -> dict[str, int]:
    """Bytes of each tensor :func:`llama_block_saved` keeps (same arguments)."""
    return {name: int(t.nbytes) for name, t in llama_block_saved(cfg, **kw)[1].items()}
