"""Every port of a running `yarn-drf serve` probed as an attacker on the host would (probe_ports.py):
each case must be refused as specified, and the shim still served afterwards."""
from __future__ import annotations

from tests.bridge.probe_ports import probe


def test_every_probe_of_both_ports_is_refused_as_specified():
    results = probe()
    failed = [(case.port, case.attack, case.expected, observed) for case, ok, observed in results if not ok]
    assert not failed
    assert len(results) == 27
