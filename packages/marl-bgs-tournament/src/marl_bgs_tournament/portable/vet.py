"""What a loaded program may be: a pure computation (`vet`) whose module agrees with the metadata
beside it, and that takes and returns exactly what its file's manifest says, grouped as the
loader calls it (`check_signatures`). A file that passes plays; none fails later at run time for
what its programs claim to be."""

from __future__ import annotations

import re
from typing import Any

import jax
from jax import export
from jax.extend import mlir
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import chlo, sdy, stablehlo

from marl_bgs_tournament.errors import TournamentError
from marl_bgs_tournament.portable.format import Spec, mode_spec, spec_list

# The only custom calls a loaded program may make: sharding annotations, shape assertions and
# the GPU random-bit kernels JAX itself emits. No host callbacks, no linear-algebra kernels fed
# with crafted operands, no foreign code.
SAFE_CUSTOM_CALLS = frozenset({
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
    "shape_assertion", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "AllocateBuffer",
})  # fmt: skip
UNSAFE_OPS = re.compile(r"\b(?:stablehlo|mhlo)\.(?:infeed|outfeed|send|recv)\b")
CUSTOM_CALL = re.compile(r"custom_call\s*@([\w.$-]+)|call_target_name\s*=\s*\"([^\"]*)\"")
# MLIR's names of the dtypes a System file may hold
ELEMENT = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "uint8": "ui8",
           "uint16": "ui16", "uint32": "ui32", "float16": "f16", "float32": "f32"}  # fmt: skip
PLATFORM_INDEX = ("tensor<i32>", "tensor<i64>")  # a multi-platform module's first argument

CALLS = {"act": "act(params, key data, memory, inputs) -> (actions, memory)",
         "init": "init(params, key data) -> memory"}  # fmt: skip
Programs = dict[int, tuple[export.Exported, export.Exported]]  # batch size -> (act, init)


def _module(ex: export.Exported) -> tuple[str, list[str] | None, list[str] | None]:
    """The program's module as text, and its entry function's argument and result types as the
    module itself declares them (None: no single `main`)."""
    context = ir.Context()
    for dialect in (stablehlo, chlo, sdy):
        dialect.register_dialect(context)
    with context:
        module = mlir.deserialize_portable_artifact(ex.mlir_module_serialized)
        mains = [
            op.operation
            for op in module.body.operations
            if op.operation.name == "func.func"
            and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"
        ]
        if len(mains) != 1:
            return str(module), None, None
        kind = ir.FunctionType(ir.TypeAttr(mains[0].attributes["function_type"]).value)
        return str(module), [str(t) for t in kind.inputs], [str(t) for t in kind.results]


def _tensor(aval: Any) -> str:
    dims = "".join(f"{d}x" for d in aval.shape)
    return f"tensor<{dims}{ELEMENT.get(str(aval.dtype), str(aval.dtype))}>"


def _signature_problems(ex: export.Exported, args: list[str], results: list[str]) -> list[str]:
    """Where the metadata beside the module (avals, kept arguments, shardings) differs from the
    module's own entry function: JAX would trust the metadata and fail when the program runs."""
    kept = list(ex.module_kept_var_idx)
    if kept != sorted(set(kept)) or any(not 0 <= i < len(ex.in_avals) for i in kept):
        return [f"kept arguments {kept[:8]} outside its {len(ex.in_avals)} arguments"]
    problems = []
    if len(ex.in_shardings_hlo) != len(ex.in_avals) or len(ex.out_shardings_hlo) != len(
        ex.out_avals
    ):
        problems.append("shardings that do not match its arguments and results")
    index = args[:1] if len(ex.platforms) > 1 else []
    if len(ex.platforms) > 1 and index[0] not in PLATFORM_INDEX:
        problems.append(f"a platform index of type {index[0][:40]}")
    for what, module, metadata in (
        ("argument", args[len(index) :], [_tensor(ex.in_avals[i]) for i in kept]),
        ("result", results, [_tensor(a) for a in ex.out_avals]),
    ):
        if len(module) != len(metadata):
            problems.append(f"its module has {len(module)} {what}s, its metadata {len(metadata)}")
        elif module != metadata:
            k = next(k for k, (a, b) in enumerate(zip(module, metadata, strict=True)) if a != b)
            problems.append(
                f"its module's {what} {k} is {module[k][:60]}, its metadata says {metadata[k][:60]}"
            )
    return problems


