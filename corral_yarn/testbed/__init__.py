"""The shaped testbed: the embedded cluster in a private network namespace whose loopback is shaped
like an oversubscribed two-tier datacenter network (docs/testbed.md)."""
