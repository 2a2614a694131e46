"""Benchmarks of the qgemm ops through the Python binding next to their
PyTorch peers, in one process on one GPU:

    python -m qgemm.bench gemm|quant|fused|attention|wonly [--json FILE] [--runs 100] [--no-compile]
                                           [--timing graph|events] [--ops NAME,...]
                                           [--shapes AxB[xC],...] [--rounds R] [--cooldown MS]

--timing graph (default): each peer's calls, one per rotated input set, are
captured in a CUDA graph and the replays are timed with CUDA events: the
device time of a call, the same way for every peer, without Python or launch
overhead (what an engine that replays graphs sees). --timing events: CUDA
events around single Python calls, so host overhead is included when it
exceeds the kernel time. Medians of many runs after warm-up, with the inputs
rotated over enough copies that the working set exceeds the L2 cache.
Peers of the same computation: the eager PyTorch composite, torch.compile of
that composite, and torch._scaled_mm for fp8 GEMMs; PyTorch's weight-only
kernels and the bf16 F.linear for weight_only_mm (whose peers are each
checked against an fp32 reference first); for the fused ops and
weight_only_mm also a copy of the same number of bytes, the floor of any one
call of that size. (add_rms_norm_quant's
residual grows with every call: timing only, the values are not checked.) A family is a list of
cases, each with named peers (callables of the rotation index), so adding a
family or a peer is one function. The JSON records the device, the commit
(env QGEMM_COMMIT) and the command.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Set

import qgemm

Peer = Callable[[int], Any]


class Case:
    """One problem: a name, its size figures and the peers that compute it."""

    def __init__(self, family: str, op: str, shape: Dict[str, int], flops: float, bytes_moved: float, sets: int):
        self.family, self.op, self.shape = family, op, shape
        self.flops, self.bytes_moved = flops, bytes_moved
        self.sets = sets  # rotated input copies: peers take an index below this
        self.peers: Dict[str, Peer] = {}
        # Optional check: a peer's output for input set 0 against this
        # reference, within this relative error (relative_error).
        self.reference: Any = None
        self.tolerance = 0.0


def rotation_count(torch: Any, set_bytes: int) -> int:
    """Input copies so that cycling through them exceeds 3× the L2 cache."""
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20) or 50 * 2**20
    free = torch.cuda.mem_get_info()[0]
    wanted = max(2, math.ceil(3 * l2 / max(set_bytes, 1)))
    return int(max(2, min(wanted, 64, free // (4 * max(set_bytes, 1)))))


def time_peer(torch: Any, peer: Peer, sets: int, runs: int, warmup: int) -> float:
    """Median microseconds of one call, CUDA events around each call."""
    for i in range(warmup):
        peer(i % sets)
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        starts[i].record()
        peer(i % sets)
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def time_peer_graph(torch: Any, peer: Peer, sets: int, runs: int, warmup: int) -> float:
    """Median microseconds of one call without host overhead: one call per
    rotated input set is captured into a CUDA graph (so the inputs still
    cycle past L2), each replay is timed with CUDA events and divided by the
    number of calls. Every peer is timed the same way, so Python, dispatcher
    and launch overheads (qgemm's and torch's) drop out of the comparison."""
    for i in range(warmup):
        peer(i % sets)
    torch.cuda.synchronize()
    calls = max(sets, 8)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for i in range(calls):
                peer(i % sets)
    torch.cuda.current_stream().wait_stream(stream)
    graph.replay()
    torch.cuda.synchronize()
    replays = max(10, runs // 5)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    for i in range(replays):
        starts[i].record()
        graph.replay()
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3 / calls


def compiled(torch: Any, fn: Callable[..., Any], enabled: bool) -> Optional[Callable[..., Any]]:
    # One compiled graph per shape (dynamic=False): allow more than dynamo's
    # default 8 before it would silently fall back to eager.
    for limit in ("cache_size_limit", "recompile_limit"):
        if hasattr(torch._dynamo.config, limit):
            setattr(torch._dynamo.config, limit, 64)
    return torch.compile(fn, fullgraph=True, dynamic=False) if enabled else None


def same_size_copy(torch: Any, bytes_moved: int, sets: int) -> Peer:
    """A device-to-device copy of the bytes an op moves (half read, half
    written), over its own rotated buffers: the floor for any single call of
    that size, timed the same way as the peers it is quoted next to. Rounded
    up to whole 256-byte blocks so that every rotated buffer is aligned."""
    half = (bytes_moved // 2 + 255) // 256 * 256
    src = [torch.empty(half, dtype=torch.uint8, device="cuda").random_(0, 256) for _ in range(sets)]
    dst = [torch.empty(half, dtype=torch.uint8, device="cuda") for _ in range(sets)]
    return lambda i: dst[i].copy_(src[i])


# ---- gemm -------------------------------------------------------------------

GEMM_SHAPES = [(m, n, k) for m in (16, 256, 2048) for (n, k) in ((4096, 4096), (14336, 4096))]


def gemm_cases(torch: Any, use_compile: bool) -> Iterator[Case]:

    def int8_composite(a, b, sa, sb, bias):
        return (torch._int_mm(a, b).float() * sa * sb + bias.float()).to(torch.bfloat16)

    def fp8_composite(a, b, sa, sb, bias):
        return ((a.to(torch.bfloat16) @ b.to(torch.bfloat16)).float() * sa * sb + bias.float()).to(torch.bfloat16)

    int8_compiled = compiled(torch, int8_composite, use_compile)
    fp8_compiled = compiled(torch, fp8_composite, use_compile)
    for dtype in ("int8", "fp8"):
        for m, n, k in GEMM_SHAPES:
            elem = torch.int8 if dtype == "int8" else torch.float8_e4m3fn
            set_bytes = m * k + n * k + 2 * m * n + 4 * (m + n)
            sets = rotation_count(torch, set_bytes)
            data = []
            for _ in range(sets):
                if dtype == "int8":
                    a = torch.randint(-128, 128, (m, k), dtype=torch.int8, device="cuda")
                    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda")
                else:
                    a = torch.randn(m, k, device="cuda").to(elem)
                    w = torch.randn(n, k, device="cuda").to(elem)
                sa = torch.rand(m, 1, device="cuda") * 1e-2
                sb = torch.rand(1, n, device="cuda") * 1e-2
                bias = torch.randn(n, device="cuda").bfloat16()
                out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
                data.append((a, w.t(), sa, sb, bias, out))
            case = Case("gemm", f"scaled_mm {dtype}->bf16", {"M": m, "N": n, "K": k}, 2.0 * m * n * k, set_bytes,
                        sets)
            case.peers["qgemm"] = lambda i, d=data: qgemm.scaled_mm(*d[i][:5], out=d[i][5])
            composite, compiled_composite = (int8_composite, int8_compiled) if dtype == "int8" else (
                fp8_composite, fp8_compiled)
            if dtype == "fp8" or m > 16:  # torch._int_mm needs M > 16
                case.peers["torch eager"] = lambda i, d=data, f=composite: f(*d[i][:5])
                if compiled_composite is not None:
                    case.peers["torch.compile"] = lambda i, d=data, f=compiled_composite: f(*d[i][:5])
            if dtype == "fp8":
                case.peers["qgemm fast_accum"] = lambda i, d=data: qgemm.scaled_mm(*d[i][:5], out=d[i][5],
                                                                                  fast_accum=True)
                case.peers["torch._scaled_mm"] = lambda i, d=data: torch._scaled_mm(
                    d[i][0], d[i][1], scale_a=d[i][2], scale_b=d[i][3], bias=d[i][4], out_dtype=torch.bfloat16)
                case.peers["torch._scaled_mm fast_accum"] = lambda i, d=data: torch._scaled_mm(
                    d[i][0], d[i][1], scale_a=d[i][2], scale_b=d[i][3], bias=d[i][4], out_dtype=torch.bfloat16,
                    use_fast_accum=True)
            yield case  # generated one at a time: a case's inputs are freed after it


# ---- quant ------------------------------------------------------------------

QUANT_SHAPES = [(t, h) for t in (16, 1024, 8192) for h in (4096, 8192)]


def quant_cases(torch: Any, use_compile: bool) -> Iterator[Case]:
    def per_token_int8(x):
        scale = x.float().abs().amax(dim=1, keepdim=True) / 127
        return torch.round(x.float() / scale).clamp(-128, 127).to(torch.int8), scale

    def per_token_fp8(x):
        scale = x.float().abs().amax(dim=1, keepdim=True) / 448
        return (x.float() / scale).clamp(-448, 448).to(torch.float8_e4m3fn), scale

    def per_group_int8(x):
        g = x.float().view(x.shape[0], -1, 128)
        scale = g.abs().amax(dim=2, keepdim=True) / 127
        return torch.round(g / scale).clamp(-128, 127).to(torch.int8).view(x.shape), scale.squeeze(2)

    variants = [("per_token int8", "per_token", torch.int8, per_token_int8),
                ("per_token fp8", "per_token", torch.float8_e4m3fn, per_token_fp8),
                ("per_group128 int8", "per_group", torch.int8, per_group_int8)]
    for name, mode, qdtype, composite in variants:
        compiled_composite = compiled(torch, composite, use_compile)
        for t, h in QUANT_SHAPES:
            set_bytes = t * h * 3 + 4 * t * (h // 128)  # bf16 in, 8-bit out, scales
            sets = rotation_count(torch, set_bytes)
            groups = h // 128 if mode == "per_group" else 1
            data = [(torch.randn(t, h, device="cuda").bfloat16(), torch.empty(t, h, device="cuda", dtype=qdtype),
                     torch.empty(t, groups, device="cuda")) for _ in range(sets)]
            case = Case("quant", f"quantize {name} bf16", {"T": t, "H": h}, 0.0, set_bytes, sets)
            case.peers["qgemm"] = lambda i, d=data, mo=mode, q=qdtype: qgemm.quantize(
                d[i][0], dtype=q, mode=mo, group_size=128, out=d[i][1], scale=d[i][2])
            case.peers["torch eager"] = lambda i, d=data, f=composite: f(d[i][0])
            if compiled_composite is not None:
                case.peers["torch.compile"] = lambda i, d=data, f=compiled_composite: f(d[i][0])
            yield case  # generated one at a time: a case's inputs are freed after it


# ---- fused ------------------------------------------------------------------

# The grid (tokens {16, 256, 4096, 16384} × hidden {4096, 8192}).
FUSED_SHAPES = [(t, h) for t in (16, 256, 4096, 16384) for h in (4096, 8192)]


def fused_cases(torch: Any, use_compile: bool) -> Iterator[Case]:
    F = torch.nn.functional

    def per_token(y):
        scale = y.abs().amax(dim=1, keepdim=True) / 127
        return torch.round(y / scale).clamp(-128, 127).to(torch.int8), scale

    def rms_norm(x, weight):
        return per_token(F.rms_norm(x.float(), (x.shape[-1],), weight.float(), 1e-6))

    def add_rms_norm(x, residual, weight):
        residual.add_(x)
        return per_token(F.rms_norm(residual.float(), (x.shape[-1],), weight.float(), 1e-6))

    def silu_and_mul(x):
        gate, up = x.float().chunk(2, dim=1)
        return per_token(F.silu(gate) * up)

    def layer_norm(x, residual, bias, gamma, beta):
        v = x.float() + bias.float() + residual.float()
        return per_token(F.layer_norm(v, (x.shape[-1],), gamma.float(), beta.float(), 1e-5))

    def bias_gelu(x, bias):
        return per_token(F.gelu(x.float() + bias.float()))

    def bf16(*shape):
        return torch.randn(*shape, device="cuda").bfloat16()

    # (name, qgemm call, composite, inputs(t, h) → tuple, bytes moved)
    variants = [
        ("rms_norm_quant", lambda d: qgemm.rms_norm_quant(d[0], d[1], 1e-6), rms_norm,
         lambda t, h: (torch.randn(t, h, device="cuda").bfloat16(), torch.rand(h, device="cuda").bfloat16()),
         lambda t, h: t * h * 3 + 4 * t),
        ("add_rms_norm_quant", lambda d: qgemm.add_rms_norm_quant(d[0], d[1], d[2], 1e-6), add_rms_norm,
         lambda t, h: (torch.randn(t, h, device="cuda").bfloat16(), torch.randn(t, h, device="cuda").bfloat16(),
                       torch.rand(h, device="cuda").bfloat16()),
         lambda t, h: t * h * 7 + 4 * t),
        ("silu_and_mul_quant", lambda d: qgemm.silu_and_mul_quant(d[0]), silu_and_mul,
         lambda t, h: (torch.randn(t, 2 * h, device="cuda").bfloat16(),),
         lambda t, h: t * h * 5 + 4 * t),
        ("layer_norm_quant", lambda d: qgemm.layer_norm_quant(d[0], d[3], d[4], 1e-5, residual=d[1], bias=d[2]),
         layer_norm, lambda t, h: (bf16(t, h), bf16(t, h), bf16(h), bf16(h), bf16(h)),
         lambda t, h: t * h * 5 + 4 * t),
        ("bias_gelu_quant", lambda d: qgemm.bias_gelu_quant(d[0], d[1]), bias_gelu,
         lambda t, h: (bf16(t, h), bf16(h)),
         lambda t, h: t * h * 3 + 4 * t),
    ]
    for name, qgemm_call, composite, make, moved in variants:
        compiled_composite = compiled(torch, composite, use_compile)
        for t, h in FUSED_SHAPES:
            set_bytes = moved(t, h)
            sets = rotation_count(torch, set_bytes)
            data = [make(t, h) for _ in range(sets)]
            case = Case("fused", f"{name} bf16->int8", {"T": t, "H": h}, 0.0, set_bytes, sets)
            case.peers["qgemm"] = lambda i, d=data, f=qgemm_call: f(d[i])
            case.peers["torch eager"] = lambda i, d=data, f=composite: f(*d[i])
            if compiled_composite is not None:
                case.peers["torch.compile"] = lambda i, d=data, f=compiled_composite: f(*d[i])
            case.peers["copy (same bytes)"] = same_size_copy(torch, set_bytes, sets)
            yield case


# ---- attention ------------------------------------------------------------------

# (S sequences, L tokens each) with Llama-3-8B's heads: 32 query over 8 kv, head_dim 128.
ATTENTION_SHAPES = [(1, 4096), (8, 8192), (32, 1024), (32, 4096), (128, 1024)]


def attention_cases(torch: Any, use_compile: bool) -> Iterator[Case]:
    """Decode attention (one query token per sequence) over S × L cached
    tokens: qgemm's paged int8 and bf16 caches (blocks of 16 in a shuffled
    order, with the split workspace) against PyTorch's
    scaled_dot_product_attention on a contiguous bf16 cache [S, kv_heads, L,
    128] (enable_gqa), what an engine without a paged kernel would call."""
    F = torch.nn.functional
    q_heads, kv_heads, d, block = 32, 8, 128, 16
    for s, length in ATTENTION_SHAPES:
        blocks = s * (length // block)
        table = torch.randperm(blocks, device="cuda", dtype=torch.int32).view(s, length // block)
        lens = torch.full((s,), length, device="cuda", dtype=torch.int32)
        ws = torch.empty(qgemm.paged_attention_workspace_bytes(s, q_heads, d, length), dtype=torch.uint8,
                         device="cuda")
        kv_bytes16 = 2 * s * length * kv_heads * d * 2
        sets = rotation_count(torch, kv_bytes16)
        queries = [torch.randn(s, q_heads, d, device="cuda").bfloat16() for _ in range(sets)]
        outs = [torch.empty_like(q) for q in queries]
        caches16 = [(torch.randn(blocks, block, kv_heads, d, device="cuda").bfloat16(),
                     torch.randn(blocks, block, kv_heads, d, device="cuda").bfloat16()) for _ in range(sets)]
        caches8 = [(torch.randint(-128, 128, (blocks, block, kv_heads, d), device="cuda", dtype=torch.int8),
                    torch.randint(-128, 128, (blocks, block, kv_heads, d), device="cuda", dtype=torch.int8),
                    torch.rand(blocks, block, kv_heads, device="cuda") * 0.01 + 0.005,
                    torch.rand(blocks, block, kv_heads, device="cuda") * 0.01 + 0.005) for _ in range(sets)]
        dense = [(torch.randn(s, kv_heads, length, d, device="cuda").bfloat16(),
                  torch.randn(s, kv_heads, length, d, device="cuda").bfloat16()) for _ in range(sets)]
        case = Case("attention", "paged_attention_decode", {"S": s, "L": length}, 4.0 * s * length * q_heads * d,
                    kv_bytes16, sets)
        case.peers["qgemm int8 cache"] = lambda i, q=queries, o=outs, c=caches8: qgemm.paged_attention_decode(
            q[i], c[i][0], c[i][1], table, lens, key_scale=c[i][2], value_scale=c[i][3], max_seq_len=length,
            out=o[i], workspace=ws)
        case.peers["qgemm bf16 cache"] = lambda i, q=queries, o=outs, c=caches16: qgemm.paged_attention_decode(
            q[i], c[i][0], c[i][1], table, lens, max_seq_len=length, out=o[i], workspace=ws)
        case.peers["torch sdpa bf16"] = lambda i, q=queries, kv=dense: F.scaled_dot_product_attention(
            q[i].view(s, q_heads, 1, d), kv[i][0], kv[i][1], enable_gqa=True)
        yield case


# ---- wonly ------------------------------------------------------------------

# The weight-only targets' token counts (docs/weight_only.md) on a small and a
# large Llama layer.
WONLY_SHAPES = [(m, n, k) for m in (1, 16, 64, 256, 1024) for (n, k) in ((4096, 4096), (28672, 8192))]
WONLY_GROUP = 128
# Largest max|out − ref| / max|ref| a peer may show against the fp32 product
# of a and the dequantized bf16 weight. The bf16 output rounding is ≤ 2^-9 of
# an element; tinygemm rounds each weight twice in bf16 ((q − 8)·s, then + z),
# an error of ≤ 2^-8 per weight, random in sign, so of the order of 2^-8 of a
# typical output (≈ 1e-3 of the largest one). A wrong layout or formula gives
# errors of order 1.
WONLY_TOLERANCE = 1e-2


def wonly_cases(torch: Any, use_compile: bool) -> Iterator[Case]:
    """weight_only_mm on bf16 activations, W4 group 128 (unsigned nibbles with
    bf16 scales and offsets) and W8 per channel (bf16 scales, no offset), no
    bias (Llama's layers have none), against PyTorch's weight-only kernels
    (torch._weight_int4pack_mm, tinygemm's W4 with its own packing and
    [groups, N, 2] scale/zero layout; torch._weight_int8pack_mm), an eager
    dequantize-then-F.linear composite, torch.compile of it, and F.linear on
    the dequantized bf16 weight (cuBLAS, the unquantized baseline), and a copy
    of the bytes the call reads and writes (its floor). qgemm runs
    on the plain layout with row-major parameters (what the quantization
    helpers give) and on the prepacked layout with group-major parameters
    (what its fastest decode kernels read), each with a workspace."""
    F = torch.nn.functional
    bf16 = torch.bfloat16

    def int4_composite(a, packed, scales, offsets):
        # qgemm's nibble order: element 2j in bits 0–3 of byte j, 2j+1 in bits 4–7.
        n, groups = scales.shape
        q = torch.stack((packed & 15, packed >> 4), dim=-1).view(n, groups, -1).to(bf16)
        w = torch.addcmul(offsets[:, :, None], q, scales[:, :, None])  # q·s + o, rounded once
        return F.linear(a, w.view(n, -1))

    def int8_composite(a, q, scales):
        return F.linear(a, q.to(bf16) * scales[:, None])

    composites = {"w4": (int4_composite, compiled(torch, int4_composite, use_compile)),
                  "w8": (int8_composite, compiled(torch, int8_composite, use_compile))}
    workspace = torch.empty(qgemm.weight_only_workspace_bytes("cuda"), dtype=torch.uint8, device="cuda")
    for bits in ("w4", "w8"):
        composite, compiled_composite = composites[bits]
        for m, n, k in WONLY_SHAPES:
            groups = k // WONLY_GROUP if bits == "w4" else 1
            weight_bytes = n * k // 2 if bits == "w4" else n * k
            param_bytes = 2 * n * groups * (2 if bits == "w4" else 1)
            set_bytes = weight_bytes + param_bytes + 2 * m * k + 2 * m * n
            sets = rotation_count(torch, set_bytes)
            data = []
            for _ in range(sets):
                a = torch.randn(m, k, device="cuda").to(bf16)
                scales = (torch.rand(n, groups, device="cuda") * 0.02 + 0.005).to(bf16)
                if bits == "w4":
                    q = torch.randint(0, 16, (n, k), dtype=torch.uint8, device="cuda")
                    offsets = ((torch.rand(n, groups, device="cuda") - 8.5) * scales.float()).to(bf16)
                    weight = q[:, 0::2] | (q[:, 1::2] << 4)
                    w_ref = torch.addcmul(offsets.repeat_interleave(WONLY_GROUP, 1), q.to(bf16),
                                          scales.repeat_interleave(WONLY_GROUP, 1))
                else:
                    weight = torch.randint(-128, 128, (n, k), dtype=torch.int8, device="cuda")
                    q, scales, offsets = None, scales.view(n), None
                    w_ref = weight.to(bf16) * scales[:, None]
                data.append({"a": a, "w": weight, "s": scales, "o": offsets, "w_ref": w_ref, "q": q,
                             "out": torch.empty(m, n, device="cuda", dtype=bf16)})
            label = f"W4A16 g{WONLY_GROUP}" if bits == "w4" else "W8A16 per-channel"
            case = Case("wonly", f"weight_only_mm {label} bf16", {"M": m, "N": n, "K": k}, 2.0 * m * n * k,
                        set_bytes, sets)
            # The reference of set 0: fp32 product with the dequantized bf16 weight.
            d0 = data[0]
            case.reference = d0["a"].float() @ d0["w_ref"].float().T
            group = WONLY_GROUP if bits == "w4" else None
            case.peers["qgemm"] = lambda i, d=data, g=group: qgemm.weight_only_mm(
                d[i]["a"], d[i]["w"], d[i]["s"], d[i]["o"], g, out=d[i]["out"], workspace=workspace)
            prepacked = [(qgemm.weight_only_prepack(d["w"]), d["s"].t().contiguous().t() if bits == "w4" else d["s"],
                          d["o"].t().contiguous().t() if bits == "w4" else None) for d in data]
            case.peers["qgemm prepacked"] = lambda i, d=data, p=prepacked, g=group: qgemm.weight_only_mm(
                d[i]["a"], p[i][0], p[i][1], p[i][2], g, out=d[i]["out"], workspace=workspace)
            try:
                if bits == "w4":
                    # tinygemm: uint8 [N, K/2] with element 2j in the high nibble, w = (q − 8)·s + z,
                    # so z = o + 8·s; scales and zeros interleaved as [groups, N, 2].
                    tiny = [(torch._convert_weight_to_int4pack((d["q"][:, 0::2] << 4) | d["q"][:, 1::2], 8),
                             torch.stack((d["s"], (d["o"].float() + 8 * d["s"].float()).to(bf16)), dim=-1)
                             .transpose(0, 1).contiguous()) for d in data]
                    case.peers["torch._weight_int4pack_mm"] = lambda i, d=data, t=tiny: torch._weight_int4pack_mm(
                        d[i]["a"], t[i][0], WONLY_GROUP, t[i][1])
                elif m <= 64:  # a decode kernel: 131 / 522 ms at M = 256 / 1024 on (28672, 8192) (H200)
                    case.peers["torch._weight_int8pack_mm"] = lambda i, d=data: torch._weight_int8pack_mm(
                        d[i]["a"], d[i]["w"], d[i]["s"])
            except (RuntimeError, AttributeError) as error:  # not in this torch build / for this shape
                print(f"  {case.op} {case.shape}: PyTorch's weight-only kernel skipped ({error})".splitlines()[0])
            args = (lambda d: (d["a"], d["w"], d["s"], d["o"])) if bits == "w4" else (
                lambda d: (d["a"], d["w"], d["s"]))
            case.peers["torch eager dequant+linear"] = lambda i, d=data, f=composite, x=args: f(*x(d[i]))
            if compiled_composite is not None:
                case.peers["torch.compile dequant+linear"] = lambda i, d=data, f=compiled_composite, x=args: f(
                    *x(d[i]))
            case.peers["torch bf16 linear"] = lambda i, d=data: F.linear(d[i]["a"], d[i]["w_ref"])
            case.tolerance = WONLY_TOLERANCE
            case.peers["copy (same bytes)"] = same_size_copy(torch, set_bytes, sets)
            yield case


def relative_error(out: Any, reference: Any) -> float:
    """max |out − reference| / max |reference|, in fp32."""
    return float((out.float() - reference).abs().max() / reference.abs().max().clamp_min(1e-30))


def with_pdl_off_peer(peers: Dict[str, Peer]) -> Dict[str, Peer]:
    """peers with "qgemm, PDL off" after "qgemm": the same call launched without programmatic
    dependent launch (so a captured graph has ordinary edges between the qgemm kernels)."""

    def pdl_off(i: int, call: Peer = peers["qgemm"]) -> Any:
        qgemm.set_programmatic_dependent_launch(False)
        try:
            return call(i)
        finally:
            qgemm.set_programmatic_dependent_launch(True)

    out: Dict[str, Peer] = {}
    for name, peer in peers.items():
        out[name] = peer
        if name == "qgemm":
            out["qgemm, PDL off"] = pdl_off
    return out


FAMILIES: Dict[str, Callable[[Any, bool], Iterator[Case]]] = {"gemm": gemm_cases, "quant": quant_cases,
                                                              "fused": fused_cases, "attention": attention_cases,
                                                              "wonly": wonly_cases}


def selected(case: Case, ops: Optional[Set[str]], shapes: Optional[Set[str]]) -> bool:
    """--ops: the op's name or its first words ("weight_only_mm" or
    "weight_only_mm W4A16"); --shapes: the case's sizes joined by x."""
    if ops is not None and not any((case.op + " ").startswith(op.strip() + " ") for op in ops):
        return False
    return shapes is None or "x".join(str(v) for v in case.shape.values()) in shapes


