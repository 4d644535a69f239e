package jepsen

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The porcupine models. One partition is one config's content, one
// config's beta, one service's metadata (each a register whose writes
// replace the value and whose deletes make it absent; a CAS publish
// replaces it when the stored content's MD5 is the casMd5 sent, or when
// there is none, as Nacos 2.x's insertOrUpdateCas) or one instance slot
// of a persistent service (absent, or registered with metadata v, plus
// the metadata m a batch merged in).

type regInput struct {
	op    byte // 'w' write, 'c' CAS write, 'd' delete, 'r' read
	value string
	cas   string
}

type regOutput struct {
	unknown bool // the write's outcome is unknown
	refused bool // a CAS write definitely refused
	found   bool
	value   string
}

type regState struct {
	present bool
	value   string
}

// MD5Hex is the config MD5 Nacos computes: lowercase hex of the UTF-8
// content.
func MD5Hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func regStep(state, input, output any) (bool, any) {
	s := state.(regState)
	in := input.(regInput)
	out := output.(regOutput)
	switch in.op {
	case 'w':
		return true, regState{true, in.value}
	case 'd':
		return true, regState{}
	case 'c':
		match := !s.present || MD5Hex(s.value) == in.cas
		switch {
		case out.unknown:
			if match {
				return true, regState{true, in.value}
			}
			return true, s
		case out.refused:
			return !match, s
		default:
			return match, regState{true, in.value}
		}
	default:
		if out.found != s.present || (out.found && out.value != s.value) {
			return false, s
		}
		return true, s
	}
}

func describeReg(input, output any) string {
	in := input.(regInput)
	out := output.(regOutput)
	suffix := ""
	if out.unknown {
		suffix = " ?"
	}
	switch in.op {
	case 'w':
		return fmt.Sprintf("put(%s)%s", in.value, suffix)
	case 'd':
		return "delete" + suffix
	case 'c':
		if out.refused {
			return fmt.Sprintf("cas(%.8s, %s) refused", in.cas, in.value)
		}
		return fmt.Sprintf("cas(%.8s, %s)%s", in.cas, in.value, suffix)
	}
	if !out.found {
		return "get -> absent"
	}
	return "get -> " + out.value
}

var regModel = porcupine.Model{
	Init:              func() any { return regState{} },
	Step:              regStep,
	DescribeOperation: describeReg,
	DescribeState: func(state any) string {
		s := state.(regState)
		if !s.present {
			return "absent"
		}
		return s.value
	},
}

type slotInput struct {
	op    byte // 'g' register, 'u' deregister, 'm' metadata batch naming the slot, 'l' list
	value string
}

type slotOutput struct {
	unknown bool
	updated bool // 'm': the answer names the slot
	slot    Slot // 'l': what the list shows of the slot
}

func slotStep(state, input, output any) (bool, any) {
	s := state.(Slot)
	in := input.(slotInput)
	out := output.(slotOutput)
	switch in.op {
	case 'g':
		return true, Slot{P: true, V: in.value}
	case 'u':
		return true, Slot{}
	case 'm':
		if out.unknown {
			if s.P {
				s.M = in.value
			}
			return true, s
		}
		if out.updated != s.P {
			return false, s
		}
		if s.P {
			s.M = in.value
		}
		return true, s
	default:
		return out.slot == s, s
	}
}

func describeSlot(input, output any) string {
	in := input.(slotInput)
	out := output.(slotOutput)
	suffix := ""
	if out.unknown {
		suffix = " ?"
	}
	switch in.op {
	case 'g':
		return fmt.Sprintf("register(%s)%s", in.value, suffix)
	case 'u':
		return "deregister" + suffix
	case 'm':
		if out.unknown {
			return fmt.Sprintf("batch(%s) ?", in.value)
		}
		return fmt.Sprintf("batch(%s) -> updated %v", in.value, out.updated)
	}
	return "list -> " + slotString(out.slot)
}

func slotString(s Slot) string {
	if !s.P {
		return "absent"
	}
	if s.M == "" {
		return s.V
	}
	return s.V + "/" + s.M
}

var slotModel = porcupine.Model{
	Init:              func() any { return Slot{} },
	Step:              slotStep,
	DescribeOperation: describeSlot,
	DescribeState:     func(state any) string { return slotString(state.(Slot)) },
}

