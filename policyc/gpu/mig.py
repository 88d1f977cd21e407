"""NVIDIA MIG: the profiles each card offers, and whether a layout fits on one card.

A card has 7 compute slices and 8 memory slices (the A30: 4 and 4). A profile `<g>g.<mem>gb` takes `g` compute
slices and a fixed number of memory slices, and fits at most a fixed number of times on one card (NVIDIA's MIG
user guide, "Supported MIG Profiles"). A layout can fit only when every profile is the card's, no profile exceeds
its maximum, and the slices add up; NVIDIA's placement rules refuse a few more, which the MIG manager reports on
the node.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, eq=False)
class Card:
    name: str
    compute: int
    memory: int
    profiles: Mapping[str, tuple[int, int, int]]
    """Profile -> (compute slices, memory slices, most per card)."""


def _card(name: str, sizes: tuple[str, str, str, str, str, str]) -> Card:
    """A card of 7 compute and 8 memory slices with the usual six profiles (1g, 1g with twice the memory, 2g, 3g,
    4g, 7g), given their memory sizes."""
    one, one_double, two, three, four, seven = sizes
    return Card(name, 7, 8, {
        f"1g.{one}": (1, 1, 7), f"1g.{one_double}": (1, 2, 4), f"2g.{two}": (2, 2, 3),
        f"3g.{three}": (3, 4, 2), f"4g.{four}": (4, 4, 1), f"7g.{seven}": (7, 8, 1),
    })  # fmt: skip


CARDS = (
    _card("A100 40GB", ("5gb", "10gb", "10gb", "20gb", "20gb", "40gb")),
    _card("A100 80GB", ("10gb", "20gb", "20gb", "40gb", "40gb", "80gb")),
    _card("H100 80GB", ("10gb", "20gb", "20gb", "40gb", "40gb", "80gb")),
    _card("H100 94GB", ("12gb", "24gb", "24gb", "47gb", "47gb", "94gb")),
    _card("H20 96GB", ("12gb", "24gb", "24gb", "48gb", "48gb", "96gb")),
    _card("H200 141GB", ("18gb", "35gb", "35gb", "71gb", "71gb", "141gb")),
    Card("A30 24GB", 4, 4, {"1g.6gb": (1, 1, 4), "2g.12gb": (2, 2, 2), "4g.24gb": (4, 4, 1)}),
)
_PRODUCTS = (
    (re.compile(r"A100.*40GB"), "A100 40GB"),
    (re.compile(r"A100"), "A100 80GB"),
    (re.compile(r"H100.*(94GB|NVL)"), "H100 94GB"),
    (re.compile(r"H100"), "H100 80GB"),
    (re.compile(r"H200"), "H200 141GB"),
    (re.compile(r"H20(\b|-|$)"), "H20 96GB"),
    (re.compile(r"A30(\b|-|$)"), "A30 24GB"),
)
"""GPU Feature Discovery's product name -> the card, by the model in the name."""
WITHOUT_MIG = re.compile(r"(^|[-_ ])(?P<model>L4|L40S?|L20|A10G?|A16|A2|A40|T4|V100|P100|P40|P4|K80)([-_ ]|$)")
"""NVIDIA cards that have no MIG, by the model in the product name: MIG needs the GA100 and later data-centre chips
(NVIDIA's MIG user guide, "Supported GPUs": A100, A30, H100, H20, H200, B200, GB200, B300, RTX PRO Blackwell),
which the Ada (L4, L40, L40S, L20), smaller Ampere (A10, A10G, A16, A2, A40), Turing (T4), Volta (V100), Pascal
(P100, P40, P4) and Kepler (K80) cards are not."""


def card(product: str) -> Card | None:
    """The MIG-capable card a product name stands for (None: not one policyc knows)."""
    name = next((card for pattern, card in _PRODUCTS if pattern.search(product)), None)
    return next((c for c in CARDS if c.name == name), None)


def model_without_mig(product: str) -> str | None:
    """The model of a card known to have no MIG that `product` names (None: it may have MIG)."""
    found = WITHOUT_MIG.search(product)
    return found.group("model") if found else None


def problems(c: Card, devices: Mapping[str, int]) -> list[tuple[str, str]]:
    """Why `devices` (profile -> count on each card) does not fit on card `c`, each with what to write instead (empty
    when it fits)."""
    out = []
    for profile, count in devices.items():
        if profile not in c.profiles:
            out.append((f"the {c.name} has no profile {profile}", f"use one of its profiles: {', '.join(c.profiles)}"))
        elif count > c.profiles[profile][2]:
            most = c.profiles[profile][2]
            out.append(
                (f"the {c.name} holds at most {most} {profile}, not {count}", f"write {profile}: {most} or less")
            )
    if out:
        return out
    compute = sum(c.profiles[p][0] * n for p, n in devices.items())
    memory = sum(c.profiles[p][1] * n for p, n in devices.items())
    sizes = ", ".join(f"{p} {c.profiles[p][0]} and {c.profiles[p][1]}" for p in devices)
    fewer = f"take devices out until they fit (compute and memory slices each: {sizes})"
    if compute > c.compute:
        out.append((f"they take {compute} compute slices of the {c.name}'s {c.compute}", fewer))
    if memory > c.memory:
        out.append((f"they take {memory} memory slices of the {c.name}'s {c.memory}", fewer))
    return out


def resource(profile: str) -> str:
    """The resource a MIG device of `profile` is advertised as under the mixed strategy."""
    return f"nvidia.com/mig-{profile}"


@dataclass(frozen=True, slots=True)
class Layout:
    """How the MIG manager partitions the cards of each node of a pool."""

    strategy: str
    """How the device plugin advertises the devices: single (as the GPU resource) or mixed (`resource`)."""
    cards: tuple[tuple[int, Mapping[str, int]], ...]
    """(how many cards, profile -> devices on each of them), taking the cards in the order of their indices."""
    per_card: bool = False
    """Whether the policy gave a layout per group of cards (gpu.mig.cards) rather than one for all (devices)."""

    @property
    def per_node(self) -> dict[str, int]:
        """Profile -> devices on one node, sorted by profile."""
        out: dict[str, int] = {}
        for count, devices in self.cards:
            for profile, n in devices.items():
                out[profile] = out.get(profile, 0) + count * n
        return dict(sorted(out.items()))

    @property
    def resources(self) -> dict[str, int]:
        """Under the mixed strategy, each profile's resource (`resource`) -> its devices on one node; under single,
        none (the devices are the pool's GPU resource)."""
        if self.strategy != "mixed":
            return {}
        return {resource(profile): n for profile, n in self.per_node.items()}

    @property
    def name(self) -> str:
        """The layout's name in the MIG manager's configuration, and the value of the node label selecting it:
        ``policyc-<profile>x<n>...`` when every card is alike, else ``policyc-<cards>c-<profile>x<n>...`` per group
        (a digest of that when it would be longer than a label value may be)."""
        if len(self.cards) == 1:
            return "policyc-" + _devices_name(self.cards[0][1])
        name = "policyc-" + "-".join(f"{count}c-{_devices_name(devices)}" for count, devices in self.cards)
        if len(name) > 63:
            name = "policyc-" + hashlib.sha256(name.encode()).hexdigest()[:16]
        return name


def _devices_name(devices: Mapping[str, int]) -> str:
    return "-".join(f"{p}x{n}" for p, n in sorted(devices.items()))