def write_report(path: str, report: Dict[str, Any], results: List[Dict[str, Any]]) -> None:
    with open(path, "w") as f:
        json.dump(dict(report, results=results), f, indent=1)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qgemm.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("family", choices=sorted(FAMILIES))
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--runs", type=int, default=100, help="timed calls per peer (median; at least 50)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--cooldown", type=float, default=0.0, metavar="MS",
                        help="pause this many milliseconds before timing each peer, so that every peer starts "
                             "from an idle GPU instead of its predecessor's clock (as qgemm bench --cooldown)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="time every case's peers this many times round-robin and report each peer's median "
                             "of its round medians, with round_spread ((max - min) / median) in the record")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile peers")
    parser.add_argument("--timing", choices=("graph", "events"), default="graph",
                        help="graph: device time per call, calls replayed from a CUDA graph (default); "
                             "events: CUDA events around each Python call (includes host overhead)")
    parser.add_argument("--ops", help="only these ops, comma-separated: names or their first words "
                                      "(e.g. rms_norm_quant,layer_norm_quant; \"weight_only_mm W4A16\")")
    parser.add_argument("--shapes", help="only these shapes, comma-separated, the shape's sizes joined by x "
                                         "(fused/quant TxH, gemm/wonly MxNxK)")
    args = parser.parse_args(argv)
    import os

    import torch

    if not torch.cuda.is_available() or not qgemm.built_with_cuda():
        print("qgemm.bench needs a CUDA GPU, PyTorch with CUDA and a CUDA build of qgemm", file=sys.stderr)
        return 2
    runs = max(args.runs, 50)
    rounds = max(args.rounds, 1)
    device = torch.cuda.get_device_name(0)
    results = []
    print(f"{device} | qgemm {qgemm.__version__} | torch {torch.__version__} | {args.timing} timing, "
          f"median (µs)")
    timer = time_peer_graph if args.timing == "graph" else time_peer
    # qgemm launches with programmatic dependent launch on sm_90+ (qgemm/launch.h): its calls
    # are also timed with it off, so that what PDL buys is visible next to the peers, which lack it.
    pdl_applies = qgemm.programmatic_dependent_launch() and torch.cuda.get_device_capability(0)[0] >= 9
    ops = set(args.ops.split(",")) if args.ops else None
    shapes = set(args.shapes.split(",")) if args.shapes else None
    disagreeing = 0  # peers whose output missed their case's reference
    report = {"device": device, "commit": os.environ.get("QGEMM_COMMIT", "unknown"),
              "command": "python -m qgemm.bench " + " ".join(argv if argv is not None else sys.argv[1:]),
              "qgemm": qgemm.__version__, "torch": torch.__version__,
              "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for case in FAMILIES[args.family](torch, not args.no_compile):
        if not selected(case, ops, shapes):
            continue
        if "qgemm" in case.peers and pdl_applies:
            case.peers = with_pdl_off_peer(case.peers)
        errors: Dict[str, Optional[float]] = {}  # peer → relative error of its output (None: not checked)
        for peer, fn in case.peers.items():
            try:
                errors[peer] = None
                if case.reference is not None and not peer.startswith("copy"):
                    errors[peer] = relative_error(fn(0), case.reference)
                    if not errors[peer] <= case.tolerance:
                        disagreeing += 1
                        print(f"  {case.op} {case.shape} {peer}: DISAGREES with the reference, relative error "
                              f"{errors[peer]:.3g} > {case.tolerance:g}")
            except Exception as error:  # a peer that cannot run this case (e.g. a torch limit)
                print(f"  {case.op} {case.shape} {peer}: skipped ({type(error).__name__}: {error})".splitlines()[0])
                del errors[peer]
        # Each round times every peer once, in order: the clock drift of a long
        # sequence (power cap, heat) then lands on every peer alike.
        times: Dict[str, List[float]] = {peer: [] for peer in errors}
        for _ in range(rounds):
            for peer in list(times):
                try:
                    if args.cooldown > 0:
                        torch.cuda.synchronize()
                        time.sleep(args.cooldown / 1e3)
                    times[peer].append(timer(torch, case.peers[peer], case.sets, runs, args.warmup))
                except Exception as error:  # e.g. a peer that cannot be captured in a graph
                    print(f"  {case.op} {case.shape} {peer}: skipped ({type(error).__name__}: {error})"
                          .splitlines()[0])
                    del times[peer]
        row = {}
        for peer in times:
            rel_err, us = errors[peer], statistics.median(times[peer])
            row[peer] = us
            record = {"family": case.family, "op": case.op, "shape": case.shape, "peer": peer,
                      "median_us": round(us, 3), "runs": runs, "timing": args.timing}
            if rounds > 1:
                record["rounds"] = rounds
                record["round_spread"] = round((max(times[peer]) - min(times[peer])) / us, 4)
            if rel_err is not None:
                record["max_rel_err"] = float(f"{rel_err:.3g}")
            if case.flops:
                record["tflops"] = round(case.flops / us * 1e-6, 2)
            record["gbps"] = round(case.bytes_moved / us * 1e-3, 1)
            results.append(record)
        shape = " ".join(f"{k}={v}" for k, v in case.shape.items())
        print(f"{case.op:<28} {shape:<24} " + "  ".join(f"{p} {t:9.2f}" for p, t in row.items()))
        if args.json:  # rewritten after every case: a run cut short keeps what it measured
            write_report(args.json, report, results)
    if args.json:
        write_report(args.json, report, results)
        print(f"wrote {args.json}")
    if disagreeing:
        print(f"{disagreeing} peer(s) disagreed with their case's reference", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
