"""A stand-in for a kube-apiserver, serving the objects of a recorded dump read-only, for the tests of the live source
(no real API server runs here): discovery (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`) and the list of
each kind across every namespace, paged as the API server pages (`limit`; `metadata.continue`, an opaque token of the
list's resourceVersion and the key to start after; `metadata.remainingItemCount`), with bearer-token authentication.

What a real server does and this one copies: a typed (built-in) list's items carry no apiVersion and kind, a custom
resource's do; items come in the order of their storage key (namespace, then name); an expired continue token is a
`410 Gone` with reason `Expired`; an unknown token a `401`, a refused list a `403` worded as the server words it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import threading
import time
from collections import Counter
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

BUILT_IN_GROUPS = frozenset({"", "apps", "batch", "scheduling.k8s.io", "admissionregistration.k8s.io"})
"""Groups whose lists the server encodes as typed lists (no apiVersion/kind on each item)."""
RESOURCE_VERSION = 4242


def plural(kind: str) -> str:
    """The resource name of a kind, as the API server's (and a CRD's usual) lowercase English plural."""
    lower = kind.lower()
    if lower.endswith("y") and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith(("s", "x", "ch", "sh")) else "s")


def _storage_key(obj: dict) -> str:
    metadata = obj["metadata"]
    return f"{metadata.get('namespace', '')}/{metadata['name']}"


class FakeApiServer:
    """The objects of `items` (a kubectl List's items) behind an API server's read paths, on 127.0.0.1.

    `users`: bearer token -> user name; `forbidden`: user -> the plurals it may not list (403); `older_versions`:
    group -> a version served besides the dump's (the preferred one), holding the same objects; `expire_after`: a
    continue token is expired (410) once that many pages were served of a list; `stall`: seconds a list waits before
    it answers; `tls`: (certificate, key) files to serve HTTPS with; `empty`: (apiVersion, kind, namespaced) of kinds
    served with no object (the dump holds none, the server serves them). `requests` records (method, path) of every
    request, `pages` the list pages served by plural. Leaving its `with` block fails the test if it was sent
    anything but GET (every reader of a cluster in policyc is read-only)."""

    def __init__(
        self,
        items: Iterable[dict],
        *,
        users: dict[str, str] | None = None,
        forbidden: dict[str, set[str]] | None = None,
        older_versions: dict[str, str] | None = None,
        expire_after: int | None = None,
        stall: float = 0.0,
        tls: tuple[Path, Path] | None = None,
        empty: Iterable[tuple[str, str, bool]] = (),
    ):
        self.users = users if users is not None else {"reader-token": "reader"}
        self.forbidden = forbidden or {}
        self.expire_after = expire_after
        self.stall = stall
        self.requests: list[tuple[str, str]] = []
        self.pages: Counter[str] = Counter()
        # (group, version) -> plural -> (kind, namespaced, objects sorted by storage key)
        self.served: dict[tuple[str, str], dict[str, tuple[str, bool, list[dict]]]] = {}
        self.preferred: dict[str, str] = {}
        by_kind: dict[tuple[str, str, str], list[dict]] = {}
        for item in items:
            group, _, version = item["apiVersion"].rpartition("/")
            by_kind.setdefault((group, version, item["kind"]), []).append(item)
        for api_version, kind, _ in empty:
            group, _, version = api_version.rpartition("/")
            by_kind.setdefault((group, version, kind), [])
        namespaced_kinds = {kind for _, kind, namespaced in empty if namespaced}
        for (group, version, kind), objects in by_kind.items():
            namespaced = kind in namespaced_kinds or any("namespace" in o["metadata"] for o in objects)
            versions = [version, *([older_versions[group]] if group in (older_versions or {}) else [])]
            for served_version in versions:
                api_version = f"{group}/{served_version}" if group else served_version
                copies = sorted(({**o, "apiVersion": api_version} for o in objects), key=_storage_key)
                self.served.setdefault((group, served_version), {})[plural(kind)] = (kind, namespaced, copies)
            self.preferred.setdefault(group, version)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> FakeApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
        writes = [f"{method} {path}" for method, path in self.requests if method != "GET"]
        assert not writes, f"the API server was sent more than GET: {writes}"

    def kubeconfig(
        self,
        path: Path,
        *,
        token: str = "reader-token",
        context: str = "fake",
        extra: str = "",
        authority: Path | None = None,
    ) -> Path:
        """Write a kubeconfig whose context `context` (the current one) reaches this server with `token`; `extra`
        is appended to the user's entry (e.g. an exec plugin in place of the token); `authority`: the CA file."""
        user = f"    token: {token}\n" if token else ""
        ca = f"    certificate-authority: {authority}\n" if authority else ""
        path.write_text(
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: fake-cluster\n  cluster:\n    server: {self.url}\n{ca}"
            f"users:\n- name: fake-user\n  user:\n{user}{extra}"
            f"contexts:\n- name: {context}\n  context:\n    cluster: fake-cluster\n    user: fake-user\n"
            f"current-context: {context}\n",
            encoding="utf-8",
        )
        return path

    # what the handler answers

    def answer(self, method: str, target: str, authorization: str) -> tuple[int, dict]:
        url = urlsplit(target)
        self.requests.append((method, url.path))
        if method != "GET":
            return 405, _status(405, "MethodNotAllowed", f"{method} is not served here")
        scheme, _, token = authorization.partition(" ")
        user = self.users.get(token.strip()) if scheme.lower() == "bearer" else None  # the scheme's case is free
        if user is None:
            return 401, _status(401, "Unauthorized", "Unauthorized")
        parts = url.path.strip("/").split("/")
        if parts == ["api"]:
            return 200, {"kind": "APIVersions", "versions": [self.preferred.get("", "v1")]}
        if parts == ["apis"]:
            return 200, self._group_list()
        if parts[0] == "api" and len(parts) in (2, 3):
            return self._under("", parts[1], parts[2:], user, parse_qs(url.query))
        if parts[0] == "apis" and len(parts) in (3, 4):
            return self._under(parts[1], parts[2], parts[3:], user, parse_qs(url.query))
        return 404, _status(404, "NotFound", "the server could not find the requested resource")

    def _group_list(self) -> dict:
        groups = []
        for group in sorted({g for g, _ in self.served if g}):
            versions = [v for g, v in self.served if g == group]
            preferred = {"groupVersion": f"{group}/{self.preferred[group]}", "version": self.preferred[group]}
            groups.append(
                {
                    "name": group,
                    "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
                    "preferredVersion": preferred,
                }
            )
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def _under(self, group: str, version: str, rest: list[str], user: str, query: dict) -> tuple[int, dict]:
        resources = self.served.get((group, version))
        if resources is None:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return 200, self._resource_list(group, version, resources)
        if rest[0] not in resources:
            return 404, _status(404, "NotFound", "the server could not find the requested resource")
        if rest[0] in self.forbidden.get(user, ()):
            message = (
                f'{rest[0]} is forbidden: User "{user}" cannot list resource "{rest[0]}" in API group "{group}" '
                "at the cluster scope"
            )
            return 403, _status(403, "Forbidden", message)
        return self._page(group, version, rest[0], resources[rest[0]], query)

    @staticmethod
    def _resource_list(group: str, version: str, resources: dict) -> dict:
        entries = []
        for name, (kind, namespaced, _) in sorted(resources.items()):
            verbs = ["get", "list", "watch", "create", "update", "patch", "delete"]
            entries.append(
                {"name": name, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind, "verbs": verbs}
            )
            entries.append({"name": f"{name}/status", "singularName": "", "namespaced": namespaced, "kind": kind})
        if not group:  # a core resource that is created, never listed
            entries.append({"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding"})
            entries[-1]["verbs"] = ["create"]
        return {"kind": "APIResourceList", "groupVersion": f"{group}/{version}".lstrip("/"), "resources": entries}

    def _page(self, group: str, version: str, name: str, served: tuple, query: dict) -> tuple[int, dict]:
        kind, _, objects = served
        time.sleep(self.stall)
        start = ""
        if "continue" in query:
            if self.expire_after is not None and self.pages[name] >= self.expire_after:
                message = "The provided continue parameter is too old to display a consistent list result."
                return 410, _status(410, "Expired", message)
            token = query["continue"][0]
            start = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))["start"]
        remaining = [o for o in objects if _storage_key(o) + "\x00" > start] if start else objects
        limit = int(query.get("limit", ["0"])[0])
        page = remaining[:limit] if limit else remaining
        self.pages[name] += 1
        metadata: dict = {"resourceVersion": str(RESOURCE_VERSION)}
        if len(page) < len(remaining):
            token = {"v": "meta.k8s.io/v1", "rv": RESOURCE_VERSION, "start": _storage_key(page[-1]) + "\x00"}
            metadata["continue"] = base64.urlsafe_b64encode(json.dumps(token).encode()).decode().rstrip("=")
            metadata["remainingItemCount"] = len(remaining) - len(page)
        typed = group in BUILT_IN_GROUPS
        items = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} if typed else o for o in page]
        api_version = f"{group}/{version}" if group else version
        return 200, {"kind": f"{kind}List", "apiVersion": api_version, "metadata": metadata, "items": items}


def _status(code: int, reason: str, message: str) -> dict:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _handler(server: FakeApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            status, document = server.answer(self.command, self.path, self.headers.get("Authorization", ""))
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                with contextlib.suppress(ConnectionError):  # a client that gave up waiting
                    self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

        def log_message(self, format: str, *args) -> None:  # the tests read `requests`, not a log
            pass

    return Handler
