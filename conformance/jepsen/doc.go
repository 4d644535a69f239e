// Package jepsen is the fault-injection checker of a three-node nacosd
// cluster (issue 23; README.md beside this file): real nacosd processes on
// 127.0.0.21-23, a nemesis drawn from a seed (kill -9 and restart of the
// leader or a random node, SIGSTOP of the leader, an iptables partition of
// one node), concurrent clients recording every operation with its
// invocation, completion and outcome (ok, failed, unknown), and checks of
// the recorded history: linearizability of CP writes and leader reads
// (porcupine), bounded staleness of every read, no acknowledged write lost,
// convergence after healing, read-your-writes, monotonic reads, beating
// ephemeral instances never missing and stopped ones expired in time, and
// availability. `make jepsen SEED=… DURATION=…` runs it (TestJepsen, in the
// jepsen tier: -tags jepsen); the checks are plain functions over a Run, unit
// tested on hand-made histories.
package jepsen
