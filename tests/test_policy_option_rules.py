"""catalogue.policy.option_rules: the rules table's verdict on one option, its value read as docker reads it (a
label's key in any case, a capability with or without CAP_, a device's host side, the long --network syntax)."""

from __future__ import annotations

import pytest

from catalogue.policy.option_rules import option_rule


@pytest.mark.parametrize(
    ("option", "value", "cls", "why"),
    [
        ("cap-add", "cap_net_admin", "consent", "adds a kernel capability beyond docker's default set"),
        ("cap-add", "NET_ADMIN", "consent", "adds a kernel capability beyond docker's default set"),
        ("label", "CATALOGUE.run=x", "never", "a label of the runner's own: clean-up finds its containers by them"),
        ("label", "app=catalogue.x", None, None),  # only the key is read in lower case
        ("device", "nvidia.com/gpu=all", "allowed", "the GPU through its runtime (CDI)"),
        ("device", "/dev/infiniband:/dev/infiniband:rwm", "consent", "exposes a host device to the container"),
        ("network", "name=container:db,alias=x", "consent", "joins another container's network namespace"),
        ("network", "NAME=container:db , alias=x", "consent", "joins another container's network namespace"),
        ("network", "name=bridge,name=container:db", "consent", "joins another container's network namespace"),
        ("network", "name=container:a=b", "consent", "joins another container's network namespace"),  # first '='
        ("network", "alias=x,driver-opt=y", None, None),  # no name field: the value as written
        ("network", '"name=container:db', None, None),  # docker's CSV cannot read it: the value as written
        ("network", "host", None, None),
        ("uts", "host", "consent", "shares the host's UTS namespace (its hostname)"),
        ("uts", "private", None, None),
        ("runtime", "nvidia", "allowed", "the GPU runtime"),
    ],
)
def test_option_rule_reads_the_value_as_docker_does(option, value, cls, why):
    rule = option_rule(option, value)
    assert (rule.cls, rule.why) == (cls, why) if cls else rule is None
