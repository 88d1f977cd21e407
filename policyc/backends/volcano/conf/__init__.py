"""A strict model of Volcano's ``volcano-scheduler.conf``: `facts` (what the scheduler reads and how, written in the
`terms` of types and effects) and `check` (a conf, a plugin entry or a list of actions against them)."""
