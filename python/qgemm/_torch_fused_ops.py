"""The fused family (qgemm/fused.h) as PyTorch custom operators, generated
from one table: each op's inputs in the order of qgemm/fused.py. For op X:

    qgemm::X_out(Tensor(a!) out, Tensor(b!) scale, Tensor(c!)? azp, <inputs>,
                 str quant_mode, bool narrow_range) -> ()
    qgemm::X(<inputs>, ScalarType dtype, str quant_mode, bool symmetric,
             bool narrow_range, Tensor? scale, Tensor? azp) -> (Tensor, Tensor, Tensor)

The functional form returns (q, scale, azp) with empty scale / azp where
they are inputs (static) or absent (symmetric), as torch.ops.qgemm.quantize
does. add_rms_norm_quant also mutates its residual in both forms.
"""

from typing import Any, List, Tuple

from . import _qgemm, _torch_ops

# (op, [(input name, schema type)], width divisor of the first input's last dim)
FUSED_OPS: List[Tuple[str, List[Tuple[str, str]], int]] = [
    ("rms_norm_quant", [("x", "Tensor"), ("weight", "Tensor"), ("eps", "float")], 1),
    ("add_rms_norm_quant", [("x", "Tensor"), ("residual", "Tensor(r!)"), ("weight", "Tensor"), ("eps", "float")], 1),
    ("layer_norm_quant", [("x", "Tensor"), ("gamma", "Tensor"), ("beta", "Tensor"), ("eps", "float"),
                          ("residual", "Tensor?"), ("bias", "Tensor?")], 1),
    ("layer_norm_quant_int32", [("acc", "Tensor"), ("scale_a", "Tensor"), ("scale_w", "Tensor"),
                                ("residual", "Tensor"), ("residual_scale", "Tensor"), ("gamma", "Tensor"),
                                ("beta", "Tensor"), ("eps", "float"), ("bias", "Tensor?")], 1),
    ("silu_and_mul_quant", [("x", "Tensor")], 2),
    ("bias_gelu_quant", [("x", "Tensor"), ("bias", "Tensor?"), ("approximation", "str")], 1),
    ("bias_gelu_quant_int32", [("acc", "Tensor"), ("scale_a", "Tensor"), ("scale_w", "Tensor"), ("bias", "Tensor?"),
                               ("approximation", "str")], 1),
]


def register(custom_op: Any, run: Any) -> None:
    for op, inputs, divisor in FUSED_OPS:
        _register_op(custom_op, run, op, inputs, divisor)


def _register_op(custom_op: Any, run: Any, op: str, inputs: List[Tuple[str, str]], divisor: int) -> None:
    torch = _torch_ops.torch
    names = [name for name, _ in inputs]
    mutated = tuple(name for name, kind in inputs if "!" in kind)
    declared = ", ".join(f"{kind} {name}" for name, kind in inputs)
    extension_op = getattr(_qgemm, op)

    def outputs(args: Tuple[Any, ...], dtype: Any, quant_mode: str, symmetric: bool) -> Tuple[Any, Any, Any]:
        anchor = args[0]
        tokens, width = anchor.shape[0], anchor.shape[-1] // divisor
        q = torch.empty((tokens, width), dtype=dtype, device=anchor.device)
        empty_scale = torch.empty((0,), dtype=torch.float32, device=anchor.device)
        empty_azp = torch.empty((0,), dtype=torch.int32, device=anchor.device)
        if quant_mode == "static":
            return q, empty_scale, empty_azp
        scale = torch.empty((tokens, 1), dtype=torch.float32, device=anchor.device)
        azp = empty_azp if symmetric else torch.empty((tokens, 1), dtype=torch.int32, device=anchor.device)
        return q, scale, azp

    def call(q: Any, scale: Any, azp: Any, args: Tuple[Any, ...], quant_mode: str, narrow_range: bool) -> None:
        run(extension_op, args[0], out=q, scale=scale, azp=azp, **dict(zip(names, args)), mode=quant_mode,
            narrow_range=narrow_range)

    def out_impl(out: Any, scale: Any, azp: Any, *rest: Any) -> None:
        args, (quant_mode, narrow_range) = rest[:-2], rest[-2:]
        call(out, scale, azp, args, quant_mode, narrow_range)

    out_op = custom_op(f"qgemm::{op}_out", out_impl, mutates_args=("out", "scale", "azp") + mutated,
                       schema=f"(Tensor(a!) out, Tensor(b!) scale, Tensor(c!)? azp, {declared}, str quant_mode, "
                              "bool narrow_range) -> ()")
    out_op.register_fake(lambda *args: None)

    def functional_impl(*rest: Any) -> Tuple[Any, Any, Any]:
        args, (dtype, quant_mode, symmetric, narrow_range, scale, azp) = rest[:-6], rest[-6:]
        q, new_scale, new_azp = outputs(args, dtype, quant_mode, symmetric)
        if quant_mode == "static":
            call(q, scale, azp, args, quant_mode, narrow_range)
        else:
            call(q, new_scale, None if symmetric else new_azp, args, quant_mode, narrow_range)
        return q, new_scale, new_azp

    def functional_fake(*rest: Any) -> Tuple[Any, Any, Any]:
        args, (dtype, quant_mode, symmetric, _, _, _) = rest[:-6], rest[-6:]
        return outputs(args, dtype, quant_mode, symmetric)

    functional_declared = declared.replace("Tensor(r!)", "Tensor(a!)")
    functional = custom_op(f"qgemm::{op}", functional_impl, mutates_args=mutated,
                           schema=f"({functional_declared}, ScalarType dtype, str quant_mode, bool symmetric, "
                                  "bool narrow_range, Tensor? scale, Tensor? azp) -> (Tensor, Tensor, Tensor)")
    functional.register_fake(functional_fake)
