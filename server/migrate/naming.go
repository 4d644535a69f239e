package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
)

// Naming data as the console API (/v1/ns/catalog/*) shows it on Java Nacos
// and nacosd alike.
type (
	serviceList struct {
		Count       int `json:"count"`
		ServiceList []struct {
			Name      string `json:"name"`
			GroupName string `json:"groupName"`
		} `json:"serviceList"`
	}
	serviceDetail struct {
		Service struct {
			Name             string            `json:"name"`
			GroupName        string            `json:"groupName"`
			ProtectThreshold json.Number       `json:"protectThreshold"`
			Selector         map[string]any    `json:"selector"`
			Metadata         map[string]string `json:"metadata"`
		} `json:"service"`
		Clusters []clusterDetail `json:"clusters"`
	}
	clusterDetail struct {
		Name            string            `json:"name"`
		HealthChecker   map[string]any    `json:"healthChecker"`
		DefCkport       int               `json:"defCkport"`
		UseIPPort4Check bool              `json:"useIPPort4Check"`
		Metadata        map[string]string `json:"metadata"`
	}
	instanceList struct {
		Count int        `json:"count"`
		List  []instance `json:"list"`
	}
	instance struct {
		IP          string            `json:"ip"`
		Port        int               `json:"port"`
		Weight      json.Number       `json:"weight"`
		Healthy     bool              `json:"healthy"`
		Enabled     bool              `json:"enabled"`
		Ephemeral   bool              `json:"ephemeral"`
		ClusterName string            `json:"clusterName"`
		Metadata    map[string]string `json:"metadata"`
		LastBeat    int64             `json:"lastBeat"`
	}
)

// service is one service with what nacosd migrate copies of it.
type service struct {
	namespace, group, name string
	detail                 serviceDetail
	instances              []instance // persistent ones
	ephemeral              int
}

func (s service) String() string {
	ns := s.namespace
	if ns == "" {
		ns = "public"
	}
	return ns + "/" + s.group + "@@" + s.name
}

