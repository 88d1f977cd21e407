"""The Volcano scheduler backend (`backend`: its objects; `settings`; `codes`; `rules`: Volcano's rules on a policy;
`conf`: the strict model of volcano-scheduler.conf; `capacity`: which competing jobs Volcano runs)."""
