"""How artifacts become files and diagnostics become text: canonical YAML (`yaml_emitter`), the Argo CD layer of
sync waves and kustomization.yaml (`argocd`), file bytes and the atomic write (`write`), the build against a
directory (`drift`), and diagnostics as text, JSON, GitHub annotations or SARIF (`formats`).
"""
