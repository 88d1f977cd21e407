"""Argo CD's Config Management Plugin (deploy/argocd-cmp/): its commands run as the sidecar's argocd-cmp-server runs
them, and the stream `generate` prints is the tree `policyc build` writes, as kustomize gives it.

The CMP server runs each command as `command[0]` with `command[1:] + args`, in the Application's source directory
(a copy of the repository), with the sidecar's environment, the build environment (ARGOCD_APP_NAME, ...), the
Application's plugin env prefixed ARGOCD_ENV_, and its parameters as ARGOCD_APP_PARAMETERS (JSON) and PARAM_<NAME>
(argo-cd cmpserver/plugin/plugin.go; docs/operator-manual/config-management-plugins.md). `discover.find.command`
matches when it exits 0 and prints something.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from policyc.compiler import compile_file
from policyc.output.write import write_tree
from tests.conftest import REPO, example_policies, policyc_command
from tests.test_argocd import _kustomize_listed
from tests.test_node_script import require

PLUGIN_DIR = REPO / "deploy" / "argocd-cmp"
PLUGIN = YAML(typ="safe", pure=True).load((PLUGIN_DIR / "plugin.yaml").read_text())
BROKEN = (REPO / "policies" / "minimal.yaml").read_text().replace("gpuTier: a100", "gpuTier: a10")  # PC302
KYVERNO = (REPO / "tests" / "test_precommit.py").read_text().split('KYVERNO = """', 1)[1].split('"""', 1)[0]


@pytest.fixture(scope="module")
def path(tmp_path_factory) -> str:
    return policyc_command(tmp_path_factory.mktemp("sidecar-bin"))


def _app_env(path: str, source_path: str, parameters: dict[str, str] | None = None, **plugin_env: str) -> dict:
    """What argocd-cmp-server gives a command: the sidecar's own environment, the build environment, the plugin env
    (each name prefixed ARGOCD_ENV_) and the parameters (JSON, and PARAM_<NAME>)."""
    env = {"PATH": path, "HOME": "/home/argocd", "LANG": "C.UTF-8"}
    env |= {
        "ARGOCD_APP_NAME": "gpu-cluster",
        "ARGOCD_APP_NAMESPACE": "argocd",
        "ARGOCD_APP_PROJECT_NAME": "default",
        "ARGOCD_APP_REVISION": "0123456789abcdef0123456789abcdef01234567",
        "ARGOCD_APP_REVISION_SHORT": "0123456",
        "ARGOCD_APP_SOURCE_PATH": source_path,
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/platform/gpu-cluster.git",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.33.0",
        "KUBE_API_VERSIONS": "v1,apps/v1,batch/v1,scheduling.k8s.io/v1",
    }
    env |= {f"ARGOCD_ENV_{name}": value for name, value in plugin_env.items()}
    parameters = parameters or {}
    env["ARGOCD_APP_PARAMETERS"] = json.dumps([{"name": n, "string": v} for n, v in parameters.items()])
    env |= {"PARAM_" + re.sub(r"[^A-Za-z0-9]", "_", n).upper(): v for n, v in parameters.items()}
    return env


def _run(spec: dict, app_dir: Path, env: dict) -> subprocess.CompletedProcess:
    argv = [*spec["command"], *spec.get("args", [])]
    return subprocess.run(argv, cwd=app_dir, env=env, capture_output=True, text=True, timeout=120)


def _discover(app_dir: Path, env: dict) -> bool:
    result = _run(PLUGIN["spec"]["discover"]["find"], app_dir, env)
    return result.returncode == 0 and result.stdout != ""


def _generate(app_dir: Path, env: dict) -> subprocess.CompletedProcess:
    spec = PLUGIN["spec"]
    if "init" in spec:
        assert _run(spec["init"], app_dir, env).returncode == 0
    return _run(spec["generate"], app_dir, env)


def _stream(text: str) -> list[dict]:
    return [d for d in YAML(typ="safe", pure=True).load_all(text) if d is not None]


@pytest.fixture(scope="module")
def policies(tmp_path_factory) -> Path:
    """A checkout of a repository whose Application path is policies/ (a copy of this repository's)."""
    repo = tmp_path_factory.mktemp("checkout")
    shutil.copytree(REPO / "policies", repo / "policies")
    return repo / "policies"


def test_plugin_configuration() -> None:
    assert PLUGIN["apiVersion"] == "argoproj.io/v1alpha1" and PLUGIN["kind"] == "ConfigManagementPlugin"
    spec = PLUGIN["spec"]
    # an Application names it <name>-<version>; discovery by a command only (fileName and glob would be tried first)
    assert (PLUGIN["metadata"]["name"], spec["version"]) == ("policyc", "v1")
    assert set(spec["discover"]) == {"find"} and set(spec["discover"]["find"]) == {"command"}
    assert [p["name"] for p in spec["parameters"]["static"]] == ["policy"]
    assert spec["preserveFileMode"] is False
    assert set(spec) <= {"version", "init", "generate", "discover", "parameters", "preserveFileMode", "provideGitCreds"}


@pytest.mark.parametrize("policy", [p.name for p in example_policies()])
def test_generate_prints_the_tree_kustomize_builds(policy, policies, path, tmp_path) -> None:
    env = _app_env(path, "policies", parameters={"policy": policy})
    assert _discover(policies, env)
    result = _generate(policies, env)
    assert result.returncode == 0, result.stderr
    streamed = _stream(result.stdout)

    compilation = compile_file(REPO / "policies" / policy)
    out = tmp_path / "manifests"
    write_tree(compilation.files, out)
    listed = _kustomize_listed(out)  # the objects of the files kustomization.yaml lists, in its order
    assert streamed == listed
    # nothing that Argo CD must not apply: templates, node scripts and the kustomization itself
    assert not [d for d in streamed if d["kind"] in ("Kustomization", "Pod", "Deployment", "Job", "PyTorchJob")]

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        require("kubectl")
    built = subprocess.run([kubectl, "kustomize", str(out)], capture_output=True, text=True, timeout=120, check=True)
    assert streamed == _stream(built.stdout)


def test_the_policy_from_the_plugin_env_or_the_only_one(policies, path, tmp_path) -> None:
    from_env = _generate(policies, _app_env(path, "policies", POLICY="minimal.yaml"))
    by_parameter = _generate(policies, _app_env(path, "policies", parameters={"policy": "minimal.yaml"}))
    assert from_env.returncode == 0 and from_env.stdout == by_parameter.stdout
    # the parameter wins over the env
    both = _generate(policies, _app_env(path, "policies", {"policy": "minimal.yaml"}, POLICY="ai-prod.yaml"))
    assert both.stdout == by_parameter.stdout

    single = tmp_path / "single"
    single.mkdir()
    shutil.copy(policies / "minimal.yaml", single / "cluster.yaml")
    (single / "kyverno.yaml").write_text(KYVERNO)
    (single / "values.yaml").write_text("replicas: 2\n")
    env = _app_env(path, "single")
    assert _discover(single, env)
    only = _generate(single, env)
    assert only.returncode == 0, only.stderr
    assert _stream(only.stdout) == _stream(by_parameter.stdout)


def test_several_policies_and_none(policies, path, tmp_path) -> None:
    several = _generate(policies, _app_env(path, "policies"))
    assert several.returncode == 1 and several.stdout == ""
    assert "several policies in policies (ai-dra.yaml ai-eks.yaml" in several.stderr
    assert "set the plugin parameter 'policy' to one" in several.stderr

    other = tmp_path / "kyverno"
    other.mkdir()
    (other / "policy.yaml").write_text(KYVERNO)  # Kyverno's ClusterPolicy: not policyc's
    (other / "kustomization.yaml").write_text("resources: [policy.yaml]\n")
    env = _app_env(path, "kyverno")
    assert not _discover(other, env)
    none = _generate(other, env)
    assert none.returncode == 1 and none.stdout == "" and "no policy in kyverno" in none.stderr


@pytest.mark.parametrize("outside", ["/etc/hostname", "../policies/minimal.yaml", "sub/../../x.yaml", ".."])
def test_the_policy_must_be_inside_the_application(outside, policies, path) -> None:
    result = _generate(policies, _app_env(path, "policies", parameters={"policy": outside}))
    assert result.returncode == 1 and result.stdout == ""
    assert f"the policy must be a path inside the application's directory, not {outside}" in result.stderr


def test_a_policy_with_errors_generates_nothing(policies, path, tmp_path) -> None:
    """Argo CD must get an error, not an empty stream: with pruning, an empty one deletes everything."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cluster.yaml").write_text(BROKEN)
    result = _generate(broken, _app_env(path, "broken"))
    assert result.returncode == 1 and result.stdout == ""
    assert "cluster.yaml:" in result.stderr and "PC302" in result.stderr


def test_generate_passes_shellcheck(tmp_path) -> None:
    require("shellcheck")
    generate = PLUGIN["spec"]["generate"]
    assert generate["command"] == ["sh", "-c"]
    script = tmp_path / "generate.sh"
    script.write_text("#!/bin/sh\n" + generate["args"][0])
    subprocess.run(["shellcheck", "--severity=style", str(script)], check=True)


def test_dockerfile_essentials() -> None:
    """What Argo CD's sidecar needs of the image (no hadolint in Debian, no Docker daemon in tests): run as user 999,
    the plugin configuration where argocd-cmp-server reads it, policyc on PATH; and every file it copies exists."""
    text = (PLUGIN_DIR / "Dockerfile").read_text()
    instructions = [
        line.split(None, 1) for line in re.sub(r"\\\n", " ", text).splitlines() if line and not line.startswith("#")
    ]
    names = [name.upper() for name, _ in instructions]
    args = dict(reversed([(name.upper(), rest) for name, rest in instructions]))  # the first of each
    assert names[0] == "FROM" and re.fullmatch(r"python:3\.1[1-9]-slim", args["FROM"])  # the package's Python
    assert [rest for name, rest in instructions if name == "USER"][-1] == "999"
    copies = [rest.split() for name, rest in instructions if name == "COPY"]
    assert ["--chown=999:999", "deploy/argocd-cmp/plugin.yaml", "/home/argocd/cmp-server/config/plugin.yaml"] in copies
    for copy in copies:  # paths relative to the build context, the repository's top directory
        for source in [a for a in copy[:-1] if not a.startswith("--")]:
            assert (REPO / source).exists(), source
    assert "/opt/policyc/bin/pip install /tmp/policyc" in args["RUN"]
    assert "--uid 999" in args["RUN"] and "--home-dir /home/argocd" in args["RUN"]
    assert "PATH=/opt/policyc/bin:$PATH" in [rest for name, rest in instructions if name == "ENV"]
    assert args["ENTRYPOINT"] == '["policyc"]'  # exec form; the sidecar's `command` replaces it


def test_the_stream_option_takes_no_check_or_machine_format(tmp_path) -> None:
    """`-o -` gives standard output to the objects: --check (which needs a directory) and diagnostics in a format for
    standard output are usage errors, and nothing is built."""
    from click.testing import CliRunner

    from policyc.commands.cli import main

    policy = str(REPO / "policies" / "minimal.yaml")
    for extra in (["--check"], ["--format", "json"], ["--format", "sarif"]):
        result = CliRunner().invoke(main, ["build", policy, "-o", "-", *extra])
        assert result.exit_code == 2 and result.stdout == "", extra
        assert "-o - prints the objects on standard output" in result.output
    # a directory named '-' is not written either way
    assert CliRunner().invoke(main, ["build", policy, "-o", "-"]).exit_code == 0 and not Path("-").exists()


def test_find_lists_policies_by_content(tmp_path) -> None:
    from click.testing import CliRunner

    from policyc.commands.cli import main

    (tmp_path / "b.yml").write_text(BROKEN)  # a policy with errors is still a policy: generate shows why
    (tmp_path / "a.yaml").write_text((REPO / "policies" / "minimal.yaml").read_text())
    (tmp_path / "kyverno.yaml").write_text(KYVERNO)
    (tmp_path / "notes.txt").write_text("apiVersion: policyc.io/v1alpha1\nkind: ClusterPolicy\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.yaml").write_text(BROKEN)  # not searched: the Application's directory only
    result = CliRunner().invoke(main, ["find", str(tmp_path)])
    assert result.exit_code == 0 and result.stdout == "a.yaml\nb.yml\n"
    empty = tmp_path / "sub" / "empty"
    empty.mkdir()
    assert CliRunner().invoke(main, ["find", str(empty)]).stdout == ""


def test_the_docs_install_and_use_the_plugin() -> None:
    """docs/argocd-plugin.md: the sidecar as Argo CD requires it, and an Application naming the plugin and its
    parameter as plugin.yaml declares them."""
    page = (REPO / "docs" / "argocd-plugin.md").read_text()
    blocks = [YAML(typ="safe", pure=True).load(b) for b in re.findall(r"```yaml\n(.*?)```", page, re.S)]
    patch, application = blocks
    (sidecar,) = patch["spec"]["template"]["spec"]["containers"]
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert sidecar["securityContext"]["runAsUser"] == 999
    mounts = {m["name"]: m["mountPath"] for m in sidecar["volumeMounts"]}
    assert mounts["var-files"] == "/var/run/argocd" and mounts["plugins"] == "/home/argocd/cmp-server/plugins"
    plugin = application["spec"]["source"]["plugin"]
    assert plugin["name"] == f"{PLUGIN['metadata']['name']}-{PLUGIN['spec']['version']}"
    announced = {p["name"] for p in PLUGIN["spec"]["parameters"]["static"]}
    assert {p["name"] for p in plugin["parameters"]} <= announced
