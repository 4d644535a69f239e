package jepsen

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Outcome is what a client learnt of an operation.
type Outcome uint8

const (
	// OK: acknowledged (a write took effect, a read returned a value).
	OK Outcome = iota
	// Fail: definitely not applied (a 4xx, a well-formed refusal, a
	// node that answered "server is starting").
	Fail
	// Unknown: a timeout, a transport error or a 5xx; a write may or may
	// not have taken effect, possibly after the client gave up.
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	default:
		return "unknown"
	}
}

// MarshalText makes outcomes readable in the saved history.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads them back.
func (o *Outcome) UnmarshalText(b []byte) error {
	switch string(b) {
	case "ok":
		*o = OK
	case "fail":
		*o = Fail
	case "unknown":
		*o = Unknown
	default:
		return fmt.Errorf("jepsen: outcome %q", b)
	}
	return nil
}

// Kind names an operation type.
type Kind string

// Operation kinds. Writes first, then reads.
const (
	CfgPut   Kind = "cfg.put"   // POST /v1/cs/configs
	CfgCAS   Kind = "cfg.cas"   // the same with header casMd5
	CfgDel   Kind = "cfg.del"   // DELETE /v1/cs/configs
	BetaPut  Kind = "beta.put"  // POST /v1/cs/configs with header betaIps
	BetaStop Kind = "beta.stop" // DELETE /v1/cs/configs?beta=true
	PIReg    Kind = "pi.reg"    // POST /v1/ns/instance ephemeral=false
	PIDereg  Kind = "pi.dereg"  // DELETE /v1/ns/instance ephemeral=false
	PIMeta   Kind = "pi.meta"   // PUT /v1/ns/instance/metadata/batch
	SvcPut   Kind = "svc.put"   // PUT /v1/ns/service (metadata, protectThreshold)
	PISvcPut Kind = "pi.svcput" // PUT /v1/ns/service on a service the client just registered in
	EphReg   Kind = "eph.reg"   // POST /v1/ns/instance ephemeral=true
	EphBeat  Kind = "eph.beat"  // PUT /v1/ns/instance/beat
	EphDereg Kind = "eph.dereg" // DELETE /v1/ns/instance ephemeral=true (a beater shutting down)

	CfgGet  Kind = "cfg.get"  // GET /v1/cs/configs
	BetaGet Kind = "beta.get" // GET /v1/cs/configs?beta=true
	PIList  Kind = "pi.list"  // GET /v1/ns/instance/list (persistent services)
	SvcGet  Kind = "svc.get"  // GET /v1/ns/service
	EphList Kind = "eph.list" // GET /v1/ns/instance/list (ephemeral services)
)

// IsRead reports whether the kind only reads.
func (k Kind) IsRead() bool {
	switch k {
	case CfgGet, BetaGet, PIList, SvcGet, EphList:
		return true
	}
	return false
}

// IsCP reports whether the kind is a write decided by raft.
func (k Kind) IsCP() bool {
	switch k {
	case CfgPut, CfgCAS, CfgDel, BetaPut, BetaStop, PIReg, PIDereg, PIMeta, SvcPut, PISvcPut:
		return true
	}
	return false
}

// Slot is one persistent instance as a list shows it: V is the value of
// its metadata key "v" (set by its registration, unique per register op),
// M of key "m" (set by a metadata batch, unique per batch op).
type Slot struct {
	P bool   `json:"p,omitempty"`
	V string `json:"v,omitempty"`
	M string `json:"m,omitempty"`
}

// Op is one recorded operation.
type Op struct {
	ID      int    `json:"id"`
	Client  int    `json:"client"`  // worker; samplers are 1000+node, final reads 2000+node, setup 0
	Session int    `json:"session"` // a run of ops of one client on one node
	Node    int    `json:"node"`
	Kind    Kind   `json:"kind"`
	Key     string `json:"key"`            // config dataId or service name
	Slot    int    `json:"slot,omitempty"` // pi.reg/pi.dereg: instance slot; eph: beater
	Mask    uint8  `json:"mask,omitempty"` // pi.meta: slots listed
	// AllPersist: pi.meta sent consistencyType=persist (every persistent
	// instance, Mask has every slot) instead of a list of instances
	AllPersist bool   `json:"allPersist,omitempty"`
	Value      string `json:"value,omitempty"` // written value
	CAS        string `json:"cas,omitempty"`   // cfg.cas: the casMd5 sent
	// Proto is "grpc" for an op a Nacos 2.x client's request carried
	// (grpc.go); "" for HTTP
	Proto string `json:"proto,omitempty"`

	Invoke   int64   `json:"invoke"`   // ns since the run started (monotonic)
	Complete int64   `json:"complete"` // ns; math.MaxInt64 while pending
	Outcome  Outcome `json:"outcome"`
	Status   int     `json:"status,omitempty"`
	Err      string  `json:"err,omitempty"` // transport error or body of a failure

	// results
	Found   bool            `json:"found,omitempty"`   // reads of a register: present
	Read    string          `json:"read,omitempty"`    // reads of a register: value
	Slots   []Slot          `json:"slots,omitempty"`   // pi.list: by slot
	Updated uint8           `json:"updated,omitempty"` // pi.meta: slots the answer names
	Insts   map[string]bool `json:"insts,omitempty"`   // eph.list: instance ip:port → present
	Extra   int             `json:"extra,omitempty"`   // pi.list: hosts outside the slots
}

