"""The Volcano scheduler backend (`backend`: its objects and checks; `settings`; `codes`; `conf`: the strict model of
volcano-scheduler.conf; `rules`, `queue_tree`: Volcano's rules on a policy)."""
