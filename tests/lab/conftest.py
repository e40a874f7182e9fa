"""The lab fixture: two leaves, a spine and two hosts in network namespaces.

::

    host1:ens1f0np0 -- leaf1:swp1   leaf1:swp51 -- spine1:swp1
    host2:ens1f0np0 -- leaf2:swp1   leaf2:swp51 -- spine1:swp2

It needs root (namespaces) and lldpd, snmpd and snmpwalk, which ``make test`` installs
when run as root. Not root: the lab tests skip and say why. Root without the tools: they
fail, because CI runs as root and must run them.
"""

import os

import pytest

from tests.lab.netns import Cable, Lab, missing_tools

CABLES = [Cable("host1", "ens1f0np0", "leaf1", "swp1"),
          Cable("host2", "ens1f0np0", "leaf2", "swp1"),
          Cable("leaf1", "swp51", "spine1", "swp1"),
          Cable("leaf2", "swp51", "spine1", "swp2")]


@pytest.fixture(scope="package")
def lab():
    if os.geteuid() != 0:
        pytest.skip("the network-namespace lab needs root (CI runs it as root)")
    missing = missing_tools()
    if missing:
        pytest.fail(f"lab tools missing: {', '.join(missing)} (`make test` installs them "
                    "as root)")
    lab = Lab(["leaf1", "leaf2", "spine1"], ["host1", "host2"], CABLES)
    try:
        lab.up()
        yield lab
    finally:
        lab.down()
