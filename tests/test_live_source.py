"""The live-cluster source (`policyc.cluster.live.LiveSource`) against a local fake API server (tests/fake_apiserver.py)
serving a dump recorded from a real kube-apiserver: every object once over several pages, one page held at a time,
discovery, kubectl's kubeconfig rules, each failure as one line, and nothing but GET ever sent. No real API server
runs here: the fake copies the real server's paths, paging and errors (its docstring says which).

Also the read-only RBAC of deploy/audit-rbac.yaml: valid, get/list only, and every kind the live source reads."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import kubernetes_validate
import pytest
from ruamel.yaml import YAML

from policyc.cluster import live
from policyc.cluster.live import LiveSource
from policyc.cluster.source import NODE, POD, ClusterSource, Kind, SourceError
from tests.conftest import REPO, missing_shared_data, require_tool, shared_dir
from tests.fake_apiserver import FakeApiServer, plural

QUEUE = Kind("scheduling.volcano.sh", "Queue")


@pytest.fixture(scope="module")
def dump() -> list[dict]:
    path = shared_dir() / "testdata" / "cluster-dumps" / "ai-prod" / "clean.json"
    if not path.is_file():
        missing_shared_data(path)
    return json.loads(path.read_text(encoding="utf-8"))["items"]


@pytest.fixture(autouse=True)
def no_kubeconfig_of_the_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing of the machine's own: no ~/.kube/config, no KUBECONFIG, not in a pod."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)


def by_name(objects) -> list[tuple[str, str]]:
    return sorted((o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects)


def failure(make_and_read) -> str:
    """The one line a SourceError says."""
    with pytest.raises(SourceError) as error:
        make_and_read()
    line = str(error.value)
    assert "\n" not in line and "Traceback" not in line, line
    return line


def test_every_object_of_every_kind_arrives_once_over_pages(dump: list[dict], tmp_path: Path) -> None:
    with FakeApiServer(dump) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config")), page_size=4)
        assert isinstance(source, ClusterSource)
        assert source.name == "fake"
        for kind in sorted({Kind.of(o) for o in dump}):
            expected = [o for o in dump if Kind.of(o) == kind]
            got = list(source.objects(kind))
            assert by_name(got) == by_name(expected), kind
            assert Counter(json.dumps(o, sort_keys=True) for o in got) == Counter(
                json.dumps(o, sort_keys=True) for o in expected
            ), f"{kind}: the objects as recorded, apiVersion and kind filled in on typed lists' items"
            assert source.judged(kind)
    # 37 nodes, 4 a page: 9 full pages and one of 1; 9 pods: 4, 4, 1.
    assert server.pages["nodes"] == 10
    assert server.pages["pods"] == 3
    assert {method for method, _ in server.requests} == {"GET"}


def test_the_fake_fails_a_test_that_sends_anything_but_get(dump: list[dict]) -> None:
    """The guard every test of a live read stands on (FakeApiServer's exit)."""
    refused = pytest.raises(AssertionError, match=r"more than GET: \['PATCH /api/v1/nodes/gpu-1'\]")
    with refused, FakeApiServer(dump) as server:
        request = urllib.request.Request(f"{server.url}/api/v1/nodes/gpu-1", data=b"{}", method="PATCH")
        with pytest.raises(urllib.error.HTTPError, match="405"):
            urllib.request.urlopen(request, timeout=10)


def test_a_page_is_asked_for_only_once_the_caller_took_the_last(dump: list[dict], tmp_path: Path) -> None:
    with FakeApiServer(dump) as server:
        pods = LiveSource(str(server.kubeconfig(tmp_path / "config")), page_size=2).objects(POD)
        assert server.pages["pods"] == 0
        next(pods), next(pods)  # the first page's two pods
        assert server.pages["pods"] == 1
        next(pods)
        assert server.pages["pods"] == 2
        assert len(list(pods)) == 9 - 3
        # 9 pods, 2 a page: 5 pages.
        assert server.pages["pods"] == 5


def test_a_kind_the_server_does_not_serve_yields_nothing_and_is_not_judged(dump: list[dict], tmp_path: Path) -> None:
    with FakeApiServer(dump) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config")))
        for kind in (
            Kind("kueue.x-k8s.io", "ClusterQueue"),  # a group not served
            Kind("apps", "StatefulSet"),  # a served group without the kind
            Kind("", "Binding"),  # served, but never listed
        ):
            assert list(source.objects(kind)) == []
            assert not source.judged(kind), kind
        assert source.judged(NODE)
        assert not {path for _, path in server.requests if path.endswith(("/bindings", "/statefulsets"))}


def test_the_preferred_version_unless_one_is_named(dump: list[dict], tmp_path: Path) -> None:
    with FakeApiServer(dump, older_versions={"scheduling.volcano.sh": "v1alpha1"}) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config")))
        assert source.resource(QUEUE).path == "/apis/scheduling.volcano.sh/v1beta1/queues"
        assert {q["apiVersion"] for q in source.objects(QUEUE)} == {"scheduling.volcano.sh/v1beta1"}
        older = list(source.objects(QUEUE, "scheduling.volcano.sh/v1alpha1"))
        assert {q["apiVersion"] for q in older} == {"scheduling.volcano.sh/v1alpha1"} and len(older) == 3
        assert list(source.objects(QUEUE, "scheduling.volcano.sh/v9")) == []
        assert not source.judged(QUEUE)
        assert source.resource(POD).namespaced and not source.resource(NODE).namespaced


def test_401_names_the_credentials(dump: list[dict], tmp_path: Path) -> None:
    with FakeApiServer(dump) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config", token="stale")))
        line = failure(lambda: list(source.objects(NODE)))
    assert line == (
        f"the API server at {server.url} refused the credentials of context 'fake' (401 Unauthorized): they are "
        "missing, wrong or expired; log in again or fix the kubeconfig's user"
    )


def test_403_names_what_was_refused_and_the_read_only_role(dump: list[dict], tmp_path: Path) -> None:
    with FakeApiServer(dump, forbidden={"reader": {"pods"}}) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config")))
        assert len(list(source.objects(NODE))) == 37
        line = failure(lambda: list(source.objects(POD)))
    assert line.startswith(f"the API server at {server.url} does not let context 'fake' list pods (403 Forbidden: ")
    assert 'User "reader" cannot list resource "pods"' in line
    assert "bind the ClusterRole policyc-audit-reader of deploy/audit-rbac.yaml" in line
    with FakeApiServer(dump, forbidden={"reader": {"queues"}}) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config")))
        line = failure(lambda: list(source.objects(QUEUE)))
    assert "does not let context 'fake' list queues.scheduling.volcano.sh (403 Forbidden: " in line


def test_410_on_an_expired_continue_token_says_to_rerun_and_does_not_start_over(
    dump: list[dict], tmp_path: Path
) -> None:
    with FakeApiServer(dump, expire_after=2) as server:
        pods = LiveSource(str(server.kubeconfig(tmp_path / "config")), page_size=2).objects(POD)
        seen = []
        line = failure(lambda: seen.extend(pods))
    assert len(seen) == 4, "the two pages served, each pod once"
    assert server.pages["pods"] == 2, "no third page: the list was not restarted"
    assert line.startswith("the API server expired the list being read to list pods after 2 page(s) of 2 (410 Gone: ")
    assert line.endswith("the cluster changed while it was paged through: rerun")


def test_an_unreachable_server_names_its_address(tmp_path: Path) -> None:
    with FakeApiServer([]) as server:
        config = server.kubeconfig(tmp_path / "config")
    source = LiveSource(str(config))  # the server is gone: its port is closed
    line = failure(lambda: source.judged(NODE))
    assert line == (
        f"cannot reach the API server at {server.url} (Connection refused); check that it is up and that the server "
        "of context 'fake' is its address"
    )


def test_a_server_that_does_not_answer_in_time(
    dump: list[dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "READ_TIMEOUT", 0.2)
    with FakeApiServer(dump, stall=1.0) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config")))
        line = failure(lambda: list(source.objects(NODE)))
    assert line == (
        f"cannot reach the API server at {server.url} (no answer within 10 s to connect or 0.2 s to read); check "
        "that it is up and that the server of context 'fake' is its address"
    )


@pytest.fixture(scope="module")
def server_tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    folder = tmp_path_factory.mktemp("tls")
    certificate, key = folder / "server.crt", folder / "server.key"
    subprocess.run(
        [
            *(
                require_tool("openssl", "apt-get install openssl"),
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=fake-apiserver",
            ),
            *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(certificate)),
        ],
        check=True,
        capture_output=True,
    )
    return certificate, key


def test_tls_is_verified_against_the_kubeconfig_s_authority(
    dump: list[dict], tmp_path: Path, server_tls: tuple[Path, Path]
) -> None:
    with FakeApiServer(dump, tls=server_tls) as server:
        untrusted = LiveSource(str(server.kubeconfig(tmp_path / "untrusted")))
        line = failure(lambda: untrusted.judged(NODE))
        config = server.kubeconfig(tmp_path / "trusted", authority=server_tls[0])
        assert len(list(LiveSource(str(config)).objects(NODE))) == 37
    assert line.startswith(f"TLS with the API server at {server.url} failed (")
    assert "certificate verify failed" in line
    assert line.endswith("check the certificate-authority of context 'fake' in the kubeconfig")


def test_in_a_pod_without_kubeconfig_its_service_account(
    dump: list[dict], tmp_path: Path, server_tls: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a pod has: the service's address in the environment, the token and CA mounted (here under tmp_path)."""
    from kubernetes.config import incluster_config

    token = tmp_path / "token"
    token.write_text("reader-token", encoding="utf-8")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(server_tls[0]))
    with FakeApiServer(dump, tls=server_tls) as server:
        monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
        monkeypatch.setenv("KUBERNETES_SERVICE_PORT", server.url.rpartition(":")[2])
        source = LiveSource()
        assert source.name == "in-cluster service account"
        assert len(list(source.objects(NODE))) == 37
        (tmp_path / "home" / ".kube").mkdir(parents=True)
        server.kubeconfig(tmp_path / "home" / ".kube" / "config", context="home")
        assert LiveSource().name == "home", "a kubeconfig comes first"


def test_an_unknown_context_lists_the_file_s_contexts(tmp_path: Path) -> None:
    with FakeApiServer([]) as server:
        config = server.kubeconfig(tmp_path / "config")
    line = failure(lambda: LiveSource(str(config), context="prod"))
    assert line == f"context 'prod' is not in kubeconfig {config}; its contexts: fake"


def test_no_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere" / "config"
    line = failure(lambda: LiveSource(str(missing)))
    assert line == f"kubeconfig {missing} does not exist; pass the path of an existing kubeconfig file"
    line = failure(LiveSource)  # no KUBECONFIG, no ~/.kube/config, not in a pod
    assert line == (
        "no kubeconfig: ~/.kube/config does not exist and this is not a pod with a service account; pass "
        "--kubeconfig FILE or set KUBECONFIG, or read a dump instead: --from FILE"
    )


def test_a_kubeconfig_that_is_not_yaml(tmp_path: Path) -> None:
    broken = tmp_path / "config"
    broken.write_text("contexts: [\n- name: a\n", encoding="utf-8")
    line = failure(lambda: LiveSource(str(broken)))
    assert line.startswith(f"cannot read kubeconfig {broken}: while parsing a flow node")


def test_kubeconfig_list_and_context_as_kubectl_takes_them(dump: list[dict], tmp_path: Path, monkeypatch) -> None:
    """KUBECONFIG is a list: missing files are passed over, the first file to set current-context wins, and a context
    of any file can be named."""
    with FakeApiServer(dump) as server:
        first = server.kubeconfig(tmp_path / "first", context="first")
        second = server.kubeconfig(tmp_path / "second", context="second", token="stale")
        monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{first}:{second}")
        assert LiveSource().name == "first"
        assert len(list(LiveSource().objects(NODE))) == 37
        assert LiveSource(context="second").name == "second"
        (tmp_path / "home" / ".kube").mkdir(parents=True)
        server.kubeconfig(tmp_path / "home" / ".kube" / "config", context="home")
        monkeypatch.delenv("KUBECONFIG")
        assert LiveSource().name == "home"


def test_an_exec_plugin_gives_the_token(dump: list[dict], tmp_path: Path) -> None:
    """As `aws eks get-token` or `gke-gcloud-auth-plugin` do: the kubeconfig's user runs a command that prints an
    ExecCredential."""
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "reader-token"},
    }
    (tmp_path / "plugin.py").write_text(f"print({json.dumps(credential)!r})\n", encoding="utf-8")
    (tmp_path / "failing.py").write_text("import sys\nsys.exit('no session: log in first')\n", encoding="utf-8")

    def exec_user(script: str) -> str:
        return (
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n"
            f"      command: {sys.executable}\n      args: [{tmp_path / script}]\n"
        )

    with FakeApiServer(dump) as server:
        source = LiveSource(str(server.kubeconfig(tmp_path / "config", token="", extra=exec_user("plugin.py"))))
        assert len(list(source.objects(NODE))) == 37
        config = server.kubeconfig(tmp_path / "failing", token="", extra=exec_user("failing.py"))
        line = failure(lambda: LiveSource(str(config)))
    assert line.startswith("context 'fake': no credentials: ")
    assert "no session: log in first" in line
    assert line.endswith("run the command by hand to see why")


