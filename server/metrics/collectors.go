package metrics

import (
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// nacosMonitor is Java's nacos_monitor gauge family: Micrometer gauges
// with the tags module and name and an empty description.
var nacosMonitor = prometheus.NewDesc("nacos_monitor", "", []string{"module", "name"}, nil)

// nacosCollector emits nacos_monitor with Java 1.4.8's series
// (console-auth-core-v1.md §6). Java refreshes most of them on timers
// (10 s config, 15 s naming); nacosd reads them at scrape time.
type nacosCollector struct{ m *Metrics }

func (c *nacosCollector) Describe(ch chan<- *prometheus.Desc) { ch <- nacosMonitor }

func (c *nacosCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	s := m.cfg.Sources
	emit := func(module, name string, v float64) {
		ch <- prometheus.MustNewConstMetric(nacosMonitor, prometheus.GaugeValue, v, module, name)
	}
	base := m.daily()

	// config module (CFG/monitor/MetricsMonitor.java)
	var cs struct{ items, holders int }
	if s.Config != nil {
		st := s.Config()
		cs.items, cs.holders = st.Items, st.Holders
	}
	emit("config", "getConfig", float64(m.getConfig.Load()))
	emit("config", "publish", float64(m.publish.Load()))
	emit("config", "longPolling", float64(cs.holders))
	emit("config", "configCount", float64(cs.items))
	// Changes are applied with their raft commit: nacosd has no notify or
	// dump task queue, so these stay 0 (Java's idle value).
	emit("config", "notifyTask", 0)
	emit("config", "dumpTask", 0)

	// naming module (naming/monitor/MetricsMonitor.java)
	services, instances := 0, 0
	if s.Counts != nil {
		services, instances = s.Counts()
	}
	emit("naming", "serviceCount", float64(services))
	// domCount is the older name of serviceCount, which the community
	// Grafana dashboard's "service count" panel still queries.
	emit("naming", "domCount", float64(services))
	emit("naming", "ipCount", float64(instances))
	var tcp, http int64
	if s.Naming != nil {
		st := s.Naming()
		tcp, http = st.TCPProbes-base.tcpProbes, st.HTTPProbes-base.httpProbes
	}
	emit("naming", "tcpHealthCheck", float64(tcp))
	emit("naming", "httpHealthCheck", float64(http))
	emit("naming", "mysqlhealthCheck", 0) // nacosd has no MySQL health checker
	var total, failed int64
	if s.Push != nil {
		pc := s.Push()
		total = pc.Total - base.pushTotal
		failed = pc.Pending + pc.Failed - base.pushFailed // Java: ackMap.size() + failedPush
	}
	emit("naming", "totalPush", float64(total))
	emit("naming", "failedPush", float64(failed))
	maxCost, avgCost := m.pushCost.read(m.cfg.Clock.Now())
	emit("naming", "maxPushCost", float64(maxCost))
	emit("naming", "avgPushCost", float64(avgCost))
	// Java 1.4.8 sets leaderStatus only while some member runs a version
	// older than 1.4.0 (old naming raft); it stays 0 otherwise. The CP
	// leadership is nacosd_raft_state.
	emit("naming", "leaderStatus", 0)
}

// nacosdCollector emits nacosd's own figures.
type nacosdCollector struct{ m *Metrics }

var (
	dPushTotal    = prometheus.NewDesc("nacosd_push_total", "UDP pushes started (distinct push keys; Java totalPush without the daily reset).", nil, nil)
	dPushAcked    = prometheus.NewDesc("nacosd_push_acked_total", "UDP pushes acknowledged by their client.", nil, nil)
	dPushFailed   = prometheus.NewDesc("nacosd_push_failed_total", "UDP pushes given up after retransmission, failed to send or dropped for overflow.", nil, nil)
	dPushPending  = prometheus.NewDesc("nacosd_push_pending", "UDP pushes waiting for their ack.", nil, nil)
	dPushSends    = prometheus.NewDesc("nacosd_push_datagrams_total", "UDP push datagrams written, retransmissions included.", nil, nil)
	dHolders      = prometheus.NewDesc("nacosd_config_long_poll_holders", "Config long polls being held.", nil, nil)
	dWakeups      = prometheus.NewDesc("nacosd_config_long_poll_wakeups_total", "Held config long polls answered because a config they listen to changed.", nil, nil)
	dConfigItems  = prometheus.NewDesc("nacosd_config_items", "Configs in the cache (group keys with a main, beta or tag variant).", nil, nil)
	dServices     = prometheus.NewDesc("nacosd_naming_services", "Services, all namespaces.", nil, nil)
	dInstances    = prometheus.NewDesc("nacosd_naming_instances", "Instances, all namespaces.", nil, nil)
	dBeats        = prometheus.NewDesc("nacosd_naming_beats_total", "Client beats received.", nil, nil)
	dBeatsUnknown = prometheus.NewDesc("nacosd_naming_beats_unknown_total", "Client beats answered 20404 (instance unknown).", nil, nil)
	dProbes       = prometheus.NewDesc("nacosd_naming_health_checks_total", "Health probes of persistent instances started.", []string{"type"}, nil)
	dRaftState    = prometheus.NewDesc("nacosd_raft_state", "1 for this node's raft state.", []string{"state"}, nil)
	dRaftTerm     = prometheus.NewDesc("nacosd_raft_term", "Current raft term.", nil, nil)
	dRaftLast     = prometheus.NewDesc("nacosd_raft_last_log_index", "Index of the last raft log entry.", nil, nil)
	dRaftCommit   = prometheus.NewDesc("nacosd_raft_commit_index", "Highest raft log index known committed.", nil, nil)
	dRaftApplied  = prometheus.NewDesc("nacosd_raft_applied_index", "Highest raft log index applied to the store.", nil, nil)
	dRaftLag      = prometheus.NewDesc("nacosd_raft_commit_lag", "Committed raft entries not yet applied to the store (commit index - applied index).", nil, nil)
	dRaftPeers    = prometheus.NewDesc("nacosd_raft_peers", "Other voters in the raft configuration.", nil, nil)
	dRaftContact  = prometheus.NewDesc("nacosd_raft_last_contact_seconds", "Seconds since a follower last heard from the leader (0 on the leader).", nil, nil)
	dReady        = prometheus.NewDesc("nacosd_ready", "1 while the readiness probe answers OK; 0 with the reason (e.g. no raft leader heard for longer than an election timeout).", []string{"reason"}, nil)
)

var (
	dDistroSync     = prometheus.NewDesc("nacosd_distro_syncs_total", "Distro datum syncs sent to other members, by outcome.", []string{"outcome"}, nil)
	dDistroSyncKeys = prometheus.NewDesc("nacosd_distro_synced_lists_total", "Instance lists carried by successful Distro syncs.", nil, nil)
	dDistroVerify   = prometheus.NewDesc("nacosd_distro_checksum_rounds_total", "Distro checksum rounds, sent to members and received from them.", []string{"direction"}, nil)
	dDistroMismatch = prometheus.NewDesc("nacosd_distro_checksum_mismatches_total", "Instance lists a received checksum round found different or missing here.", nil, nil)
	dDistroFetched  = prometheus.NewDesc("nacosd_distro_lists_fetched_total", "Instance lists fetched from their owner after a checksum mismatch.", nil, nil)
	dDistroRemoved  = prometheus.NewDesc("nacosd_distro_lists_removed_total", "Instance lists dropped because their owner no longer has them.", nil, nil)
	dDistroReceived = prometheus.NewDesc("nacosd_distro_lists_received_total", "Instance lists received by Distro syncs.", nil, nil)
	dDistroStatus   = prometheus.NewDesc("nacosd_distro_status_rounds_total", "Service status sync rounds, sent and received.", []string{"direction"}, nil)
	dDistroHealth   = prometheus.NewDesc("nacosd_distro_health_fetches_total", "Services whose instance health was fetched from their owner.", nil, nil)
	dDistroPending  = prometheus.NewDesc("nacosd_distro_pending_lists", "Instance lists waiting to be synced to members.", nil, nil)
	dMembers        = prometheus.NewDesc("nacosd_cluster_members", "Cluster members by state, as this node sees them.", []string{"state"}, nil)
	dPushCapped     = prometheus.NewDesc("nacosd_push_capped_total", "UDP pushes not sent because their target's byte budget was spent (part of nacosd_push_failed_total).", nil, nil)
	dDefaultAdmin   = prometheus.NewDesc("nacosd_auth_default_admin_password", "1 while auth is on and the built-in user nacos still has the published password nacos.", nil, nil)
)

var raftStates = []string{"Leader", "Follower", "Candidate", "Shutdown"}

func (c *nacosdCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dPushTotal, dPushAcked, dPushFailed, dPushPending, dPushSends, dHolders, dWakeups,
		dConfigItems, dServices, dInstances, dBeats, dBeatsUnknown, dProbes, dRaftState, dRaftTerm, dRaftLast, dRaftCommit,
		dRaftApplied, dRaftLag, dRaftPeers, dRaftContact, dDistroSync, dDistroSyncKeys, dDistroVerify, dDistroMismatch,
		dDistroFetched, dDistroRemoved, dDistroReceived, dDistroStatus, dDistroHealth, dDistroPending, dMembers, dReady, dPushCapped, dDefaultAdmin} {
		ch <- d
	}
}

