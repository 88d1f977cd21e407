"""The backend contracts: each registered package (scheduler backend or node provisioner) provides every face whole,
the shared code names no scheduler backend, a backend is imported only when a policy selects it, and `spec.scheduler`
is validated by the selected backend's model.
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import types
import typing
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from pathlib import Path

import pytest

from policyc import registry
from policyc.backends.interface import (
    AdoptFace,
    CodesFace,
    Provisioner,
    ProvisionerAdoptFace,
    ProvisionerSettingsFace,
    RulesFace,
    SchedulerBackend,
    SettingsFace,
)
from policyc.codes import RULES
from policyc.compiler import compile_text
from policyc.registry import PROVISIONERS, SCHEDULERS, scheduler, settings
from tests.conftest import POLICIES, REPO
from tests.provisioners import registered

PACKAGE = REPO / "policyc"
FACES = {"settings": SettingsFace, "codes": CodesFace, "rules": RulesFace, "backend": SchedulerBackend}
"""Each face of a scheduler backend's package, by module name, and the protocol it provides."""
PROVISIONER_FACES = {
    "settings": ProvisionerSettingsFace,
    "codes": CodesFace,
    "rules": RulesFace,
    "backend": Provisioner,
    "adopt": ProvisionerAdoptFace,
}
"""Each face of a node provisioner's package, by module name, and the protocol it provides."""
TEST_PROVISIONER = "sized"
"""The provisioner of the tests (`tests.provisioners.sized`), held to the contract as the registered ones are."""