// Pending reports whether the op never completed (the run stopped first).
func (o *Op) Pending() bool { return o.Complete == math.MaxInt64 }

// Done is the completion time, or +inf for an unknown outcome: an op
// whose outcome is unknown may take effect at any time after its
// invocation.
func (o *Op) Done() int64 {
	if o.Outcome == Unknown {
		return math.MaxInt64
	}
	return o.Complete
}

func (o *Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "op %d c%d n%d %s %s", o.ID, o.Client, o.Node+1, o.Kind, o.Key)
	if o.Proto != "" {
		fmt.Fprintf(&b, " over %s", o.Proto)
	}
	switch o.Kind {
	case PIReg, PIDereg:
		fmt.Fprintf(&b, "#%d", o.Slot)
	case PIMeta:
		fmt.Fprintf(&b, " slots=%s", maskString(o.Mask))
	}
	if o.Value != "" {
		fmt.Fprintf(&b, " %q", o.Value)
	}
	if o.CAS != "" {
		fmt.Fprintf(&b, " cas=%.8s", o.CAS)
	}
	fmt.Fprintf(&b, " [%s, %s] %s", fmtT(o.Invoke), fmtT(o.Complete), o.Outcome)
	if o.Status != 0 {
		fmt.Fprintf(&b, " %d", o.Status)
	}
	if o.Outcome == OK && o.Kind.IsRead() {
		switch o.Kind {
		case PIList:
			fmt.Fprintf(&b, " -> %s", slotsString(o.Slots))
		case EphList:
			fmt.Fprintf(&b, " -> %d instances", len(o.Insts))
		default:
			if o.Found {
				fmt.Fprintf(&b, " -> %q", o.Read)
			} else {
				b.WriteString(" -> absent")
			}
		}
	}
	if o.Kind == PIMeta && o.Outcome == OK {
		fmt.Fprintf(&b, " updated=%s", maskString(o.Updated))
	}
	if o.Err != "" {
		fmt.Fprintf(&b, " (%.160s)", o.Err)
	}
	return b.String()
}

func maskString(m uint8) string {
	var s []string
	for i := 0; i < 8; i++ {
		if m&(1<<i) != 0 {
			s = append(s, fmt.Sprint(i))
		}
	}
	return "{" + strings.Join(s, ",") + "}"
}