func (c *nacosdCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.cfg.Sources
	counter := func(d *prometheus.Desc, v int64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	if s.DefaultAdminPassword != nil {
		v := 0.0
		if s.DefaultAdminPassword() {
			v = 1
		}
		gauge(dDefaultAdmin, v)
	}
	if s.Push != nil {
		p := s.Push()
		counter(dPushCapped, p.Capped)
		counter(dPushTotal, p.Total)
		counter(dPushAcked, p.Acked)
		counter(dPushFailed, p.Failed)
		gauge(dPushPending, float64(p.Pending))
		counter(dPushSends, p.Sends)
	}
	if s.Config != nil {
		st := s.Config()
		gauge(dHolders, float64(st.Holders))
		counter(dWakeups, st.Wakeups)
		gauge(dConfigItems, float64(st.Items))
	}
	if s.Counts != nil {
		svc, inst := s.Counts()
		gauge(dServices, float64(svc))
		gauge(dInstances, float64(inst))
	}
	if s.Naming != nil {
		st := s.Naming()
		counter(dBeats, st.Beats)
		counter(dBeatsUnknown, st.BeatsUnknown)
		counter(dProbes, st.TCPProbes, "tcp")
		counter(dProbes, st.HTTPProbes, "http")
	}
	if s.Distro != nil {
		d := s.Distro()
		counter(dDistroSync, d.SyncSent, "success")
		counter(dDistroSync, d.SyncFailed, "failure")
		counter(dDistroSyncKeys, d.SyncKeys)
		counter(dDistroVerify, d.VerifySent, "sent")
		counter(dDistroVerify, d.VerifyReceived, "received")
		counter(dDistroMismatch, d.ChecksumMismatches)
		counter(dDistroFetched, d.KeysFetched)
		counter(dDistroRemoved, d.KeysRemoved)
		counter(dDistroReceived, d.DatumsReceived)
		counter(dDistroStatus, d.StatusSent, "sent")
		counter(dDistroStatus, d.StatusReceived, "received")
		counter(dDistroHealth, d.Health)
		gauge(dDistroPending, float64(d.Pending))
		for _, st := range []string{"UP", "SUSPICIOUS", "DOWN"} {
			gauge(dMembers, float64(d.Members[st]), st)
		}
	}
	if s.Raft != nil {
		collectRaft(s.Raft(), gauge)
	}
	if s.Ready != nil {
		if err := s.Ready(); err != nil {
			reason, _, _ := strings.Cut(err.Error(), ":") // stable: no figures in the label
			gauge(dReady, 0, reason)
		} else {
			gauge(dReady, 1, "")
		}
	}
}

// collectRaft turns hashicorp/raft's Stats strings into gauges.
func collectRaft(st map[string]string, gauge func(*prometheus.Desc, float64, ...string)) {
	num := func(k string) (float64, bool) {
		v, err := strconv.ParseFloat(st[k], 64)
		return v, err == nil
	}
	for _, state := range raftStates {
		v := 0.0
		if st["state"] == state {
			v = 1
		}
		gauge(dRaftState, v, state)
	}
	for _, kv := range []struct {
		d   *prometheus.Desc
		key string
	}{{dRaftTerm, "term"}, {dRaftLast, "last_log_index"}, {dRaftCommit, "commit_index"}, {dRaftApplied, "fsm_applied_index"}, {dRaftPeers, "num_peers"}} {
		if v, ok := num(kv.key); ok {
			gauge(kv.d, v)
		}
	}
	commit, ok1 := num("commit_index")
	applied, ok2 := num("fsm_applied_index")
	if ok1 && ok2 {
		gauge(dRaftLag, max(commit-applied, 0))
	}
	if st["state"] == "Leader" {
		gauge(dRaftContact, 0)
	} else if d, err := parseRaftDuration(st["last_contact"]); err == nil {
		gauge(dRaftContact, d)
	}
}