def _conforms(value: object, hint: object) -> bool:
    """Whether `value` is of the declared type `hint`, the items of a tuple or mapping included."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, a) for a in args)
    if hint is type(None):
        return value is None
    if origin is None:
        return isinstance(value, hint)  # type: ignore[arg-type]  # a class
    if origin is type:
        return isinstance(value, type) and issubclass(value, args[0])
    if origin is Callable:
        return callable(value)
    if origin is tuple and args[-1] is Ellipsis:
        return isinstance(value, tuple) and all(_conforms(v, args[0]) for v in value)
    if origin is Mapping:
        return isinstance(value, Mapping) and all(
            _conforms(k, args[0]) and _conforms(v, args[1]) for k, v in value.items()
        )
    raise AssertionError(f"no rule for a member of type {hint}")


def _methods(protocol: type) -> list[str]:
    return [m for m, value in vars(protocol).items() if inspect.isfunction(value) and not m.startswith("_")]


def _members(protocol: type) -> list[str]:
    """What a protocol declares: its data members, then its functions."""
    return [*typing.get_type_hints(protocol), *_methods(protocol)]


def _signature(function: Callable) -> tuple[list[tuple[str, object]], object]:
    """(name, annotation) of each parameter but `self`, and the return annotation."""
    signature = inspect.signature(function)
    return [
        (p.name, p.annotation) for p in signature.parameters.values() if p.name != "self"
    ], signature.return_annotation


def _face_whole(module: object, protocol: type) -> None:
    assert isinstance(module, protocol), [m for m in _members(protocol) if not hasattr(module, m)]
    for member, hint in typing.get_type_hints(protocol).items():
        assert _conforms(getattr(module, member), hint), (member, hint)
    for method in _methods(protocol):
        assert _signature(getattr(module, method)) == _signature(getattr(protocol, method)), method


@pytest.mark.parametrize("name", list(SCHEDULERS))
@pytest.mark.parametrize("face", list(FACES))
def test_each_backend_provides_each_face_whole(name: str, face: str) -> None:
    """Every member the face's protocol declares: data of its declared type, functions with its parameters and
    annotations (as the Kubernetes scheduler framework asserts that a plugin implements an extension point)."""
    _face_whole(registry.face("scheduler", name, face), FACES[face])


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_each_backend_reads_its_queues_back_for_import(name: str) -> None:
    """The fifth face of a scheduler backend, `adopt` (policyc import only), whole; a cluster without its queues
    gives None."""
    face = registry.scheduler_adopt(name)
    _face_whole(face, AdoptFace)

    class Empty:
        name = "empty"

        def objects(self, kind, api_version=None):
            return iter(())

        def judged(self, kind):
            return True

    assert face.read_queues(Empty(), "example.com", "nvidia.com/gpu") is None


@pytest.mark.parametrize("name", [*PROVISIONERS, TEST_PROVISIONER])
def test_a_cluster_without_a_provisioners_objects_gives_it_no_pools(name: str) -> None:
    """Every provisioner reads pools back for import (`adopt`), and says what of them the cluster does not show."""
    from policyc.ir import LabelKeys

    class Empty:
        name = "empty"

        def objects(self, kind, api_version=None):
            return iter(())

    with registered() if name == TEST_PROVISIONER else nullcontext():
        face = registry.provisioner_adopt(name)
        read = face.read_pools(Empty(), LabelKeys("example.com"))
        assert (read.pools, read.settings, read.expressed) == ([], {}, set())
        assert face.UNSEEN


@pytest.mark.parametrize("name", [*PROVISIONERS, TEST_PROVISIONER])
@pytest.mark.parametrize("face", list(PROVISIONER_FACES))
def test_each_provisioner_provides_each_face_whole(name: str, face: str) -> None:
    with registered() if name == TEST_PROVISIONER else nullcontext():
        _face_whole(registry.face("provisioner", name, face), PROVISIONER_FACES[face])
        assert name == registry.provisioner(name).NAME


def test_a_provisioners_rules_join_the_catalogue_in_its_family_without_numbers() -> None:
    from policyc import codes

    with registered():
        for name in registry.PROVISIONERS:
            for rule in registry.face("provisioner", name, "codes").RULES:
                assert rule.code is None, "no new rule takes a number"
                assert codes.rule(rule.name).id == codes.rule(rule.name).code == f"{name}/{rule.name}"


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_each_backend_is_registered_under_its_own_name(name: str) -> None:
    backend, declared = scheduler(name), settings(name)
    assert name == backend.NAME
    assert declared.Settings.model_fields["backend"].annotation.__args__ == (name,)
    assert set(declared.DEFAULT_KINDS) == {"training", "inference"}


def test_a_module_missing_a_member_does_not_conform() -> None:
    """The check of a face can fail: a module without `tolerations_added` is not a backend."""
    import types

    partial = types.ModuleType("partial")
    vars(partial).update({m: getattr(scheduler("volcano"), m) for m in _members(SchedulerBackend)})
    assert isinstance(partial, SchedulerBackend)
    del partial.tolerations_added
    assert not isinstance(partial, SchedulerBackend)
    assert not _conforms(("not a reference",), typing.get_type_hints(SchedulerBackend)["REFERENCES"])


def test_backend_rules_join_the_catalogue_in_a_range_of_their_own() -> None:
    """Codes are unique across backends, a backend's rules join the catalogue in the family of its name (a rule
    without a number under its identity, `<backend>/<rule>`), and its numbered codes share one hundred (PC6xx,
    PC7xx, ...)."""
    import importlib
    from dataclasses import replace

    seen: dict[str, str] = {}
    for name, package in SCHEDULERS.items():
        rules = importlib.import_module(f"{package}.codes").RULES
        for rule in rules:
            code = rule.code or f"{name}/{rule.name}"
            assert code not in seen, (code, name, seen.get(code))
            seen[code] = name
            assert RULES[code] == replace(rule, family=name, code=code)
            assert RULES[code].id == f"{name}/{rule.name}"
    hundreds = {n: {c[:3] for c, owner in seen.items() if owner == n and "PC6" <= c < "PC9"} for n in SCHEDULERS}
    owners = [h for hs in hundreds.values() for h in hs]
    assert len(owners) == len(set(owners)), hundreds


UPSTREAM_CRDS = {"tools/gen_crd_schemas.py": {"volcano", "kueue", "kai"}, "bench/generate_dump.py": {"volcano"}}
"""Scripts that may name these backends: the CRD schema generator reads each upstream's CRDs from its folder of
`../shared/crds/` by name (a backend whose objects are custom resources adds its folder there); the audit
benchmark's dump generator makes the running cluster of the (Volcano) benchmark policy, as Volcano's controllers and
the API server leave its objects (recorded in `../shared/testdata/cluster-dumps`): what a real Volcano cluster holds,
not anything policyc builds."""


def _naming_a_backend(paths: list[Path], root: Path = REPO) -> list[str]:
    """The lines of `paths` (under `root`) that name a scheduler backend (by its name or title), but for
    `UPSTREAM_CRDS`."""
    found = []
    for path in paths:
        known = UPSTREAM_CRDS.get(path.relative_to(root).as_posix(), set())
        names = [n for n in SCHEDULERS if n not in known] + [settings(n).TITLE for n in SCHEDULERS if n not in known]
        pattern = re.compile("|".join(map(re.escape, names)), re.IGNORECASE)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_shared_code_names_no_backend() -> None:
    """Outside the backend packages only the registry names a backend (the issue's `git grep` criterion), in policyc
    and in the scripts beside it: the benchmark and its generator ask a backend's settings what differs."""
    backends = PACKAGE / "backends"
    shared = [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not (path.is_relative_to(backends) and path.relative_to(backends).parts[0] in SCHEDULERS)
        and path != PACKAGE / "registry.py"
    ]
    scripts = sorted([*(REPO / "bench").rglob("*.py"), *(REPO / "tools").rglob("*.py")])
    assert scripts, "the scripts are where they were"
    found = _naming_a_backend(shared + scripts)
    assert not found, "\n".join(found)


def test_a_script_naming_a_backend_is_found(tmp_path) -> None:
    """The check can fail: a line naming a backend by its title, in any case, is found; the CRD generator's own
    upstream folders are not, any other backend's name there is."""
    script = REPO / "tools" / "gen_crd_schemas.py"
    naming = [f"# {settings(n).TITLE.upper()} queues\n" for n in SCHEDULERS]
    written = tmp_path / "script.py"
    written.write_text("".join(naming), encoding="utf-8")
    assert len(_naming_a_backend([written], tmp_path)) == len(SCHEDULERS)
    known = UPSTREAM_CRDS[script.relative_to(REPO).as_posix()]
    others = [n for n in SCHEDULERS if n not in known]
    assert others and not _naming_a_backend([script])
    assert all(n not in script.read_text(encoding="utf-8").lower() for n in others)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_only_the_selected_backend_is_imported(name: str) -> None:
    """A build imports the selected backend's modules, and of the others only their light settings and codes."""
    chosen = _policy(f"{{backend: {name}}}")
    code = (
        "import sys; from policyc import compile; r = compile(sys.stdin.read()); "
        "print(sorted(m for m in sys.modules if m.startswith('policyc.backends.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], input=chosen, capture_output=True, text=True, check=True)
    loaded = eval(out.stdout)  # a printed list of module names
    for other, package in SCHEDULERS.items():
        mine = [m for m in loaded if m.startswith(package + ".")]
        if other == name:
            assert {f"{package}.backend", f"{package}.rules"} <= set(mine)
        else:
            assert set(mine) <= {f"{package}.settings", f"{package}.codes"}, (other, mine)


def _policy(scheduler_block: str) -> str:
    text = (POLICIES / "minimal.yaml").read_text(encoding="utf-8")
    assert "scheduler:" not in text
    return text.replace("spec:\n", f"spec:\n  scheduler: {scheduler_block}\n", 1)


@pytest.mark.parametrize(
    ("block", "code", "message", "hint"),
    [
        ("{backend: kueu}", "PC104", "'scheduler.backend' is 'kueu', which is not one of", "did you mean 'kueue'?"),
        ("{backend: 3}", "PC102", "'scheduler.backend' must be one of", None),
        ("{backend: kueue, queuePlugin: capacity}", "PC702", "a Volcano setting; the kueue", "remove queuePlugin"),
        ("{backend: kueue, placment: spread}", "PC101", "unknown field 'placment'", "did you mean 'placement'?"),
        ("{actions: [enqueue, alocate]}", "PC601", "alocate", "did you mean 'allocate'?"),
    ],
)
def test_scheduler_settings_are_validated_by_the_selected_backends_model(
    block: str, code: str, message: str, hint: str | None
) -> None:
    result = compile_text(_policy(block), "policy.yaml")
    [d] = [d for d in result.report.diagnostics if d.code == code]
    assert message in d.message
    assert "kueue." not in d.message and "volcano." not in d.message, "the union's tag leaked into the location"
    if hint is not None:
        assert d.hint is not None and hint in d.hint
    assert d.path[:2] == ("spec", "scheduler")


def test_an_unknown_backend_is_reported_with_every_other_error() -> None:
    source = _policy("{backend: slurm}").replace("kubernetesVersion:", "kubernetesVersion: 7\n  x:", 1)
    result = compile_text(source, "policy.yaml")
    codes = {d.code for d in result.report.diagnostics}
    assert "PC104" in codes and len(result.report.diagnostics) >= 2


def test_the_json_schema_accepts_each_backend_and_refuses_foreign_settings() -> None:
    import jsonschema
    from ruamel.yaml import YAML

    from policyc.language.model import json_schema

    validator = jsonschema.Draft202012Validator(json_schema())
    base = YAML(typ="safe").load(POLICIES / "minimal.yaml")
    assert validator.is_valid(base)
    for name in SCHEDULERS:
        assert validator.is_valid({**base, "spec": {**base["spec"], "scheduler": {"backend": name}}}), name
    assert validator.is_valid({**base, "spec": {**base["spec"], "scheduler": {"queuePlugin": "capacity"}}})
    for name in list(SCHEDULERS)[1:]:
        foreign = {"backend": name, "queuePlugin": "capacity"}
        assert not validator.is_valid({**base, "spec": {**base["spec"], "scheduler": foreign}}), name


def test_the_registry_is_the_only_list_of_backends() -> None:
    """The default backend is the first registered; its settings model is what an omitted scheduler gives."""
    from policyc.language.model.policy import Spec

    default = Spec.model_fields["scheduler"].default_factory()
    assert default.backend == next(iter(SCHEDULERS))