func slotsString(s []Slot) string {
	var parts []string
	for i, x := range s {
		if x.P {
			p := fmt.Sprintf("%d:%s", i, x.V)
			if x.M != "" {
				p += "/" + x.M
			}
			parts = append(parts, p)
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// fmtT renders a history time as seconds since the start.
func fmtT(t int64) string {
	if t == math.MaxInt64 {
		return "∞"
	}
	return fmt.Sprintf("%.3fs", float64(t)/1e9)
}

// Event is something the nemesis did or saw.
type Event struct {
	T    int64  `json:"t"`
	Kind string `json:"kind"` // kill, ready, stop, cont, partition, heal, fault, healed
	Node int    `json:"node"`
	Note string `json:"note,omitempty"`
}

// Event kinds.
const (
	EvKill      = "kill"      // SIGKILL sent
	EvReady     = "ready"     // a (re)started node answers its liveness probe
	EvStop      = "stop"      // SIGSTOP sent
	EvCont      = "cont"      // SIGCONT sent
	EvPartition = "partition" // the node cut off from the other members
	EvHeal      = "heal"      // the partition removed
	EvFault     = "fault"     // a fault of the schedule begins (Note: its label)
	EvHealed    = "healed"    // it ended (Node: the node that was faulted)
)

// LeaderObs is one poll of a node's own view of the raft leader.
type LeaderObs struct {
	Invoke   int64  `json:"invoke"`
	Complete int64  `json:"complete"`
	Node     int    `json:"node"`
	Leader   int    `json:"leader"` // node index, -1 none or unknown
	Term     uint64 `json:"term"`
}

// Beater is one ephemeral instance kept alive by beats.
type Beater struct {
	ID      int    `json:"id"`
	Service string `json:"service"`
	Inst    string `json:"inst"`    // ip:port
	StopAt  int64  `json:"stopAt"`  // planned stop (0: beats until the end)
	Stopped int64  `json:"stopped"` // when it stopped beating (0: never)
	// Deregister: at its stop it deregisters the instance, as a client
	// shutting down does, right after a beat
	Deregister bool `json:"deregister,omitempty"`
	// GRPC: a Nacos 2.x client's instance, kept by its connection (grpc.go)
	GRPC bool `json:"grpc,omitempty"`
}

// Recorder collects a run's history. Safe for concurrent use.
type Recorder struct {
	start time.Time

	mu      sync.Mutex
	ops     []*Op
	events  []Event
	leaders []LeaderObs
	session int
}

// NewRecorder starts the clock.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Now is the time since the start in ns (monotonic clock).
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// NewSession returns a fresh session id.
func (r *Recorder) NewSession() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.session++
	return r.session
}

// Invoke records the start of op and assigns its id.
func (r *Recorder) Invoke(op *Op) {
	r.mu.Lock()
	op.ID = len(r.ops) + 1
	op.Complete = math.MaxInt64
	op.Outcome = Unknown
	op.Invoke = r.Now()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// Complete records the end of op; the caller has filled its results.
func (r *Recorder) Complete(op *Op, o Outcome) {
	t := r.Now()
	r.mu.Lock()
	op.Complete = t
	op.Outcome = o
	r.mu.Unlock()
}

// Event records a nemesis event now and returns its time.
func (r *Recorder) Event(kind string, node int, note string) int64 {
	t := r.Now()
	r.mu.Lock()
	r.events = append(r.events, Event{T: t, Kind: kind, Node: node, Note: note})
	r.mu.Unlock()
	return t
}

// Leader records a leader poll.
func (r *Recorder) Leader(o LeaderObs) {
	r.mu.Lock()
	r.leaders = append(r.leaders, o)
	r.mu.Unlock()
}

// Run is everything a check needs: the history and the run's facts.
type Run struct {
	Seed     uint64        `json:"seed"`
	Duration time.Duration `json:"duration"`
	Nodes    int           `json:"nodes"`
	Clients  int           `json:"clients"`
	// CASHonoured: the server refused a publish whose casMd5 did not
	// match (Nacos 2.x); 1.4.8 ignores the header, and then a CAS publish
	// is checked as a plain publish.
	CASHonoured bool `json:"casHonoured"`
	// GRPCShare is the percent of worker sessions that were Nacos 2.x
	// (gRPC) ones
	GRPCShare   int         `json:"grpcShare"`
	Ops         []*Op       `json:"ops"`
	Events      []Event     `json:"events"`
	Leaders     []LeaderObs `json:"leaders"`
	Beaters     []Beater    `json:"beaters"`
	Schedule    []Fault     `json:"schedule"`
	End         int64       `json:"end"`         // the workload stopped
	Final       int64       `json:"final"`       // the final reads
	Converged   int64       `json:"converged"`   // all nodes identical (-1: never)
	FinalDiff   string      `json:"finalDiff"`   // how they differed when they did not converge
	PISlots     int         `json:"piSlots"`     // instance slots per persistent service
	ConfigKeys  []string    `json:"configKeys"`  // dataIds
	PIServices  []string    `json:"piServices"`  // persistent instance services
	SvcServices []string    `json:"svcServices"` // service metadata services
}

// Snapshot copies the recorder's history into run, sorted by invocation.
func (r *Recorder) Snapshot(run *Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run.Ops = make([]*Op, len(r.ops))
	for i, o := range r.ops {
		c := *o
		run.Ops[i] = &c
	}
	sort.SliceStable(run.Ops, func(i, j int) bool { return run.Ops[i].Invoke < run.Ops[j].Invoke })
	run.Events = append([]Event(nil), r.events...)
	sort.SliceStable(run.Events, func(i, j int) bool { return run.Events[i].T < run.Events[j].T })
	run.Leaders = append([]LeaderObs(nil), r.leaders...)
}

// Save writes the run as JSON (NACOSD_JEPSEN_REPLAY re-checks it).
func (run *Run) Save(path string) error {
	b, err := json.Marshal(run)
	if err != nil {
		return fmt.Errorf("jepsen: encode run: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("jepsen: save run: %w", err)
	}
	return nil
}

// LoadRun reads a saved run.
func LoadRun(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("jepsen: load run: %w", err)
	}
	var run Run
	if err := json.Unmarshal(b, &run); err != nil {
		return nil, fmt.Errorf("jepsen: decode run %s: %w", path, err)
	}
	return &run, nil
}
