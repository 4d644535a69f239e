// Package serviceinfo renders a service as the Nacos 2.x API shows it
// (api/naming/pojo/ServiceInfo): the hosts in Java's HashSet order, their
// metadata in the order of the HashMap Java builds, filtered and
// protected by ServiceUtil.selectInstancesWithHealthyProtection. The gRPC
// edge and the HTTP Open API v2 share it.
package serviceinfo

import (
	"sort"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/naming"
)

// Selection is what ServiceUtil.selectInstancesWithHealthyProtection is
// asked for, with the names the answer carries.
type Selection struct {
	Clusters    string // comma-separated; "" all
	HealthyOnly bool
	EnabledOnly bool
	// Name and Group of the answer (HasName, HasGroup false: null).
	Name, Group       string
	HasName, HasGroup bool
}

// Render renders a service's instances as Java 2.5.1's ServiceInfo
// (ServiceStorage.getData + ServiceUtil.selectInstancesWithHealthyProtection):
// the hosts in the order of the HashSet Java collects them in, filtered by
// cluster and enabled (and health when asked), and with the protect
// threshold applied for services with metadata. name and group are null
// when the request had none.
func Render(v naming.ServiceView, found bool, sel Selection, cacheMillis, now int64) *remote.ServiceInfo {
	si := &remote.ServiceInfo{Name: sel.Name, GroupName: sel.Group, HasName: sel.HasName, HasGroup: sel.HasGroup,
		Clusters: sel.Clusters, CacheMillis: cacheMillis, LastRefTime: now, Hosts: []remote.Instance{}}
	if !found || len(v.Instances) == 0 {
		return si
	}
	all := javaHosts(v)
	var want map[string]bool
	if !compat.JavaIsBlank(sel.Clusters) {
		want = map[string]bool{}
		for _, c := range strings.Split(sel.Clusters, ",") {
			want[c] = true
		}
	}
	var healthy int
	selected := make([]remote.Instance, 0, len(all))
	for _, in := range all {
		if want != nil && !want[in.ClusterName] || sel.EnabledOnly && !in.Enabled {
			continue
		}
		if !sel.HealthyOnly || in.Healthy {
			selected = append(selected, in)
		}
		if in.Healthy {
			healthy++
		}
	}
	si.Hosts = selected
	if !v.HasMeta || len(selected) == 0 {
		return si
	}
	// the filter only runs when the service has metadata: the healthy
	// share is the healthy ones among the cluster's enabled instances over
	// the hosts selected (Java's healthyCount and allInstances)
	threshold := v.ProtectThreshold
	if threshold < 0 {
		threshold = 0
	}
	if float32(healthy)/float32(len(selected)) <= threshold {
		si.ReachProtectionThreshold = true
		for i := range si.Hosts {
			si.Hosts[i].Healthy = true
		}
	}
	return si
}

// javaHosts converts a service's instances to the API's Instance in the
// order Java lists them: a HashSet<Instance> (default capacity) whose
// hashCode is toString's, filled client by client (nacosd has no clients:
// the instances are inserted by registration order, which only matters
// for hash collisions).
func javaHosts(v naming.ServiceView) []remote.Instance {
	ins := append([]naming.Instance(nil), v.Instances...)
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].DatumKey() < ins[j].DatumKey() })
	out := make([]remote.Instance, 0, len(ins))
	seen := map[string]bool{}
	for i := range ins {
		in := apiInstance(&ins[i], v.Service)
		s := in.JavaString()
		if seen[s] { // equal instances are one in the set
			continue
		}
		seen[s] = true
		out = append(out, in)
	}
	hashes := make([]int32, len(out))
	for i := range out {
		hashes[i] = compat.JavaStringHash(out[i].JavaString())
	}
	ordered := make([]remote.Instance, len(out))
	for i, j := range compat.JavaHashOrder(hashes, 16) {
		ordered[i] = out[j]
	}
	return ordered
}

// Keys InstancePublishInfo keeps beside the metadata (naming Constants).
const (
	extCustomInstanceID = "customInstanceId"
	extWeight           = "publishInstanceWeight"
	extEnabled          = "publishInstanceEnable"
)

// apiInstance is InstanceUtil.parseToApiInstance of an instance: its
// metadata in the order of the HashMap Java builds it in (sized by the
// publish info's extended data, filled from that map's iteration).
func apiInstance(in *naming.Instance, grouped string) remote.Instance {
	out := remote.Instance{InstanceID: in.InstanceID, HasInstanceID: in.InstanceID != "", IP: in.IP, HasIP: true, Port: in.Port,
		Weight: in.Weight, Healthy: in.Healthy, Enabled: in.Enabled, Ephemeral: in.Ephemeral, ClusterName: in.ClusterName,
		HasCluster: true, ServiceName: grouped, HasService: true, Metadata: in.Metadata}
	if out.Metadata == nil {
		out.Metadata = map[string]string{}
	}
	out.MetaOrder = metadataOrder(out.Metadata, in.InstanceID != "", in.Weight != 1, !in.Enabled)
	return out
}

// metadataOrder orders metadata keys as parseToApiInstance's HashMap holds
// them: created with the size of the publish info's extended data (the
// metadata plus the instance id, weight and enabled flags kept there),
// filled in that map's iteration order.
func metadataOrder(meta map[string]string, id, weight, disabled bool) []string {
	ext := make([]string, 0, len(meta)+3)
	for k := range meta {
		ext = append(ext, k)
	}
	sort.Strings(ext)
	for _, x := range []struct {
		on  bool
		key string
	}{{id, extCustomInstanceID}, {weight, extWeight}, {disabled, extEnabled}} {
		if x.on {
			if _, clash := meta[x.key]; !clash {
				ext = append(ext, x.key)
			}
		}
	}
	ext = compat.JavaHashOrderStrings(ext, 1) // extendDatum: new HashMap<>(1)
	keys := ext[:0:0]
	for _, k := range ext {
		if _, ok := meta[k]; ok && k != extCustomInstanceID && k != extWeight && k != extEnabled {
			keys = append(keys, k)
		}
	}
	return compat.JavaHashOrderStrings(keys, len(ext))
}