def test_making_the_module_does_not_import_the_client_library() -> None:
    """The library is the `cluster` extra's and costs most of a second: only a LiveSource made imports it."""
    code = "import sys, policyc.cluster.live; print(sorted(m for m in sys.modules if m.split('.')[0] == 'kubernetes'))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert run.stdout.strip() == "[]"


# deploy/audit-rbac.yaml

RBAC = REPO / "deploy" / "audit-rbac.yaml"
NOT_CLUSTER_OBJECTS = {
    "kubelet.config.k8s.io": "a kubelet's configuration file",
    "kustomize.config.k8s.io": "Argo CD's kustomization.yaml",
}
"""Groups of golden files that are files policyc writes, not objects on a cluster."""
GROUP_OF_BUILT_IN = {
    "priorityclasses": "scheduling.k8s.io",
    "validatingadmissionpolicies": "admissionregistration.k8s.io",
    "validatingadmissionpolicybindings": "admissionregistration.k8s.io",
    "mutatingadmissionpolicies": "admissionregistration.k8s.io",
    "mutatingadmissionpolicybindings": "admissionregistration.k8s.io",
}
"""The group of a resource kubectl was asked for without one (`dumped_kinds` names them so), as discovery finds it."""


def rbac_documents() -> list[dict]:
    return [d for d in YAML(typ="safe").load_all(RBAC.read_text(encoding="utf-8")) if d]


