"""A live API server as a `ClusterSource`: read-only (GET only), page by page, through the `kubernetes` client
library (the optional `cluster` extra: `pip install 'policyc[cluster]'`), which is imported only when a `LiveSource`
is made, never on the compiler's path.

The kubeconfig and context are found as kubectl finds them; the library does the authentication (client
certificates, tokens, exec plugins such as `aws eks get-token`). policyc asks the library for raw JSON only: its
typed models never see the objects, so a custom resource's fields are kept as the server sent them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from policyc.cluster.source import Kind, SourceError

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection to the API server."""
READ_TIMEOUT = 60.0
"""Seconds to wait for an answer, a page of 500 pods included."""
READER_ROLE = "policyc-audit-reader"
"""The read-only ClusterRole of `deploy/audit-rbac.yaml`, named in the hint of a 403."""


@dataclass(frozen=True, slots=True)
class Resource:
    """A kind as a server serves it: `v1` `pods`, namespaced."""

    group_version: str
    plural: str
    namespaced: bool

    @property
    def name(self) -> str:
        """As kubectl names it: `pods`, `pytorchjobs.kubeflow.org`."""
        group = self.group_version.rpartition("/")[0]
        return f"{self.plural}.{group}" if group else self.plural

    @property
    def path(self) -> str:
        """The path that lists it across every namespace."""
        return f"{'/apis' if '/' in self.group_version else '/api'}/{self.group_version}/{self.plural}"


def kubeconfig_files(kubeconfig: str | None) -> list[str]:
    """The kubeconfig files kubectl reads, in its order: `kubeconfig` (which must exist), else the existing files of
    `KUBECONFIG` (a list, as the OS separates paths), else `~/.kube/config` if it exists; [] when there is none."""
    if kubeconfig:
        if not Path(kubeconfig).expanduser().is_file():
            raise SourceError(f"kubeconfig {kubeconfig} does not exist; pass the path of an existing kubeconfig file")
        return [str(Path(kubeconfig).expanduser())]
    listed = os.environ.get("KUBECONFIG", "")
    candidates = [p for p in listed.split(os.pathsep) if p] if listed else ["~/.kube/config"]
    return [str(Path(p).expanduser()) for p in candidates if Path(p).expanduser().is_file()]


def chosen_context(files: list[str], context: str | None) -> str:
    """The context to use: `context`, else the first `current-context` the files set (kubectl's rule: the first file
    to set a value wins); checked against the contexts the files define."""
    from ruamel.yaml import YAML, YAMLError

    contexts: list[str] = []
    current = ""
    for file in files:
        try:
            with open(file, encoding="utf-8") as f:
                document = YAML(typ="safe").load(f) or {}
        except (OSError, YAMLError) as e:
            raise SourceError(f"cannot read kubeconfig {file}: {one_line(str(e))}") from None
        if not isinstance(document, dict):
            raise SourceError(f"kubeconfig {file} is not a kubeconfig (not a mapping)")
        contexts += [c["name"] for c in document.get("contexts") or () if isinstance(c, dict) and "name" in c]
        current = current or str(document.get("current-context") or "")
    where = " and ".join(files)
    known = ", ".join(sorted(set(contexts))) or "none"
    if context is None and not current:
        raise SourceError(f"kubeconfig {where} sets no current-context; name one of its contexts: {known}")
    wanted = context or current
    if wanted not in contexts:
        raise SourceError(f"context {wanted!r} is not in kubeconfig {where}; its contexts: {known}")
    return wanted


def one_line(text: str) -> str:
    """A message of the library's or the YAML parser's, which may span lines, as one."""
    return " ".join(text.split())


def in_a_pod(incluster_config) -> bool:
    """Whether a ServiceAccount's token is mounted where the library reads it (kubectl's test for in-cluster)."""
    return Path(incluster_config.SERVICE_TOKEN_FILENAME).is_file()


@contextlib.contextmanager
def _logged_errors() -> Iterator[list[str]]:
    """The errors the library logs instead of raising (a failed exec plugin), kept off the terminal."""

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(record.getMessage())

    kept: list[str] = []
    handler, root = Keep(logging.ERROR), logging.getLogger()
    root.addHandler(handler)
    try:
        yield kept
    finally:
        root.removeHandler(handler)


