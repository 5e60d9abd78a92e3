"""The write-time evidence index: a trie keyed by canonical key, then by value (MemTrim 3.2).

Level one follows the canonical key k = (entity, attribute, value type); level two follows the
normalised value v. A value node records which memories hold the unit (k, v) and whether the unit
is in that memory's support set H_m. Memories holding the same unit share one node; different
values of the same key are sibling branches (`founded_in=2016` vs `founded_in=2017`).

Units are inserted one by one, so two interactions can share evidence at any position, not only
as a common prefix ("sparse evidence overlap", 3.2).
"""

from __future__ import annotations

from collections.abc import Hashable

from .units import EvidenceUnit, Key, Value


class ValueNode:
    """Node for one (key, value): holders are memory id -> unit is in that memory's support set."""

    __slots__ = ("value", "holders")

    def __init__(self, value: Value) -> None:
        self.value = value
        self.holders: dict[Hashable, bool] = {}


class KeyNode:
    """Node for one canonical key with its value branches."""

    __slots__ = ("key", "many", "values", "by_memory")

    def __init__(self, key: Key, many: bool) -> None:
        self.key = key
        self.many = many
        """Multi-valued relation (e.g. founders): other values are not conflicts."""
        self.values: dict[Value, ValueNode] = {}
        self.by_memory: dict[Hashable, list[Value]] = {}
        """Memory id -> the values it holds under this key (the reverse edges of the branches)."""


class EvidenceTrie:
    """Global evidence index 𝒯 over every written memory (3.2)."""

    def __init__(self) -> None:
        self.keys: dict[Key, KeyNode] = {}
        self._groups: dict[tuple[str, str], list[Key]] = {}
        self.n_units = 0

    def insert(self, memory_id: Hashable, unit: EvidenceUnit, in_support: bool) -> None:
        """Index one unit of a memory (3.2)."""
        node = self.keys.get(unit.key)
        if node is None:
            node = self.keys[unit.key] = KeyNode(unit.key, unit.many)
            self._groups.setdefault((unit.key.entity, unit.key.vtype), []).append(unit.key)
        vn = node.values.get(unit.value)
        if vn is None:
            vn = node.values[unit.value] = ValueNode(unit.value)
        if memory_id not in vn.holders:
            self.n_units += 1
            node.by_memory.setdefault(memory_id, []).append(unit.value)
        vn.holders[memory_id] = vn.holders.get(memory_id, False) or in_support

    def remove(self, memory_id: Hashable, units: list[EvidenceUnit]) -> None:
        """Forget a memory's units (an update or a delete in the base store); a key no memory
        holds any more leaves the trie."""
        for u in units:
            node = self.keys.get(u.key)
            if node is None:
                continue
            vn = node.values.get(u.value)
            if vn is not None and vn.holders.pop(memory_id, None) is not None:
                self.n_units -= 1
                if not vn.holders:
                    del node.values[u.value]
            node.by_memory.pop(memory_id, None)
            if not node.values:
                del self.keys[u.key]
                group = self._groups.get((u.key.entity, u.key.vtype))
                if group is not None and u.key in group:
                    group.remove(u.key)

    def lookup(self, key: Key) -> KeyNode | None:
        """The key node, or None when no memory holds this key."""
        return self.keys.get(key)

    def holders(self, key: Key, value: Value) -> dict[Hashable, bool]:
        """Memories holding (key, value), with their support flag."""
        node = self.keys.get(key)
        if node is None:
            return {}
        vn = node.values.get(value)
        return dict(vn.holders) if vn else {}

    def candidates(self, key: Key, limit: int = 8) -> list[Key]:
        """Existing keys with the same entity and value type: the small set a new key is checked
        against for semantic equivalence (A.1)."""
        group = self._groups.get((key.entity, key.vtype), [])
        return [k for k in group if k != key and k in self.keys][:limit]

    def __len__(self) -> int:
        return self.n_units
