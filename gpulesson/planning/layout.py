"""A parallel layout, the rules it must obey, and the layouts worth trying.

A layout splits ``n_gpus`` into ``tp x cp x dp x pp`` (expert parallelism ``ep`` is a
sub-group of the data-parallel GPUs, as in Megatron-LM and DeepSeek-V3). Ranks are ordered
tensor, context, data, pipeline from the fastest-varying (Megatron-LM's order), so a group's
*stride* (the product of the dimensions before it) and *size* say whether it stays inside
an NVLink domain (:func:`gpulesson.distributed.group_tier`).

Rules (:func:`layout_problems`): ``tp`` divides the attention heads and the KV heads, ``pp``
is at most the layers, ``cp`` divides the sequence, ``ep`` divides the routed experts and
the data-parallel GPUs, and the global batch is a whole number of sequences that splits
into a whole number (at least one) of micro-batches per data-parallel replica. A layout
whose product is not ``n_gpus`` is a bad argument (``ValueError``); a layout that merely
breaks a rule is a plan with problems.

Taught in: ``notebooks/planning_dashboard.ipynb`` (designing a layout).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpulesson import _validate as v
from gpulesson.distributed import divisors

from ._adapt import ModelView

__all__ = ["Layout", "batch_split", "candidate_layouts", "divisors", "layout_problems"]


@dataclass(frozen=True)
class Layout:
    """Degrees of parallelism: ``tp x cp x dp x pp = n_gpus`` (``dp=None``: the rest).

    ``ep`` (expert parallel) divides ``dp``; ``zero_stage`` 0-3 partitions the training state
    over the ``dp x cp`` GPUs that hold the same weights (1 is Megatron-LM's distributed
    optimizer); ``micro_batch`` is sequences per micro-batch; ``interleave`` the model chunks
    per pipeline GPU (Narayanan et al. 2021's interleaved schedule).
    """

    tp: int = 1
    pp: int = 1
    dp: int | None = None
    cp: int = 1
    ep: int = 1
    zero_stage: int = 1
    micro_batch: int = 1
    interleave: int = 1

    def __post_init__(self) -> None:
        for name in ("tp", "pp", "cp", "ep", "micro_batch", "interleave"):
            v.positive_int(name, getattr(self, name))
        if self.dp is not None:
            v.positive_int("dp", self.dp)
        if isinstance(self.zero_stage, bool) or self.zero_stage not in (0, 1, 2, 3):
            raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {self.zero_stage!r}")

    def resolve(self, n_gpus: int) -> Layout:
        """This layout with ``dp`` filled in; ``ValueError`` when the product is not
        ``n_gpus``."""
        n = v.positive_int("n_gpus", n_gpus)
        model = self.tp * self.cp * self.pp
        if self.dp is None:
            if n % model:
                raise ValueError(f"layout: tp x cp x pp = {self.tp} x {self.cp} x {self.pp} "
                                 f"= {model} must divide n_gpus ({n})")
            return replace(self, dp=n // model)
        if model * self.dp != n:
            raise ValueError(f"layout: tp x cp x dp x pp = {self.tp} x {self.cp} x {self.dp} "
                             f"x {self.pp} = {model * self.dp}, but n_gpus is {n}")
        return self

    @property
    def degrees(self) -> str:
        """``'tp 8 × cp 1 × dp 64 × pp 16'`` (``ep`` when above 1)."""
        text = f"tp {self.tp} × cp {self.cp} × dp {self.dp} × pp {self.pp}"
        return text + (f", ep {self.ep}" if self.ep > 1 else "")

    def describe(self) -> str:
        """Degrees, ZeRO stage, micro-batch and interleaving in words."""
        extra = f", {self.interleave} chunks per GPU" if self.interleave > 1 else ""
        return (f"{self.degrees}, ZeRO-{self.zero_stage}, micro-batch {self.micro_batch}"
                f"{extra}")

    @property
    def strides(self) -> dict[str, tuple[int, int]]:
        """``{dimension: (stride, size)}`` in Megatron-LM's rank order."""
        dp = self.dp or 1
        # experts fold over the data-parallel GPUs, or over all of tp x cp x dp when ep is
        # larger than dp (Megatron-Core's MoE parallel folding, expert tensor parallelism 1)
        expert = (self.tp * self.cp, self.ep) if dp % self.ep == 0 else (1, self.ep)
        return {"tensor": (1, self.tp), "context": (self.tp, self.cp),
                "expert": expert, "data": (self.tp * self.cp, dp),
                "pipeline": (self.tp * self.cp * dp, self.pp)}



def _replicas(n: int) -> str:
    """``n`` data-parallel replicas, in words: "1 data-parallel replica", "8 ... replicas"."""
    return f"{n:,} data-parallel replica" + ("" if n == 1 else "s")

def batch_split(layout: Layout, *, global_batch_tokens: int, seq_len: int
                ) -> tuple[float, float, list[str]]:
    """``(sequences per step, micro-batches per replica, problems)`` of a resolved layout.

    The global batch holds ``global_batch_tokens / seq_len`` sequences; each of the ``dp``
    replicas takes ``1/dp`` of them in micro-batches of ``micro_batch``: gradient
    accumulation over ``m`` steps (or ``m`` micro-batches through the pipeline), a whole
    number at least 1.
    """
    tokens = v.positive_int("global_batch_tokens", global_batch_tokens)
    s = v.positive_int("seq_len", seq_len)
    dp, mb = layout.dp or 1, layout.micro_batch
    problems = []
    sequences = tokens / s
    if tokens % s:
        problems.append(f"global_batch_tokens ({tokens:,}) is not a whole number of "
                        f"{s:,}-token sequences: use a multiple of seq_len")
    micro = sequences / (dp * mb)
    shown = f"{sequences:,.0f}" if sequences == int(sequences) else f"{sequences:,.4g}"
    if micro < 1:
        problems.append(
            f"the global batch of {shown} sequences cannot feed dp = {dp:,} "
            f"replicas with micro-batches of {mb}: each would get {micro:.3g} of a "
            f"micro-batch. Use at most {_replicas(max(int(sequences // mb), 1))} "
            "(more tp, pp or cp), or a larger global batch")
    elif sequences % (dp * mb) and not tokens % s:  # a fraction of a sequence: said above
        problems.append(
            f"{sequences:,.0f} sequences do not split into whole micro-batches of {mb} over "
            f"dp = {dp:,} replicas ({micro:.3g} each): choose dp and micro_batch dividing "
            "the number of sequences")
    return sequences, micro, problems


def layout_problems(layout: Layout, model: ModelView, *, seq_len: int) -> list[str]:
    """Rules of the layout against the model (batch rules are :func:`batch_split`)."""
    out = []
    if model.heads % layout.tp:
        out.append(f"tp = {layout.tp} must divide the {model.heads} attention heads")
    if model.kv_heads % layout.tp and layout.tp <= model.heads:
        out.append(f"tp = {layout.tp} must divide the {model.kv_heads} KV heads (or use "
                   f"tp dividing {model.kv_heads})")
    if layout.pp > model.layers:
        out.append(f"pp = {layout.pp} exceeds the {model.layers} layers: every stage needs "
                   "a layer")
    elif layout.interleave > 1 and -(-model.layers // layout.pp) < layout.interleave:
        out.append(f"interleave = {layout.interleave} needs at least that many layers per "
                   f"stage; {layout.pp} stages hold {-(-model.layers // layout.pp)}")
    if seq_len % layout.cp:
        out.append(f"cp = {layout.cp} must divide the sequence of {seq_len:,} tokens")
    if layout.ep > 1 and not model.is_moe:
        out.append(f"ep = {layout.ep} needs a mixture-of-experts model; {model.name} is "
                   "dense")
    elif model.is_moe and model.routed_experts % layout.ep:
        out.append(f"ep = {layout.ep} must divide the {model.routed_experts} routed experts")
    if (layout.dp or 1) * layout.tp * layout.cp % layout.ep:
        out.append(f"ep = {layout.ep} must divide tp x cp x dp = "
                   f"{layout.tp * layout.cp * (layout.dp or 1)} (the expert-parallel GPUs are "
                   "the attention's tensor-, context- and data-parallel GPUs, refolded)")
    return out


def candidate_layouts(model: ModelView, *, n_gpus: int, seq_len: int, domain: int,
                      sequences: float) -> list[Layout]:
    """The layouts :func:`~gpulesson.planning.plan_training` compares for ``layout="auto"``.

    Bounded on purpose: ``tp`` among the divisors of ``n_gpus`` up to the NVLink domain
    (and dividing the heads), ``pp`` among the divisors up to the layers, ``cp`` only for
    sequences of 32K tokens and more, ``ep`` for MoE models, micro-batches of 1 and 2, 1 or
    2 chunks per pipeline GPU; ZeRO stages 0-3 for plain data parallelism, 1-3 with model
    parallelism (Llama 3 405B ran ZeRO-2 with 16 pipeline stages). Layouts with more
    replicas than sequences are skipped.
    """
    n = v.positive_int("n_gpus", n_gpus)
    out = []
    tps = [t for t in divisors(n, max(domain, 1)) if model.heads % t == 0
           and model.kv_heads % t == 0]
    cps = [c for c in divisors(n, 32) if seq_len % c == 0] if seq_len >= 32768 else [1]
    for tp in tps:
        for cp in cps:
            if (n // tp) % cp:
                continue
            for pp in divisors(n // (tp * cp), model.layers):
                dp = n // (tp * cp * pp)
                if dp > sequences:
                    continue
                eps = [e for e in divisors(dp, model.routed_experts)
                       if model.routed_experts % e == 0] if model.is_moe else [1]
                # ZeRO 0-3 over plain data parallelism; with model parallelism the
                # distributed optimizer (1), gradients sharded too (2: Llama 3's FSDP
                # without resharding) and parameters (3)
                plain = tp == cp == pp == 1
                zeros = (0, 1, 2, 3) if plain and dp > 1 else ((1, 2, 3) if dp > 1 else (0,))
                for ep in eps:
                    for zero in zeros:
                        for mb in (1, 2):
                            for chunks in ((1, 2) if pp > 1 else (1,)):
                                out.append(Layout(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep,
                                                  zero_stage=zero, micro_batch=mb,
                                                  interleave=chunks))
    return out


v.guard_module(globals())