// listServices reads every service of the namespaces from a Java Nacos.
func listServices(ctx context.Context, c *client, namespaces []string, fn func(service) error) error {
	for _, ns := range namespaces {
		var names [][2]string
		for page := 1; ; page++ {
			var sl serviceList
			q := url.Values{"pageNo": {strconv.Itoa(page)}, "pageSize": {"100"}, "namespaceId": {ns}}
			if err := c.get(ctx, "/v1/ns/catalog/services", q, &sl); err != nil {
				return fmt.Errorf("migrate: list services of namespace %q: %w", ns, err)
			}
			for _, s := range sl.ServiceList {
				names = append(names, [2]string{s.GroupName, s.Name})
			}
			if len(sl.ServiceList) == 0 || page*100 >= sl.Count {
				break
			}
		}
		for _, gn := range names {
			s := service{namespace: ns, group: gn[0], name: gn[1]}
			d, err := readService(ctx, c, ns, gn[0], gn[1])
			if err != nil {
				return err
			}
			s.detail = *d
			all, err := readInstances(ctx, c, ns, gn[0], gn[1], d.Clusters)
			if err != nil {
				return err
			}
			for _, in := range all {
				if in.Ephemeral {
					s.ephemeral++
				} else {
					s.instances = append(s.instances, in)
				}
			}
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// readService is GET /v1/ns/catalog/service; nil, nil when absent.
func readService(ctx context.Context, c *client, ns, group, name string) (*serviceDetail, error) {
	var d serviceDetail
	q := url.Values{"serviceName": {name}, "groupName": {group}, "namespaceId": {ns}}
	if err := c.get(ctx, "/v1/ns/catalog/service", q, &d); err != nil {
		if isStatus(err, 400) || isStatus(err, 404) || isStatus(err, 500) {
			return nil, nil // "service ... is not found!"
		}
		return nil, fmt.Errorf("migrate: read service %s@@%s of %q: %w", group, name, ns, err)
	}
	return &d, nil
}

func readInstances(ctx context.Context, c *client, ns, group, name string, clusters []clusterDetail) ([]instance, error) {
	var out []instance
	for _, cl := range clusters {
		for page := 1; ; page++ {
			var il instanceList
			q := url.Values{"serviceName": {name}, "groupName": {group}, "namespaceId": {ns}, "clusterName": {cl.Name},
				"pageNo": {strconv.Itoa(page)}, "pageSize": {"500"}}
			if err := c.get(ctx, "/v1/ns/catalog/instances", q, &il); err != nil {
				return nil, fmt.Errorf("migrate: list instances of %s@@%s cluster %s: %w", group, name, cl.Name, err)
			}
			out = append(out, il.List...)
			if len(il.List) == 0 || page*500 >= il.Count {
				break
			}
		}
	}
	return out, nil
}

// copyService makes the target's service, clusters and persistent
// instances equal to the source's (nothing is removed).
func copyService(ctx context.Context, to *client, s service, dry bool, sum *Summary) error {
	cur, err := readService(ctx, to, s.namespace, s.group, s.name)
	if err != nil {
		return err
	}
	src := s.detail.Service
	meta, _ := json.Marshal(nonNilMap(src.Metadata))
	sel := selectorParam(src.Selector)
	q := url.Values{"serviceName": {s.name}, "groupName": {s.group}, "namespaceId": {s.namespace},
		"protectThreshold": {src.ProtectThreshold.String()}, "metadata": {string(meta)}, "selector": {sel}}
	switch {
	case cur == nil:
		if !dry {
			if err := to.send(ctx, "POST", "/v1/ns/service", q, nil); err != nil {
				sum.skip(KindServices, s.String(), err.Error())
				return nil
			}
		}
		sum.add(KindServices, outcomeCreated)
	case sameService(cur, s.detail):
		sum.add(KindServices, outcomeUnchanged)
	default:
		if !dry {
			if err := to.send(ctx, "PUT", "/v1/ns/service", q, nil); err != nil {
				sum.skip(KindServices, s.String(), err.Error())
				return nil
			}
		}
		sum.add(KindServices, outcomeUpdated)
	}
	var curClusters map[string]clusterDetail
	if cur != nil {
		curClusters = map[string]clusterDetail{}
		for _, c := range cur.Clusters {
			curClusters[c.Name] = c
		}
	}
	grouped := s.group + "@@" + s.name
	for _, cl := range s.detail.Clusters {
		old, ok := curClusters[cl.Name]
		if ok && sameCluster(old, cl) {
			sum.add(KindClusters, outcomeUnchanged)
			continue
		}
		hc, _ := json.Marshal(cl.HealthChecker)
		cm, _ := json.Marshal(nonNilMap(cl.Metadata))
		q := url.Values{"serviceName": {grouped}, "namespaceId": {s.namespace}, "clusterName": {cl.Name},
			"checkPort": {strconv.Itoa(cl.DefCkport)}, "useInstancePort4Check": {strconv.FormatBool(cl.UseIPPort4Check)},
			"healthChecker": {string(hc)}, "metadata": {string(cm)}}
		if !dry {
			if err := to.send(ctx, "PUT", "/v1/ns/cluster", q, nil); err != nil {
				sum.skip(KindClusters, s.String()+" cluster "+cl.Name, err.Error())
				continue
			}
		}
		sum.add(KindClusters, map[bool]string{true: outcomeUpdated, false: outcomeCreated}[ok])
	}
	var have map[string]instance
	if cur != nil {
		list, err := readInstances(ctx, to, s.namespace, s.group, s.name, cur.Clusters)
		if err != nil {
			return err
		}
		have = map[string]instance{}
		for _, in := range list {
			if !in.Ephemeral {
				have[instKey(in)] = in
			}
		}
	}
	for _, in := range s.instances {
		old, ok := have[instKey(in)]
		if ok && sameInstance(old, in) {
			sum.add(KindInstances, outcomeUnchanged)
			continue
		}
		im, _ := json.Marshal(nonNilMap(in.Metadata))
		q := url.Values{"serviceName": {s.name}, "groupName": {s.group}, "namespaceId": {s.namespace}, "ip": {in.IP},
			"port": {strconv.Itoa(in.Port)}, "clusterName": {in.ClusterName}, "weight": {in.Weight.String()},
			"enabled": {strconv.FormatBool(in.Enabled)}, "healthy": {strconv.FormatBool(in.Healthy)},
			"ephemeral": {"false"}, "metadata": {string(im)}}
		method := "POST"
		if ok {
			method = "PUT"
		}
		if !dry {
			if err := to.send(ctx, method, "/v1/ns/instance", q, nil); err != nil {
				sum.skip(KindInstances, s.String()+" "+instKey(in), err.Error())
				continue
			}
		}
		sum.add(KindInstances, map[bool]string{true: outcomeUpdated, false: outcomeCreated}[ok])
	}
	return nil
}

func instKey(in instance) string {
	return in.IP + ":" + strconv.Itoa(in.Port) + "#" + in.ClusterName
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// selectorParam is the selector as POST /v1/ns/service takes it.
func selectorParam(sel map[string]any) string {
	if t, _ := sel["type"].(string); t == "label" {
		b, _ := json.Marshal(map[string]any{"type": "label", "expression": sel["expression"]})
		return string(b)
	}
	return `{"type":"none"}`
}

func sameService(a *serviceDetail, b serviceDetail) bool {
	fa, _ := a.Service.ProtectThreshold.Float64()
	fb, _ := b.Service.ProtectThreshold.Float64()
	return fa == fb && reflect.DeepEqual(nonNilMap(a.Service.Metadata), nonNilMap(b.Service.Metadata)) &&
		selectorParam(a.Service.Selector) == selectorParam(b.Service.Selector)
}

func sameCluster(a, b clusterDetail) bool {
	ha, _ := json.Marshal(a.HealthChecker)
	hb, _ := json.Marshal(b.HealthChecker)
	return string(ha) == string(hb) && a.DefCkport == b.DefCkport && a.UseIPPort4Check == b.UseIPPort4Check &&
		reflect.DeepEqual(nonNilMap(a.Metadata), nonNilMap(b.Metadata))
}

func sameInstance(a, b instance) bool {
	wa, _ := a.Weight.Float64()
	wb, _ := b.Weight.Float64()
	return wa == wb && a.Enabled == b.Enabled && reflect.DeepEqual(nonNilMap(a.Metadata), nonNilMap(b.Metadata))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