// partitionsOf names the porcupine partitions an op belongs to: one
// register, or for the persistent instances one slot of a service (a
// list belongs to every slot of its service, a batch to the slots it
// names). Checking each instance slot on its own leaves out whether a
// list is an atomic snapshot of all slots, and keeps the search small.
func partitionsOf(op *Op, slots int) []string {
	switch op.Kind {
	case CfgPut, CfgCAS, CfgDel, CfgGet:
		return []string{viewCfg(op.Key)}
	case BetaPut, BetaStop, BetaGet:
		return []string{viewBeta(op.Key)}
	case SvcPut, SvcGet:
		return []string{viewSvc(op.Key)}
	case PIReg, PIDereg:
		return []string{slotPartition(op.Key, op.Slot)}
	case PIMeta, PIList:
		var out []string
		for i := 0; i < slots; i++ {
			if op.Kind == PIList || op.Mask&(1<<i) != 0 {
				out = append(out, slotPartition(op.Key, i))
			}
		}
		return out
	}
	return nil
}

func slotPartition(svc string, slot int) string { return fmt.Sprintf("pi/%s#%d", svc, slot) }

// modelOf is the model of a partition.
func modelOf(partition string) porcupine.Model {
	if strings.HasPrefix(partition, "pi/") {
		return slotModel
	}
	return regModel
}

// slotOf is the slot of a slot partition.
func slotOf(partition string) int {
	i := strings.LastIndexByte(partition, '#')
	n := 0
	for _, c := range partition[i+1:] {
		n = n*10 + int(c-'0')
	}
	return n
}

// porcupineOp converts an op for one partition; ok is false when the op
// does not belong in a model history (a definitely failed write, a
// failed read).
func porcupineOp(op *Op, partition string, casHonoured bool) (in, out any, ok bool) {
	unknown := op.Outcome == Unknown
	if op.Kind.IsRead() && op.Outcome != OK {
		return nil, nil, false
	}
	if !op.Kind.IsRead() && op.Outcome == Fail && !(op.Kind == CfgCAS && casHonoured && casRefused(op)) {
		return nil, nil, false
	}
	switch op.Kind {
	case CfgPut, BetaPut, SvcPut:
		return regInput{op: 'w', value: op.Value}, regOutput{unknown: unknown}, true
	case CfgCAS:
		if !casHonoured {
			return regInput{op: 'w', value: op.Value}, regOutput{unknown: unknown}, true
		}
		return regInput{op: 'c', value: op.Value, cas: op.CAS}, regOutput{unknown: unknown, refused: op.Outcome == Fail}, true
	case CfgDel, BetaStop:
		return regInput{op: 'd'}, regOutput{unknown: unknown}, true
	case CfgGet, BetaGet, SvcGet:
		return regInput{op: 'r'}, regOutput{found: op.Found, value: op.Read}, true
	case PIReg:
		return slotInput{op: 'g', value: op.Value}, slotOutput{unknown: unknown}, true
	case PIDereg:
		return slotInput{op: 'u'}, slotOutput{unknown: unknown}, true
	case PIMeta:
		i := slotOf(partition)
		return slotInput{op: 'm', value: op.Value}, slotOutput{unknown: unknown, updated: op.Updated&(1<<i) != 0}, true
	case PIList:
		i := slotOf(partition)
		var s Slot
		if i < len(op.Slots) {
			s = op.Slots[i]
		}
		return slotInput{op: 'l'}, slotOutput{slot: s}, true
	}
	return nil, nil, false
}

// CASRefusedPrefix starts the Err of a CAS publish the server refused
// because the stored MD5 differed (Nacos 2.x: 500 "Cas publish fail,
// server md5 may have changed."): a definite refusal that says the
// stored content was not the one expected.
const CASRefusedPrefix = "cas refused: "

func casRefused(op *Op) bool {
	return op.Outcome == Fail && strings.HasPrefix(op.Err, CASRefusedPrefix)
}

// returnTime is when porcupine must have linearized op: its completion,
// or for an unknown outcome its invocation plus the horizon (0: never).
func returnTime(op *Op, horizon time.Duration) int64 {
	if op.Outcome == Unknown {
		if horizon > 0 {
			r := op.Invoke + int64(horizon)
			if op.Complete != math.MaxInt64 && op.Complete > r {
				r = op.Complete
			}
			return r
		}
		return math.MaxInt64 / 2 // room for the visualization's arithmetic
	}
	return op.Complete
}