class LiveSource:
    """A running cluster's API server, read with get and list only."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None, page_size: int = 500):
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        try:
            from kubernetes import client
            from kubernetes.config import incluster_config
        except ImportError:
            raise SourceError(
                "reading a live cluster needs the kubernetes client library: pip install 'policyc[cluster]'"
            ) from None
        self._page_size = page_size
        configuration = client.Configuration()
        files = kubeconfig_files(kubeconfig)
        if files:
            self.name = chosen_context(files, context)
            self._load_kubeconfig(files, configuration)
        elif context is None and os.environ.get("KUBERNETES_SERVICE_HOST") and in_a_pod(incluster_config):
            self.name = "in-cluster service account"
            try:
                incluster_config.load_incluster_config(client_configuration=configuration)
            except incluster_config.ConfigException as e:
                raise SourceError(f"in-cluster configuration: {one_line(str(e))}") from None
        else:
            looked = os.environ.get("KUBECONFIG") or "~/.kube/config"
            raise SourceError(
                f"no kubeconfig: {looked} does not exist and this is not a pod with a service account; "
                "pass --kubeconfig FILE or set KUBECONFIG, or read a dump instead: --from FILE"
            )
        self._host = configuration.host
        self._api = client.ApiClient(configuration)
        self._versions: dict[str, str] | None = None
        self._resource_lists: dict[str, list[dict]] = {}
        self._judged: dict[Kind, bool] = {}

    def _load_kubeconfig(self, files: list[str], configuration) -> None:
        """Load the chosen context into `configuration`, running its exec plugin if it has one."""
        from kubernetes.config import ConfigException, load_kube_config

        try:
            with _logged_errors() as errors:
                load_kube_config(
                    config_file=os.pathsep.join(files),
                    context=self.name,
                    client_configuration=configuration,
                    persist_config=False,
                )
        except (ConfigException, OSError, ValueError) as e:
            where = " and ".join(files)
            raise SourceError(f"context {self.name!r} of kubeconfig {where}: {one_line(str(e))}") from None
        if errors:
            raise SourceError(
                f"context {self.name!r}: no credentials: {one_line(errors[0])}; run the command by hand to see why"
            )

    def objects(self, kind: Kind, api_version: str | None = None) -> Iterator[dict]:
        resource = self.resource(kind, api_version)
        self._judged[kind] = resource is not None
        return iter(()) if resource is None else self._pages(kind, resource)

    def judged(self, kind: Kind) -> bool:
        if kind not in self._judged:
            self._judged[kind] = self.resource(kind) is not None
        return self._judged[kind]

    def resource(self, kind: Kind, api_version: str | None = None) -> Resource | None:
        """How the server serves `kind` (at `api_version`, else at its group's preferred version) with list, from its
        discovery; None if it does not."""
        if api_version is None:
            version = self._preferred_versions().get(kind.group)
        else:
            group, _, version = api_version.rpartition("/")
            if group != kind.group:
                raise ValueError(f"{api_version} is not a version of {kind}")
        if version is None:
            return None
        group_version = f"{kind.group}/{version}" if kind.group else version
        for entry in self._resources_of(group_version):
            if entry.get("kind") == kind.kind and "/" not in entry["name"] and "list" in entry.get("verbs", ()):
                return Resource(group_version, entry["name"], bool(entry.get("namespaced")))
        return None

    def _preferred_versions(self) -> dict[str, str]:
        """Group ("" for the core group) -> its preferred version, from `/api` and `/apis`."""
        if self._versions is None:
            core = self._get("/api", "read the API's discovery")
            groups = self._get("/apis", "read the API's discovery")
            self._versions = {"": core["versions"][0]} if core.get("versions") else {}
            for group in groups.get("groups") or ():
                self._versions[group["name"]] = group["preferredVersion"]["version"]
        return self._versions

    def _resources_of(self, group_version: str) -> list[dict]:
        if group_version not in self._resource_lists:
            prefix = "/apis" if "/" in group_version else "/api"
            found = self._get(f"{prefix}/{group_version}", "read the API's discovery", missing_ok=True)
            self._resource_lists[group_version] = (found or {}).get("resources") or []
        return self._resource_lists[group_version]

    def _pages(self, kind: Kind, resource: Resource) -> Iterator[dict]:
        """Every object, one page per request, the next page asked for only once the caller has taken this one's."""
        token, pages = "", 0
        while True:
            query = [("limit", self._page_size), *([("continue", token)] if token else [])]
            page = self._get(resource.path, f"list {resource.name}", query=query, pages_read=pages)
            pages += 1
            token = (page.get("metadata") or {}).get("continue") or ""
            for item in page.get("items") or ():
                # A typed list's items carry no apiVersion and kind (kubectl adds them when it prints); custom ones do.
                item.setdefault("apiVersion", resource.group_version)
                item.setdefault("kind", kind.kind)
                yield item
            del page  # let this page go before the next one arrives
            if not token:
                return

    def _get(self, path: str, doing: str, *, query: list | None = None, pages_read: int = 0, missing_ok=False):
        """GET `path` and its JSON; None for a 404 when `missing_ok`. Any failure is a `SourceError` saying what
        `doing` could not do and why."""
        import urllib3
        from kubernetes.client.exceptions import ApiException

        request = self._api.param_serialize(
            "GET", path, query_params=query, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        try:
            response = self._api.call_api(*request, _request_timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
            body = response.read()
        except ApiException as e:  # the library's wrapping of a TLS failure
            raise SourceError(self._tls_failed(str(e.reason).splitlines()[-1])) from None
        except urllib3.exceptions.MaxRetryError as e:
            if isinstance(e.reason, urllib3.exceptions.SSLError):
                raise SourceError(self._tls_failed(one_line(str(e.reason)))) from None
            raise SourceError(self._unreachable(e.reason)) from None
        except urllib3.exceptions.HTTPError as e:
            raise SourceError(self._unreachable(e)) from None
        if response.status == 404 and missing_ok:
            return None
        if response.status != 200:
            raise SourceError(self._refused(response.status, response.reason, body, doing, pages_read))
        try:
            return json.loads(body)
        except ValueError:
            raise SourceError(f"the API server at {self._host} answered GET {path} with something not JSON") from None

    def _tls_failed(self, why: str) -> str:
        return (
            f"TLS with the API server at {self._host} failed ({why}); check the certificate-authority of context "
            f"{self.name!r} in the kubeconfig"
        )

    def _unreachable(self, error: BaseException | None) -> str:
        """The line for a connection that failed: the system's reason (e.g. "Connection refused"), or the timeouts."""
        from urllib3.exceptions import TimeoutError as Timeout

        cause = error
        while cause is not None and not (isinstance(cause, OSError) and cause.strerror):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            why = cause.strerror
        elif isinstance(error, Timeout):  # (urllib3's NewConnectionError is one too: its system reason comes first)
            why = f"no answer within {CONNECT_TIMEOUT:g} s to connect or {READ_TIMEOUT:g} s to read"
        else:
            why = type(error).__name__
        return (
            f"cannot reach the API server at {self._host} ({why}); check that it is up and that the server of "
            f"context {self.name!r} is its address"
        )

    def _refused(self, status: int, reason: str, body: bytes, doing: str, pages_read: int) -> str:
        """The line for an answer other than 200."""
        try:
            message = one_line(str(json.loads(body).get("message") or reason))
        except (ValueError, AttributeError):
            message = reason
        if status == 401:
            return (
                f"the API server at {self._host} refused the credentials of context {self.name!r} (401 Unauthorized): "
                "they are missing, wrong or expired; log in again or fix the kubeconfig's user"
            )
        if status == 403:
            return (
                f"the API server at {self._host} does not let context {self.name!r} {doing} (403 Forbidden: "
                f"{message}); policyc only gets and lists: bind the ClusterRole {READER_ROLE} of "
                "deploy/audit-rbac.yaml to this user or ServiceAccount"
            )
        if status == 410 and pages_read:
            return (
                f"the API server expired the list being read to {doing} after {pages_read} page(s) of "
                f"{self._page_size} (410 Gone: {message}); the cluster changed while it was paged through: rerun"
            )
        return f"the API server at {self._host} answered {status} {reason} when asked to {doing}: {message}"
