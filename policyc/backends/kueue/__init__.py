"""The Kueue scheduler backend (`backend`: its objects; `settings`; `codes`; `conf` and `kube_scheduler_conf`: strict
models of the configuration files it writes; `rules`: Kueue's rules on a policy)."""