def vet(ex: export.Exported, where: str) -> None:
    """Refuse a program that could do more than compute: host callbacks or other custom calls
    outside `SAFE_CUSTOM_CALLS`, infeed/outfeed/send/recv, side effects, disabled safety checks,
    several devices, symbolic shapes, no lowering for this machine's platform, or metadata (the
    arguments' and results' shapes and dtypes) other than its module's own."""
    try:
        text, args, results = _module(ex)
    except Exception as err:  # hostile bytes the deserializer cannot read
        raise TournamentError(
            f"{where}: refused: not a StableHLO module ({type(err).__name__})"
        ) from None
    calls = {a or b for a, b in CUSTOM_CALL.findall(text)} - SAFE_CUSTOM_CALLS
    problems = [f"custom calls {sorted(calls)[:4]}"] if calls else []
    if UNSAFE_OPS.search(text):
        problems.append("infeed/outfeed/send/recv")
    if ex.ordered_effects or ex.unordered_effects:
        problems.append("side effects")
    if ex.disabled_safety_checks:
        problems.append("disabled safety checks")
    if ex.nr_devices != 1:
        problems.append(f"{ex.nr_devices} devices")
    if any(not isinstance(d, int) for a in (*ex.in_avals, *ex.out_avals) for d in a.shape):
        problems.append("symbolic shapes")
    backend = {"gpu": "cuda"}.get(jax.default_backend(), jax.default_backend())
    if backend not in ex.platforms:
        problems.append(f"no lowering for {backend} (has {list(ex.platforms)})")
    if args is None or results is None:
        problems.append("no single entry function 'main'")
    elif not problems:  # (effects and symbolic shapes add arguments of their own)
        problems += _signature_problems(ex, args, results)
    if problems:
        raise TournamentError(f"{where}: refused: {'; '.join(problems)}")


def check_signatures(progs: Programs, m: dict[str, Any], source: str) -> None:
    """Each program takes and returns exactly what the manifest says (its mode's team size and
    action heads), at its batch size, and groups them as the loader calls it: act(params, key
    data, memory, inputs) -> (actions, memory) and init(params, key data) -> memory, each group
    a list of leaves."""
    params = spec_list(m["params"], "params")
    memory = spec_list(m["memory"], "memory")
    inputs = spec_list(m["inputs"], "inputs")
    spec = mode_spec(m["mode"])
    size, heads = spec.team_size, len(spec.action_heads)
    p, mem, ins = [0] * len(params), [0] * len(memory), [0] * len(inputs)
    trees = {
        "act": (jax.tree.structure(((p, 0, mem, ins), {})), jax.tree.structure((0, mem))),
        "init": (jax.tree.structure(((p, 0), {})), jax.tree.structure(mem)),
    }
    for b, (act_ex, init_ex) in progs.items():
        key = ((b, size, 2) if m["per_agent"] else (b, 2), "uint32")
        batched: Spec = [((b, *s), d) for s, d in memory]
        want = {
            "act": (params + [key] + batched + [((b, *s), d) for s, d in inputs],
                    [((b, size, heads), "int32"), *batched]),
            "init": ([*params, ((b, 2), "uint32")], batched),  # one key a game
        }  # fmt: skip
        for kind, ex in (("act", act_ex), ("init", init_ex)):
            where = f"{source}: {kind}-{b}.jaxexport"
            got = ([(tuple(a.shape), str(a.dtype)) for a in ex.in_avals],
                   [(tuple(a.shape), str(a.dtype)) for a in ex.out_avals])  # fmt: skip
            if got != want[kind]:
                raise TournamentError(
                    f"{where}: its arguments or results differ from the manifest's params, "
                    "memory, inputs and per_agent"
                )
            for side, got_tree, want_tree in zip(
                ("arguments", "results"), (ex.in_tree, ex.out_tree), trees[kind], strict=True
            ):
                if got_tree != want_tree:
                    raise TournamentError(
                        f"{where}: its {side} are not grouped as {CALLS[kind]} (params, memory "
                        "and inputs each a list of leaves)"
                    )