def granted() -> set[tuple[str, str]]:
    """(group, resource) the ClusterRole lets list and get."""
    (role,) = (d for d in rbac_documents() if d["kind"] == "ClusterRole")
    return {
        (group, resource)
        for rule in role["rules"]
        if {"get", "list"} <= set(rule["verbs"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }


def test_the_rbac_is_valid_and_read_only() -> None:
    documents = rbac_documents()
    assert [d["kind"] for d in documents] == ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
    for document in documents:
        kubernetes_validate.validate(document, "1.36", strict=True)
    (role,) = (d for d in documents if d["kind"] == "ClusterRole")
    assert {verb for rule in role["rules"] for verb in rule["verbs"]} == {"get", "list"}
    assert all("*" not in rule["apiGroups"] + rule["resources"] for rule in role["rules"])
    (binding,) = (d for d in documents if d["kind"] == "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"] == "policyc-audit-reader"
    (account,) = (d for d in documents if d["kind"] == "ServiceAccount")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": account["metadata"]["namespace"]}
    ]


def test_the_rbac_grants_every_kind_a_recorded_dump_holds() -> None:
    """`dumped_kinds` of the recorded dumps: what audit reads on a real cluster."""
    expects = sorted((shared_dir() / "testdata" / "cluster-dumps").glob("*/clean.expect.json"))
    if not expects:
        missing_shared_data(shared_dir() / "testdata" / "cluster-dumps")
    dumped = {k for e in expects for k in json.loads(e.read_text(encoding="utf-8"))["dumped_kinds"]}
    wanted = {(GROUP_OF_BUILT_IN.get(name, name.partition(".")[2]), name.partition(".")[0]) for name in dumped}
    assert wanted - granted() == set()
    assert len(wanted) == 24  # the README's list: 13 built-in resources and 11 custom ones


def test_the_rbac_grants_every_kind_a_build_writes() -> None:
    """Every object the shipped policies build (their golden output), so that audit can compare each."""
    written = set()
    for path in sorted((REPO / "golden").rglob("*.yaml")):
        if path.name == "applicationset.yaml" and path.parent.parent == REPO / "golden":  # a fleet's: Argo CD's cluster
            continue
        for document in YAML(typ="safe").load_all(path.read_text(encoding="utf-8")):
            if isinstance(document, dict) and "kind" in document and "apiVersion" in document:
                group = document["apiVersion"].rpartition("/")[0]
                if group not in NOT_CLUSTER_OBJECTS:
                    written.add((group, plural(document["kind"])))
    assert ("karpenter.sh", "nodepools") in written and ("resource.k8s.io", "deviceclasses") in written
    assert written - granted() == set()
